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
        INVITING = "inviting"  # a casual table waiting for its invited players to accept
        PLAYING = "playing"
        OVER = "over"
        CANCELLED = "cancelled"  # an invitation declined, or withdrawn by its creator

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    game = models.CharField(max_length=16, choices=Game.choices)
    options = models.JSONField(help_text="Every option of RULES.md for this game, defaults filled")
    club_key = models.CharField(max_length=64, default="casual",
                                help_text="The ledger's club whose wallets pay and win")
    table_label = models.CharField(max_length=64, default="free table")
    wallet_ref = models.CharField(
        max_length=64, blank=True, default="",
        help_text="The ref of the wallets its people play from: empty for their wallet of the "
                  "club, or the stack of a soirée (each soirée's chips are its own)")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PLAYING)
    move_timeout = models.DurationField()
    forced_move_delay = models.DurationField()
    comet_window = models.DurationField()
    share_window = models.DurationField(
        default=default_share_window,
        help_text="How long a new hand waits for the people's shares of randomness")
    pause_between_hands = models.DurationField()
    deal_until = models.DateTimeField(null=True, blank=True)
    buy_in = models.PositiveIntegerField(
        default=0, help_text="At a casual table, the chips a player must hold to sit down")
    # Comet's progressive payment carries from deal to deal (RULES.md §2, options).
    comet_payment_due = models.PositiveIntegerField(null=True, blank=True)
    comet_played_last = models.BooleanField(null=True, blank=True)
    next_hand_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.get_game_display()} at {self.table_label} ({self.status})"


class Seat(models.Model):
    partie = models.ForeignKey(Partie, on_delete=models.CASCADE, related_name="seats")
    number = models.PositiveSmallIntegerField()
    player = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                               related_name="seats")
    bot = models.CharField(max_length=16, blank=True,
                           help_text="random, heuristic, ismcts or timeout; empty for a person")
    away = models.BooleanField(
        default=False, help_text="The player left the table: his decisions are played by the "
                                 "time-out rule at once, until he comes back or moves")

    class Meta:
        ordering = ["partie", "number"]
        constraints = [
            models.UniqueConstraint(fields=["partie", "number"], name="seat_number_unique"),
            models.UniqueConstraint(fields=["partie", "player"], name="seat_player_unique"),
        ]

    def __str__(self) -> str:
        return f"seat {self.number}: {self.player}"


class Invitation(models.Model):
    """A seat offered at a casual table: nobody sits, nor pays, before accepting it. A bot's
    seat, and the creator's own, are accepted when the table is made."""

    class Answer(models.TextChoices):
        PENDING = "pending"
        ACCEPTED = "accepted"
        DECLINED = "declined"

    partie = models.ForeignKey(Partie, on_delete=models.CASCADE, related_name="invitations")
    number = models.PositiveSmallIntegerField(help_text="The seat it offers")
    player = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                               on_delete=models.CASCADE, related_name="invitations")
    bot = models.CharField(max_length=16, blank=True)
    answer = models.CharField(max_length=16, choices=Answer.choices, default=Answer.PENDING)
    answered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
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
        PLAYING = "playing"
        OVER = "over"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    partie = models.ForeignKey(Partie, on_delete=models.PROTECT, related_name="hands")
    number = models.PositiveIntegerField()
    dealer = models.PositiveSmallIntegerField()
    commitment = models.CharField(max_length=64)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PLAYING)
    last_seq = models.PositiveIntegerField(default=0)
    # The chain's last hash (the commitment before any event): the next event's ``prev``.
    last_hash = models.CharField(max_length=64, blank=True)
    # The pending decision: who is awaited, and until when (the timers play the default move).
    # Not indexed: every move changes it, and a changed indexed column makes PostgreSQL write
    # a new entry in every index of the table instead of updating the row in place (a HOT
    # update). The sweeper finds overdue deadlines among the hands in play (``hand_playing``).
    deadline = models.DateTimeField(null=True, blank=True)
    deadline_seq = models.PositiveIntegerField(null=True, blank=True)
    deadline_kind = models.CharField(
        max_length=16, blank=True,
        help_text="timeout: the awaited player's time runs out; forced: his only move is due",
    )
    # The deal's time (the service's clock), so that a hand played out at its deal (bots without
    # delays) never seems to end before it started.
    record_format = models.PositiveSmallIntegerField(
        default=1, help_text="HAND_RECORD.md version: 2 is dealt with the players' shares, 3 "
                             "with a keyed deck and sealed fields")
    started_at = models.DateTimeField(default=timezone.now)
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["partie", "number"]
        constraints = [
            models.UniqueConstraint(fields=["partie", "number"], name="hand_number_unique"),
        ]
        indexes = [
            # The hands in play, a few per table, whatever the history: the sweeper's search.
            models.Index(fields=["status"], name="hand_playing",
                         condition=models.Q(status="playing")),
        ]

    def __str__(self) -> str:
        return f"hand {self.number} of {self.partie_id}"


class HandSeed(models.Model):
    """The secret seed, kept apart from the events and every API until the hand ends."""

    hand = models.OneToOneField(Hand, on_delete=models.PROTECT, primary_key=True,
                                related_name="secret")
    seed = models.CharField(max_length=64)

    class Meta:
        triggers = [
            _refuse("handseed_append_only", "hand seeds", pgtrigger.Update | pgtrigger.Delete),
        ]

    def __str__(self) -> str:
        return f"seed of hand {self.hand_id} (secret until the hand is over)"


class HandEvent(models.Model):
    class By(models.TextChoices):
        PLAYER = "player"
        FORCED = "forced"
        TIMEOUT = "timeout"
        SERVICE = "service"

    # No index of its own: the (hand, seq) unique constraint's index starts with the hand and
    # serves every lookup by hand; a second one cost an index insert per event.
    hand = models.ForeignKey(Hand, on_delete=models.PROTECT, related_name="events",
                             db_index=False)
    seq = models.PositiveIntegerField()
    type = models.CharField(max_length=32)
    payload = models.JSONField()
    by = models.CharField(max_length=16, choices=By.choices)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                              on_delete=models.PROTECT, related_name="+")
    command_id = models.UUIDField(null=True, blank=True)
    at = models.CharField(max_length=40, help_text="UTC ISO-8601 with a final Z, as hashed")
    prev = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)

    class Meta:
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

    command_id = models.UUIDField(primary_key=True)
    hand = models.ForeignKey(Hand, on_delete=models.PROTECT, related_name="commands")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT,
                             related_name="+")
    request = models.JSONField()
    response = models.JSONField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"command {self.command_id} on hand {self.hand_id}"


class SigningKey(models.Model):
    """A public key the service signs receipts with (HAND_RECORD.md, version 3), current or
    retired: published with its period, so that a receipt signed before a rotation is still
    checked against the key that signed it. Keys are never deleted."""

    id = models.CharField(primary_key=True, max_length=16,
                          help_text="the first 16 hex digits of sha256 of the public key")
    public = models.CharField(max_length=64, unique=True,
                              help_text="the raw Ed25519 public key, 64 hex digits")
    since = models.DateTimeField(help_text="first published as the current key")
    until = models.DateTimeField(null=True, blank=True, help_text="retired (null: current)")

    class Meta:
        ordering = ["since"]
        triggers = [
            _refuse("signingkey_no_delete", "signing keys", pgtrigger.Delete),
        ]

    def __str__(self) -> str:
        return f"key {self.id}"
