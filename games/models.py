"""Parties, hands and the event store.

A hand's state is what its ``HandEvent`` rows give when replayed through the rules engine.
Events and seeds are append-only (PostgreSQL triggers declared below, installed by django-pgtrigger
in migration 0002) and events are hash-chained (HAND_RECORD.md). The embedded SQLite default has
no triggers: there the services are the only writer, and ``verify_hands`` finds any tampering.
The seed lives in ``HandSeed``, apart from the events, and is revealed only once the hand is
over.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

import pgtrigger
from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import pgettext_lazy


def _refuse(name: str, what: str, operation: pgtrigger.Operation,
            level: pgtrigger.Level = pgtrigger.Row) -> pgtrigger.Trigger:
    """A PostgreSQL trigger that refuses ``operation`` on the table: the rows are append-only."""
    return pgtrigger.Trigger(
        name=name, when=pgtrigger.Before, operation=operation, level=level,
        func=f"RAISE EXCEPTION '{what} are append-only: % refused on %', TG_OP, TG_TABLE_NAME"
             " USING ERRCODE = 'restrict_violation';",
    )


def default_share_window() -> timedelta:
    """The club's setting for new tables (``ACADEMIE_SHARE_WINDOW``, 3 s)."""
    return timedelta(seconds=settings.ACADEMIE_SHARE_WINDOW)


class Game(models.TextChoices):
    COMET = "comet", "Comet"
    COMMERE = "commere", "Ma commère, accommodez-moi"


class Partie(models.Model):
    class Status(models.TextChoices):
        # inviting: a casual table waiting for its invited players to accept; cancelled: an
        # invitation declined, or withdrawn by its creator
        INVITING = "inviting", pgettext_lazy("table status", "inviting")
        PLAYING = "playing", pgettext_lazy("table status", "playing")
        OVER = "over", pgettext_lazy("table status", "over")
        CANCELLED = "cancelled", pgettext_lazy("table status", "cancelled")

    id = models.UUIDField(verbose_name=_("id"), primary_key=True, default=uuid.uuid4,
                          editable=False)
    game = models.CharField(verbose_name=_("game"), max_length=16, choices=Game.choices)
    options = models.JSONField(
        verbose_name=_("options"),
        help_text=_("Every option of RULES.md for this game, defaults filled"))
    club_key = models.CharField(verbose_name=_("club key"), max_length=64, default="casual",
                                help_text=_("The ledger's club whose wallets pay and win"))
    table_label = models.CharField(verbose_name=_("table label"), max_length=64,
                                   default="free table")
    wallet_ref = models.CharField(
        verbose_name=_("wallet ref"), max_length=64, blank=True, default="",
        help_text=_("The ref of the wallets its people play from: empty for their wallet of "
                    "the club, or the stack of a soirée (each soirée's chips are its own)"))
    status = models.CharField(verbose_name=_("status"), max_length=16, choices=Status.choices,
                              default=Status.PLAYING)
    move_timeout = models.DurationField(verbose_name=_("move timeout"))
    forced_move_delay = models.DurationField(verbose_name=_("forced move delay"))
    comet_window = models.DurationField(verbose_name=_("comet window"))
    share_window = models.DurationField(
        verbose_name=_("share window"), default=default_share_window,
        help_text=_("How long a new hand waits for the people's shares of randomness"))
    pause_between_hands = models.DurationField(verbose_name=_("pause between hands"))
    deal_until = models.DateTimeField(verbose_name=_("deal until"), null=True, blank=True)
    buy_in = models.PositiveIntegerField(
        verbose_name=_("buy-in"), default=0,
        help_text=_("At a casual table, the chips a player must hold to sit down"))
    # Comet's progressive payment carries from deal to deal (RULES.md §2, options).
    comet_payment_due = models.PositiveIntegerField(verbose_name=_("comet payment due"),
                                                    null=True, blank=True)
    comet_played_last = models.BooleanField(verbose_name=_("comet played last"),
                                            null=True, blank=True)
    next_hand_at = models.DateTimeField(verbose_name=_("next hand at"), null=True, blank=True)
    # Set while a person who left a casual table asked it to wait for him (``Seat.pauses``):
    # nothing is played nor dealt until every such person is back (RULES.md §3, leaving).
    paused_at = models.DateTimeField(
        verbose_name=_("paused at"), null=True, blank=True,
        help_text=_("When the table was paused by a player who left it; empty while it plays"))
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, verbose_name=_("created by"),
                                   null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(verbose_name=_("created at"), auto_now_add=True)
    ended_at = models.DateTimeField(verbose_name=_("ended at"), null=True, blank=True)

    class Meta:
        verbose_name = _("partie")
        verbose_name_plural = _("parties")
        ordering = ["-created_at"]
        indexes = [
            # The paused tables, a few at any time: the sweeper's search for long pauses.
            models.Index(fields=["paused_at"], name="partie_paused",
                         condition=models.Q(paused_at__isnull=False)),
        ]

    def __str__(self) -> str:
        return f"{self.get_game_display()} at {self.table_label} ({self.status})"


class Seat(models.Model):
    partie = models.ForeignKey(Partie, verbose_name=_("partie"), on_delete=models.CASCADE,
                               related_name="seats")
    number = models.PositiveSmallIntegerField(verbose_name=_("number"))
    player = models.ForeignKey(settings.AUTH_USER_MODEL, verbose_name=_("player"),
                               on_delete=models.PROTECT, related_name="seats")
    bot = models.CharField(verbose_name=_("bot"), max_length=16, blank=True,
                           help_text=_("random, heuristic, ismcts or timeout; empty for a person"))
    away = models.BooleanField(
        verbose_name=_("away"), default=False,
        help_text=_("The player left the table: his decisions are played by the "
                    "time-out rule at once, until he comes back or moves"))
    pauses = models.BooleanField(
        verbose_name=_("pauses the table"), default=False,
        help_text=_("The player left a casual table asking it to wait for him: nothing is "
                    "played until he comes back or moves"))

    class CometOrder(models.TextChoices):
        BLOCKED = "blocked", _("play it when a run I hold a card of is blocked")
        OUT = "out", _("play it when it is my last card")
        FIRST = "first", _("play it at the first chance, for the payment")
        NEVER = "never", _("never play it")
        ASK = "ask", _("ask me each time")

    comet_order = models.CharField(
        verbose_name=_("Comet order"), max_length=8, choices=CometOrder.choices,
        default=CometOrder.BLOCKED,
        help_text=_("Comet: when the service plays the Comet for this seat's player, at the "
                    "end of each chance the rules give him"))
    pending = models.JSONField(
        verbose_name=_("move waiting for the Comet's chance"), null=True, blank=True,
        help_text=_("A move chosen during a Comet chance, played when the chance ends: "
                    "{hand, seq, move}"))

    class Meta:
        verbose_name = _("seat")
        verbose_name_plural = _("seats")
        ordering = ["partie", "number"]
        constraints = [
            models.UniqueConstraint(fields=["partie", "number"], name="seat_number_unique"),
            models.UniqueConstraint(fields=["partie", "player"], name="seat_player_unique"),
            # Only a player who has left may hold the table for his return.
            models.CheckConstraint(condition=~models.Q(pauses=True, away=False),
                                   name="seat_pauses_only_away"),
        ]

    def __str__(self) -> str:
        return f"seat {self.number}: {self.player}"


class Invitation(models.Model):
    """A seat offered at a casual table: nobody sits, nor pays, before accepting it. A bot's
    seat, and the creator's own, are accepted when the table is made."""

    class Answer(models.TextChoices):
        PENDING = "pending", _("pending")
        ACCEPTED = "accepted", _("accepted")
        DECLINED = "declined", _("declined")

    partie = models.ForeignKey(Partie, verbose_name=_("partie"), on_delete=models.CASCADE,
                               related_name="invitations")
    number = models.PositiveSmallIntegerField(verbose_name=_("seat"),
                                              help_text=_("The seat it offers"))
    player = models.ForeignKey(settings.AUTH_USER_MODEL, verbose_name=_("player"),
                               null=True, blank=True, on_delete=models.CASCADE,
                               related_name="invitations")
    bot = models.CharField(verbose_name=_("bot"), max_length=16, blank=True)
    answer = models.CharField(verbose_name=_("answer"), max_length=16, choices=Answer.choices,
                              default=Answer.PENDING)
    answered_at = models.DateTimeField(verbose_name=_("answered at"), null=True, blank=True)

    class Meta:
        verbose_name = _("seat invitation")
        verbose_name_plural = _("seat invitations")
        ordering = ["partie", "number"]
        constraints = [
            models.UniqueConstraint(fields=["partie", "number"], name="invitation_seat_unique"),
            models.UniqueConstraint(fields=["partie", "player"], name="invitation_player_unique"),
        ]

    def __str__(self) -> str:
        who = self.player or f"bot {self.bot}"
        return f"seat {self.number} for {who} ({self.answer})"


class Hand(models.Model):
    class Status(models.TextChoices):
        PLAYING = "playing", pgettext_lazy("hand status", "in play")
        OVER = "over", pgettext_lazy("hand status", "over")

    id = models.UUIDField(verbose_name=_("id"), primary_key=True, default=uuid.uuid4,
                          editable=False)
    partie = models.ForeignKey(Partie, verbose_name=_("partie"), on_delete=models.PROTECT,
                               related_name="hands")
    number = models.PositiveIntegerField(verbose_name=_("number"))
    dealer = models.PositiveSmallIntegerField(verbose_name=_("dealer"))
    commitment = models.CharField(verbose_name=_("commitment"), max_length=64)
    status = models.CharField(verbose_name=_("status"), max_length=16, choices=Status.choices,
                              default=Status.PLAYING)
    last_seq = models.PositiveIntegerField(verbose_name=_("last event"), default=0)
    # The chain's last hash (the commitment before any event): the next event's ``prev``.
    last_hash = models.CharField(verbose_name=_("last hash"), max_length=64, blank=True)
    # The pending decision: who is awaited, and until when (the timers play the default move).
    # Not indexed: every move changes it, and a changed indexed column makes PostgreSQL write
    # a new entry in every index of the table instead of updating the row in place (a HOT
    # update). The sweeper finds overdue deadlines among the hands in play (``hand_playing``).
    deadline = models.DateTimeField(verbose_name=_("deadline"), null=True, blank=True)
    deadline_seq = models.PositiveIntegerField(verbose_name=_("deadline event"), null=True,
                                               blank=True)
    deadline_kind = models.CharField(
        verbose_name=_("deadline kind"), max_length=16, blank=True,
        help_text=_("timeout: the awaited player's time runs out; forced: his only move is due"),
    )
    # The deal's time (the service's clock), so that a hand played out at its deal (bots without
    # delays) never seems to end before it started.
    record_format = models.PositiveSmallIntegerField(
        verbose_name=_("record format"), default=1,
        help_text=_("HAND_RECORD.md version: 2 is dealt with the players' shares, 3 "
                    "with a keyed deck and sealed fields"))
    started_at = models.DateTimeField(verbose_name=_("started at"), default=timezone.now)
    ended_at = models.DateTimeField(verbose_name=_("ended at"), null=True, blank=True)
    # The service's verification of the finished record (``games.services.verdicts``), made
    # once by the clock after the hand ends: ok, digest, discrepancy, the chain head it read
    # and when. A sheet of thousands of hands reads it rather than replaying each record.
    verdict = models.JSONField(
        verbose_name=_("verdict"), null=True, blank=True, editable=False,
        help_text=_("the service's verification of the finished hand's record"))

    class Meta:
        verbose_name = _("hand")
        verbose_name_plural = _("hands")
        ordering = ["partie", "number"]
        constraints = [
            models.UniqueConstraint(fields=["partie", "number"], name="hand_number_unique"),
        ]
        indexes = [
            # The hands in play, a few per table, whatever the history: the sweeper's search.
            models.Index(fields=["status"], name="hand_playing",
                         condition=models.Q(status="playing")),
            # The finished hands not yet verified, a few at any time: the verifier's search.
            models.Index(fields=["ended_at"], name="hand_unverified",
                         condition=models.Q(status="over", verdict__isnull=True)),
        ]

    def __str__(self) -> str:
        return f"hand {self.number} of {self.partie_id}"


class HandSeed(models.Model):
    """The secret seed, kept apart from the events and every API until the hand ends."""

    hand = models.OneToOneField(Hand, verbose_name=_("hand"), on_delete=models.PROTECT,
                                primary_key=True, related_name="secret")
    seed = models.CharField(verbose_name=_("seed"), max_length=64)

    class Meta:
        verbose_name = _("hand seed")
        verbose_name_plural = _("hand seeds")
        triggers = [
            _refuse("handseed_append_only", "hand seeds", pgtrigger.Update | pgtrigger.Delete),
        ]

    def __str__(self) -> str:
        return f"seed of hand {self.hand_id} (secret until the hand is over)"


class HandEvent(models.Model):
    class By(models.TextChoices):
        PLAYER = "player", _("player")
        FORCED = "forced", _("forced")
        TIMEOUT = "timeout", _("timed out")
        SERVICE = "service", _("service")

    # No index of its own: the (hand, seq) unique constraint's index starts with the hand and
    # serves every lookup by hand; a second one cost an index insert per event.
    hand = models.ForeignKey(Hand, verbose_name=_("hand"), on_delete=models.PROTECT,
                             related_name="events", db_index=False)
    seq = models.PositiveIntegerField(verbose_name=_("seq"))
    type = models.CharField(verbose_name=_("type"), max_length=32)
    payload = models.JSONField(verbose_name=_("payload"))
    by = models.CharField(verbose_name=_("by"), max_length=16, choices=By.choices)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, verbose_name=_("actor"),
                              null=True, blank=True, on_delete=models.PROTECT,
                              related_name="+")
    command_id = models.UUIDField(verbose_name=_("command id"), null=True, blank=True)
    at = models.CharField(verbose_name=_("at"), max_length=40,
                          help_text=_("UTC ISO-8601 with a final Z, as hashed"))
    prev = models.CharField(verbose_name=_("previous hash"), max_length=64)
    hash = models.CharField(verbose_name=_("hash"), max_length=64)

    class Meta:
        verbose_name = _("hand event")
        verbose_name_plural = _("hand events")
        ordering = ["hand", "seq"]
        constraints = [
            # The optimistic lock: a second writer at the same seq loses (409).
            models.UniqueConstraint(fields=["hand", "seq"], name="hand_event_seq_unique"),
        ]
        triggers = [
            _refuse("handevent_append_only", "hand events", pgtrigger.Update | pgtrigger.Delete),
            _refuse("handevent_no_truncate", "hand events", pgtrigger.Truncate,
                    level=pgtrigger.Statement),
        ]

    def __str__(self) -> str:
        return f"{self.hand_id} #{self.seq} {self.type}"


class Command(models.Model):
    """An applied command, so that a retry with the same id returns the first answer."""

    command_id = models.UUIDField(verbose_name=_("command id"), primary_key=True)
    hand = models.ForeignKey(Hand, verbose_name=_("hand"), on_delete=models.PROTECT,
                             related_name="commands")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, verbose_name=_("user"),
                             on_delete=models.PROTECT, related_name="+")
    request = models.JSONField(verbose_name=_("request"))
    response = models.JSONField(verbose_name=_("response"))
    created_at = models.DateTimeField(verbose_name=_("created at"), auto_now_add=True)

    class Meta:
        verbose_name = _("command")
        verbose_name_plural = _("commands")

    def __str__(self) -> str:
        return f"command {self.command_id} on hand {self.hand_id}"


class SigningKey(models.Model):
    """A public key the service signs receipts with (HAND_RECORD.md, version 3), current or
    retired: published with its period, so that a receipt signed before a rotation is still
    checked against the key that signed it. Keys are never deleted."""

    id = models.CharField(verbose_name=_("id"), primary_key=True, max_length=16,
                          help_text=_("the first 16 hex digits of sha256 of the public key"))
    public = models.CharField(verbose_name=_("public key"), max_length=64, unique=True,
                              help_text=_("the raw Ed25519 public key, 64 hex digits"))
    since = models.DateTimeField(verbose_name=_("since"),
                                 help_text=_("first published as the current key"))
    until = models.DateTimeField(verbose_name=_("until"), null=True, blank=True,
                                 help_text=_("retired (null: current)"))

    class Meta:
        verbose_name = _("signing key")
        verbose_name_plural = _("signing keys")
        ordering = ["since"]
        triggers = [
            _refuse("signingkey_no_delete", "signing keys", pgtrigger.Delete),
        ]

    def __str__(self) -> str:
        return f"key {self.id}"
