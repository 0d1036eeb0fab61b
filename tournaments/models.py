"""Clubs, their members, seasons and soirées, registrations and the tables of an evening.

A soirée's tables each play one partie at a time (``games.Partie``); tournaments only sets the
parties up and reads their results: games knows nothing of soirées.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import pgtrigger
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy

from games.models import default_share_window


def _valid_time_zone(name: str) -> None:
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValidationError(_("%(name)s is not a time zone (e.g. Europe/Paris)"),
                              params={"name": repr(name)}) from None


class Club(models.Model):
    name = models.CharField(verbose_name=_("name"), max_length=100)
    slug = models.SlugField(verbose_name=_("key"), max_length=64, unique=True,
                            help_text=_("Also the club's key in the chip ledger"))
    time_zone = models.CharField(
        verbose_name=_("time zone"), max_length=64, default="Europe/Paris",
        validators=[_valid_time_zone],
        help_text=_("Every page, sheet and the demo show the club's times in this zone"))
    created_at = models.DateTimeField(verbose_name=_("created at"), auto_now_add=True)

    class Meta:
        verbose_name = pgettext_lazy("players' club", "club")
        verbose_name_plural = pgettext_lazy("players' club", "clubs")

    def __str__(self) -> str:
        return self.name

    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.time_zone)


class Membership(models.Model):
    class Role(models.TextChoices):
        ORGANISER = "organiser", _("organiser")
        PLAYER = "player", _("player")
        AUDITOR = "auditor", _("auditor")

    club = models.ForeignKey(Club, verbose_name=pgettext_lazy("players' club", "club"),
                             on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, verbose_name=_("member"),
                             on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(verbose_name=_("role"), max_length=16, choices=Role.choices,
                            default=Role.PLAYER)
    joined_at = models.DateTimeField(verbose_name=_("joined at"), auto_now_add=True)
    #: The secret of this member's private calendar feed (``/calendar/<token>.ics``); revoking
    #: the feed replaces it, so the old address answers 404. Empty until the feed is first asked.
    calendar_token = models.CharField(verbose_name=_("calendar token"), max_length=64,
                                      unique=True, null=True, blank=True, editable=False)

    class Meta:
        verbose_name = _("membership")
        verbose_name_plural = _("memberships")
        ordering = ["club", "user__username", "role"]
        constraints = [
            models.UniqueConstraint(fields=["club", "user", "role"], name="membership_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.user} ({self.role}) at {self.club}"


class Invitation(models.Model):
    """A link that lets one person join a club: single-use, and good until ``expires_at``.

    Only the SHA-256 of the link's secret is stored, so that the table (a backup, the admin
    site) cannot be used to sign up; the secret itself is shown once, to the organiser.
    """

    club = models.ForeignKey(Club, verbose_name=pgettext_lazy("players' club", "club"),
                             on_delete=models.CASCADE, related_name="invitations")
    role = models.CharField(verbose_name=_("role"), max_length=16,
                            choices=Membership.Role.choices, default=Membership.Role.PLAYER)
    token_hash = models.CharField(verbose_name=_("token hash"), max_length=64, unique=True,
                                  editable=False)
    email = models.EmailField(verbose_name=_("email"), blank=True,
                              help_text=_("Where the link was sent, if it was"))
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, verbose_name=_("created by"),
                                   null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(verbose_name=_("created at"))
    expires_at = models.DateTimeField(verbose_name=_("expires at"))
    used_at = models.DateTimeField(verbose_name=_("used at"), null=True, blank=True)
    used_by = models.ForeignKey(settings.AUTH_USER_MODEL, verbose_name=_("used by"),
                                null=True, blank=True, on_delete=models.SET_NULL,
                                related_name="+")

    class Meta:
        verbose_name = _("club invitation")
        verbose_name_plural = _("club invitations")
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"invitation to {self.club} ({self.created_at:%Y-%m-%d})"


class Season(models.Model):
    club = models.ForeignKey(Club, verbose_name=pgettext_lazy("players' club", "club"),
                             on_delete=models.CASCADE, related_name="seasons")
    name = models.CharField(verbose_name=_("name"), max_length=100)
    starts_on = models.DateField(verbose_name=_("starts on"))
    ends_on = models.DateField(verbose_name=_("ends on"))

    class Meta:
        verbose_name = _("season")
        verbose_name_plural = _("seasons")
        ordering = ["-starts_on"]
        constraints = [
            models.CheckConstraint(condition=Q(ends_on__gte=models.F("starts_on")),
                                   name="season_ends_after_start"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.club})"


class Soiree(models.Model):
    class Status(models.TextChoices):
        SCHEDULED = "scheduled", pgettext_lazy("soirée status", "scheduled")
        OPEN = "open", pgettext_lazy("soirée status", "open")
        CLOSED = "closed", pgettext_lazy("soirée status", "closed")
        # Cancelled before it opened: it never opens, its buy-ins reversed.
        CANCELLED = "cancelled", pgettext_lazy("soirée status", "cancelled")

    club = models.ForeignKey(Club, verbose_name=pgettext_lazy("players' club", "club"),
                             on_delete=models.PROTECT, related_name="soirees")
    season = models.ForeignKey(Season, verbose_name=_("season"), on_delete=models.SET_NULL,
                               null=True, blank=True, related_name="soirees")
    name = models.CharField(verbose_name=_("name"), max_length=100)
    starts_at = models.DateTimeField(verbose_name=_("starts at"))
    ends_at = models.DateTimeField(verbose_name=_("ends at"))
    game = models.CharField(verbose_name=_("game"), max_length=16,
                            choices=[("comet", "Comet"),
                                     ("commere", "Ma commère, accommodez-moi")])
    options = models.JSONField(verbose_name=_("options"), default=dict, blank=True,
                               help_text=_("RULES.md options (ante, per_card, …)"))
    buy_in = models.PositiveIntegerField(verbose_name=_("buy-in"), default=50,
                                         help_text=_("Chips issued at check-in"))
    move_timeout = models.DurationField(verbose_name=_("move timeout"),
                                        default=timedelta(seconds=30))
    forced_move_delay = models.DurationField(verbose_name=_("forced move delay"),
                                             default=timedelta(seconds=1))
    comet_window = models.DurationField(verbose_name=_("comet window"),
                                        default=timedelta(seconds=2))
    share_window = models.DurationField(
        verbose_name=_("share window"), default=default_share_window,
        help_text=_("How long a new hand waits for the people's shares of randomness"))
    pause_between_hands = models.DurationField(verbose_name=_("pause between hands"),
                                               default=timedelta(seconds=5))
    deals_per_partie = models.PositiveIntegerField(
        verbose_name=_("deals per partie"), null=True, blank=True,
        help_text=_("Hands per partie; empty: until a player is broke"))
    bots_allowed = models.BooleanField(verbose_name=_("bots allowed"), default=True)
    dispute_window = models.DurationField(
        verbose_name=_("dispute window"), default=timedelta(hours=24),
        help_text=_("A hand may be disputed until this long after the soirée closes"))
    bot_kind = models.CharField(
        verbose_name=_("bot level"), max_length=16, default="heuristic",
        choices=[("random", "débutant (random)"), ("heuristic", "habile (heuristic)"),
                 ("ismcts", "fort (ismcts)"), ("timeout", "timeout")],
        help_text=_("The level of the bots that fill empty seats (timeout: never moves in "
                    "time; demos and timer tests)"))
    min_tables = models.PositiveSmallIntegerField(
        verbose_name=_("minimum tables"), default=1,
        help_text=_("With bots allowed, open at least this many tables (bots fill them)"))
    seating_seed = models.CharField(verbose_name=_("seating seed"), max_length=64, blank=True,
                                    help_text=_("Drawn at opening; the seating can be re-drawn"))
    status = models.CharField(verbose_name=_("status"), max_length=16, choices=Status.choices,
                              default=Status.SCHEDULED)
    opened_at = models.DateTimeField(verbose_name=_("opened at"), null=True, blank=True)
    close_asked_at = models.DateTimeField(
        verbose_name=_("close asked at"), null=True, blank=True,
        help_text=_("The organiser closed it early: no hand is dealt after this; the planned "
                    "times are kept"))
    closed_at = models.DateTimeField(verbose_name=_("closed at"), null=True, blank=True)
    cancelled_at = models.DateTimeField(verbose_name=_("cancelled at"), null=True, blank=True)
    # The clock's mark of what it has seated (tournaments/services/soirees.py, soiree_tick):
    # the tick reads only soirées whose count of parties over has grown past it, or that a
    # change at the door or the seats emptied.
    seated_over = models.PositiveIntegerField(
        verbose_name=_("parties over when seated"), null=True, blank=True, editable=False,
        help_text=_("How many of its tables' parties were over when the clock last seated its "
                    "tables; empty: seat them again at the next tick"))
    standings = models.JSONField(verbose_name=_("standings"), null=True, blank=True)
    settlement = models.JSONField(verbose_name=_("settlement"), null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, verbose_name=_("created by"),
                                   null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")

    class Meta:
        verbose_name = _("soirée")
        verbose_name_plural = _("soirées")
        ordering = ["-starts_at"]
        constraints = [
            models.CheckConstraint(condition=Q(ends_at__gt=models.F("starts_at")),
                                   name="soiree_ends_after_start"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.club}, {self.starts_at:%Y-%m-%d})"

    @property
    def stack_ref(self) -> str:
        """The ref of the soirée's stacks in the ledger: each checked-in player's wallet of the
        club under it holds his chips of this soirée alone (docs/ARCHITECTURE.md)."""
        return f"soiree:{self.pk}"

    @property
    def deals_until(self) -> datetime:
        """No hand is dealt after this: the planned end, or an earlier close."""
        return min(self.ends_at, self.close_asked_at or self.ends_at)


class Registration(models.Model):
    soiree = models.ForeignKey(Soiree, verbose_name=_("soirée"), on_delete=models.CASCADE,
                               related_name="registrations")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, verbose_name=_("player"),
                             on_delete=models.PROTECT, related_name="registrations")
    registered_at = models.DateTimeField(verbose_name=_("registered at"), auto_now_add=True)
    checked_in_at = models.DateTimeField(verbose_name=_("checked in at"), null=True, blank=True)
    left_at = models.DateTimeField(
        verbose_name=_("left at"), null=True, blank=True,
        help_text=_("Removed from the tables by the organiser; checked in again, he plays on"))

    class Meta:
        verbose_name = _("registration")
        verbose_name_plural = _("registrations")
        ordering = ["soiree", "registered_at"]
        constraints = [
            models.UniqueConstraint(fields=["soiree", "user"], name="registration_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.user} at {self.soiree}"


class SoireeTable(models.Model):
    """A table of the evening; it plays one partie after another until the closing time."""

    soiree = models.ForeignKey(Soiree, verbose_name=_("soirée"), on_delete=models.CASCADE,
                               related_name="tables")
    number = models.PositiveSmallIntegerField(verbose_name=_("number"))
    round = models.PositiveSmallIntegerField(verbose_name=_("round"), default=1)
    partie = models.OneToOneField("games.Partie", verbose_name=_("partie"),
                                  on_delete=models.PROTECT, related_name="soiree_table")

    class Meta:
        verbose_name = _("soirée table")
        verbose_name_plural = _("soirée tables")
        ordering = ["soiree", "number", "round"]
        constraints = [
            models.UniqueConstraint(fields=["soiree", "number", "round"],
                                    name="soiree_table_unique"),
        ]

    def __str__(self) -> str:
        return f"table {self.number} (round {self.round}) of {self.soiree}"


class Announcement(models.Model):
    """What the room is told: a seat change between hands, or the organiser's own words.

    A seat change is carried out when the parties it concerns are between hands (their tables
    stop dealing after the hand in play); until then ``done_at`` is empty. Balancing and late
    arrivals make their own; the organiser asks for moves, replacements by a bot and removals.
    """

    class Kind(models.TextChoices):
        MOVE = "move", _("move")  # the player moves from from_table to to_table
        JOIN = "join", _("join")  # a player not seated yet takes a seat at to_table
        REPLACE = "replace", _("replace by a bot")  # a bot takes the player's seat
        REMOVE = "remove", _("remove")  # the player leaves from_table, not seated again
        MESSAGE = "message", _("message")  # the organiser's words

    class Reason(models.TextChoices):
        BALANCE = "balance", _("table balancing")
        ORGANISER = "organiser", _("organiser")
        ARRIVAL = "arrival", _("arrival")

    soiree = models.ForeignKey(Soiree, verbose_name=_("soirée"), on_delete=models.CASCADE,
                               related_name="announcements")
    at = models.DateTimeField(verbose_name=_("at"))
    kind = models.CharField(verbose_name=_("kind"), max_length=16, choices=Kind.choices)
    reason = models.CharField(verbose_name=_("reason"), max_length=16, choices=Reason.choices,
                              default=Reason.ORGANISER)
    player = models.ForeignKey(settings.AUTH_USER_MODEL, verbose_name=_("player"),
                               null=True, blank=True, on_delete=models.PROTECT,
                               related_name="+")
    from_table = models.PositiveSmallIntegerField(verbose_name=_("from table"), null=True,
                                                  blank=True)
    to_table = models.PositiveSmallIntegerField(verbose_name=_("to table"), null=True, blank=True)
    text = models.CharField(verbose_name=_("text"), max_length=200, blank=True)
    done_at = models.DateTimeField(verbose_name=_("done at"), null=True, blank=True)

    class Meta:
        verbose_name = _("announcement")
        verbose_name_plural = _("announcements")
        ordering = ["soiree", "-at", "-pk"]
        constraints = [
            # One seat change at a time per player: a second request is the same one again.
            models.UniqueConstraint(fields=["soiree", "player"], condition=Q(done_at__isnull=True),
                                    name="announcement_one_pending_change"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.player or ''} at {self.soiree}"


def _append_only(name: str, what: str) -> pgtrigger.Trigger:
    """A PostgreSQL trigger that refuses UPDATE and DELETE: the rows are the record."""
    return pgtrigger.Trigger(
        name=name, when=pgtrigger.Before, operation=pgtrigger.Update | pgtrigger.Delete,
        func=f"RAISE EXCEPTION '{what} are append-only: % refused on %', TG_OP, TG_TABLE_NAME"
             " USING ERRCODE = 'restrict_violation';")


class Dispute(models.Model):
    """A player of the hand, or the organiser, asks the arbiter to rule on a finished hand.
    Open until ruled; its rulings (the latest stands) are ``Ruling`` rows."""

    hand = models.ForeignKey("games.Hand", verbose_name=_("hand"), on_delete=models.PROTECT,
                             related_name="disputes")
    soiree = models.ForeignKey(Soiree, verbose_name=_("soirée"), on_delete=models.PROTECT,
                               related_name="disputes")
    opened_by = models.ForeignKey(settings.AUTH_USER_MODEL, verbose_name=_("opened by"),
                                  on_delete=models.PROTECT, related_name="+")
    opened_at = models.DateTimeField(verbose_name=_("opened at"))
    reason = models.TextField(verbose_name=_("reason"), max_length=2000)
    event_seq = models.PositiveIntegerField(verbose_name=_("event number"), null=True, blank=True,
                                            help_text=_("The event it concerns, if one"))
    request_id = models.UUIDField(verbose_name=_("request id"), unique=True,
                                  help_text=_("The same request again opens it once"))

    class Meta:
        verbose_name = _("dispute")
        verbose_name_plural = _("disputes")
        ordering = ["opened_at", "pk"]
        triggers = [_append_only("dispute_append_only", "disputes")]

    def __str__(self) -> str:
        return f"dispute {self.pk} on hand {self.hand_id}"


class Ruling(models.Model):
    """An arbiter's ruling on a dispute. Append-only: a second ruling on the same dispute is an
    appeal, recorded beside the first, and the latest stands. The ledger entries it posted (the
    difference between what it orders and what the rulings before it moved) are named here."""

    class Kind(models.TextChoices):
        STANDS = "stands", _("the result stands")
        VOID = "void", _("the hand is void")  # every chip the hand moved goes back
        ADJUSTED = "adjusted", _("adjusted")  # chip corrections between the hand's players

    dispute = models.ForeignKey(Dispute, verbose_name=_("dispute"), on_delete=models.PROTECT,
                                related_name="rulings")
    arbiter = models.ForeignKey(settings.AUTH_USER_MODEL, verbose_name=_("arbiter"),
                                on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField(verbose_name=_("at"))
    kind = models.CharField(verbose_name=_("kind"), max_length=16, choices=Kind.choices)
    reason = models.TextField(verbose_name=_("reason"), max_length=2000)
    corrections = models.JSONField(verbose_name=_("corrections"), default=dict, blank=True,
                                   help_text=_("adjusted: chips per player, summing to zero"))
    entries = models.JSONField(verbose_name=_("entries"), default=list, blank=True,
                               help_text=_("The ledger entries posted"))
    shortfall = models.JSONField(verbose_name=_("shortfall"), default=dict, blank=True,
                                 help_text=_("Chips a wallet did not hold, per player"))
    request_id = models.UUIDField(verbose_name=_("request id"), unique=True,
                                  help_text=_("The same request again rules once"))
    cites = models.JSONField(verbose_name=_("cites"), default=list, blank=True,
                             help_text=_("The what-if branches of the dispute it cites"))

    class Meta:
        verbose_name = _("ruling")
        verbose_name_plural = _("rulings")
        ordering = ["at", "pk"]
        triggers = [_append_only("ruling_append_only", "rulings")]

    def __str__(self) -> str:
        return f"ruling {self.pk} ({self.kind}) on dispute {self.dispute_id}"


class WhatIf(models.Model):
    """An arbiter's draft: the disputed hand played again from one of its steps with other
    moves (games.whatif), kept with the dispute; it never touches the real hand, and a ruling
    may cite it."""

    dispute = models.ForeignKey(Dispute, verbose_name=_("dispute"), on_delete=models.CASCADE,
                                related_name="whatifs")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, verbose_name=_("author"),
                               on_delete=models.PROTECT, related_name="+")
    created_at = models.DateTimeField(verbose_name=_("created at"))
    from_seq = models.PositiveIntegerField(verbose_name=_("from step"),
                                           help_text=_("The step it branches from"))
    moves = models.JSONField(verbose_name=_("moves"),
                             help_text=_("The moves played from there, [{seat, move}]"))
    played_out = models.BooleanField(verbose_name=_("played out"), default=False,
                                     help_text=_("The rest was played by the time-out rule"))
    result = models.JSONField(verbose_name=_("result"), null=True, blank=True,
                              help_text=_("How the branch ended"))
    note = models.CharField(verbose_name=_("note"), max_length=500, blank=True)

    class Meta:
        verbose_name = _("what-if")
        verbose_name_plural = _("what-ifs")
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        return f"what-if {self.pk} of dispute {self.dispute_id} from event {self.from_seq}"


class Rating(models.Model):
    """A player's season rating (openskill's Plackett-Luce model): ``mu`` and ``sigma`` after
    his latest rated partie, and the conservative ``ordinal`` (mu - 3 sigma) they rank by."""

    season = models.ForeignKey(Season, verbose_name=_("season"), on_delete=models.CASCADE,
                               related_name="ratings")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, verbose_name=_("player"),
                             on_delete=models.CASCADE, related_name="ratings")
    mu = models.FloatField(verbose_name=_("mu"))
    sigma = models.FloatField(verbose_name=_("sigma"))
    ordinal = models.FloatField(verbose_name=_("ordinal"))
    parties = models.PositiveIntegerField(verbose_name=_("parties"), default=0)
    updated_at = models.DateTimeField(verbose_name=_("updated at"))

    class Meta:
        verbose_name = _("rating")
        verbose_name_plural = _("ratings")
        ordering = ["-ordinal", "user__username"]
        constraints = [
            models.UniqueConstraint(fields=["season", "user"], name="rating_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.season}: {self.ordinal:.2f}"


class RatingChange(models.Model):
    """One rated partie of one player: his rank in it and his rating after it (the history
    drawn on his page, and what ``ratings_rebuild`` recomputes)."""

    season = models.ForeignKey(Season, verbose_name=_("season"), on_delete=models.CASCADE,
                               related_name="rating_changes")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, verbose_name=_("player"),
                             on_delete=models.CASCADE, related_name="rating_changes")
    partie = models.ForeignKey("games.Partie", verbose_name=_("partie"), on_delete=models.CASCADE,
                               related_name="rating_changes")
    rank = models.PositiveSmallIntegerField(verbose_name=_("rank"),
                                            help_text=_("1 for the best net; equal nets share it"))
    net = models.IntegerField(verbose_name=_("net"))
    mu = models.FloatField(verbose_name=_("mu"))
    sigma = models.FloatField(verbose_name=_("sigma"))
    ordinal = models.FloatField(verbose_name=_("ordinal"))
    at = models.DateTimeField(verbose_name=_("at"), help_text=_("When the partie ended"))

    class Meta:
        verbose_name = _("rating change")
        verbose_name_plural = _("rating changes")
        ordering = ["at", "partie_id", "user_id"]
        constraints = [
            models.UniqueConstraint(fields=["partie", "user"], name="rating_change_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.user} after {self.partie_id}: {self.ordinal:.2f}"


class SoireeProjection(models.Model):
    """The head of a soirée's read models (``SoireeStanding``, tournaments/projections.py):
    ``version`` moves with every change to them, so that a page asks whether anything changed
    for the price of one row; ``hands`` counts the soirée's ended hands. Every writer of the
    rows takes this row's lock first: the hands of several tables, a ruling and the door
    then add to the same rows one after the other."""

    soiree = models.OneToOneField(Soiree, verbose_name=_("soirée"), primary_key=True,
                                  on_delete=models.CASCADE, related_name="projection")
    version = models.PositiveBigIntegerField(verbose_name=_("version"), default=0)
    hands = models.PositiveIntegerField(verbose_name=_("hands ended"), default=0)
    updated_at = models.DateTimeField(verbose_name=_("updated at"), null=True, blank=True)

    class Meta:
        verbose_name = _("soirée projection")
        verbose_name_plural = _("soirée projections")

    def __str__(self) -> str:
        return f"projection of soirée {self.soiree_id} (version {self.version})"


class SoireeStanding(models.Model):
    """One player's line of a soirée's standings and results sheet, kept as the hands end and
    the rulings and the door move chips (a read model: ``manage.py rebuild_projections``
    computes it again from the events and the ledger). ``listed``: he played a hand of it
    (one only checked in has his buy-in here, and no line in the standings). ``chart``: his
    net at the end of each stretch of the evening in which it moved, ``[[stretch, net], …]``
    (``projections.chart_stretch``)."""

    soiree = models.ForeignKey(Soiree, verbose_name=_("soirée"), on_delete=models.CASCADE,
                               related_name="standing_rows")
    player = models.ForeignKey(settings.AUTH_USER_MODEL, verbose_name=_("player"),
                               on_delete=models.PROTECT, related_name="+")
    bot = models.BooleanField(verbose_name=_("bot"), default=False)
    listed = models.BooleanField(verbose_name=_("listed"), default=False)
    net = models.BigIntegerField(verbose_name=_("net"), default=0)
    hands = models.PositiveIntegerField(verbose_name=_("hands"), default=0)
    hands_won = models.PositiveIntegerField(verbose_name=_("hands won"), default=0)
    comets = models.PositiveIntegerField(verbose_name=_("Comets"), default=0)
    tricons = models.PositiveIntegerField(verbose_name=_("tricons"), default=0)
    buy_in = models.BigIntegerField(verbose_name=_("buy-in"), default=0)
    rebuys = models.BigIntegerField(verbose_name=_("rebuys"), default=0)
    chart = models.JSONField(verbose_name=_("chart"), default=list, blank=True)

    class Meta:
        verbose_name = _("standing")
        verbose_name_plural = _("standings")
        constraints = [
            models.UniqueConstraint(fields=["soiree", "player"], name="soiree_standing_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.player} at soirée {self.soiree_id}: {self.net:+d}"
