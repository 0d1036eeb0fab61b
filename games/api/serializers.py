"""Input validation and output shapes of the hand API; no rule of the game lives here."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.utils.text import format_lazy
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from games.engine.cards import CANONICAL_INDEX, SUITS
from games.models import Game, Hand, Invitation, Partie, Seat
from games.services import (
    BOT_LEVELS,
    BOT_NAMES,
    LENGTH_OPTION,
    MAX_BUY_IN,
    MAX_HANDS,
    OPTION_MAX,
    bot_for,
)
from games.services.moves import LEAVE_PAUSE, LEAVE_TIMEOUT, LEAVING, pause_allowed
from games.services.parties import BOT_CHOICES


class BotField(serializers.ChoiceField):
    """A bot by its level (``debutant``, ``habile``, ``fort``) or its own name (``random``,
    ``heuristic``, ``ismcts``, ``timeout``); the bot's name is stored."""

    default_error_messages = {
        # "{{input}}" stays a placeholder: DRF fills it with what the client sent.
        "invalid_choice": format_lazy(
            gettext_lazy("unknown bot level '{{input}}': choose among {levels} (or the bots "
                         "{bots})"), levels=", ".join(BOT_LEVELS), bots=", ".join(BOT_NAMES)),
    }

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("help_text", "A level: " + ", ".join(
            f"{level} ({bot})" for level, bot in BOT_LEVELS.items()) + "; or a bot's name")
        super().__init__(choices=BOT_CHOICES, **kwargs)

    def to_internal_value(self, data: Any) -> str:
        return bot_for(super().to_internal_value(data))

MOVE_TYPES = ("open", "play", "comet", "keep_comet", "announce", "offer", "give_back", "return")


class MoveSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=MOVE_TYPES)
    card = serializers.CharField(required=False, allow_null=True, max_length=2)
    suit = serializers.CharField(required=False, allow_null=True, max_length=1)

    def validate_card(self, value: str | None) -> str | None:
        if value is not None and value not in CANONICAL_INDEX:
            raise serializers.ValidationError(
                _("%(value)r is not a card: write rank + suit, e.g. 'TD' or '9D'")
                % {"value": value})
        return value

    def validate_suit(self, value: str | None) -> str | None:
        if value is not None and value not in SUITS:
            raise serializers.ValidationError(
                _("%(value)r is not a suit: one of C, D, H, S") % {"value": value})
        return value


#: Every whole-number option and its bounds: the service's (games.services), checked here so
#: that a body is refused naming the option before anything reaches the service, and no
#: float or huge number ever reaches an integer column: (lowest, highest, may be null).
INT_OPTIONS: dict[str, tuple[int, int, bool]] = {
    **{name: (0, top, name == "max_turns") for name, top in OPTION_MAX.items()},
    **{name: (1, MAX_HANDS, True) for name in LENGTH_OPTION.values()},
}


class OptionsField(serializers.DictField):
    """A partie's or a soirée's game options: an object, each whole-number option within its
    bounds (the game's own rules, the option names, the rest, are the engine's)."""

    def to_internal_value(self, data: object) -> dict:
        value = super().to_internal_value(data)
        for name, item in value.items():
            if name not in INT_OPTIONS:
                continue
            low, high, nullable = INT_OPTIONS[name]
            if item is None and nullable:
                continue
            if (not isinstance(item, int) or isinstance(item, bool)
                    or not low <= item <= high):
                shown = repr(item) if isinstance(item, (int, float)) else type(item).__name__
                raise serializers.ValidationError(
                    (_("option %(name)r must be a whole number from %(low)s to %(high)s or "
                       "null, not %(shown)s") if nullable else
                     _("option %(name)r must be a whole number from %(low)s to %(high)s, not "
                       "%(shown)s")) % {"name": name, "low": low, "high": high, "shown": shown})
        return value


class MoveRequestSerializer(serializers.Serializer):
    command_id = serializers.UUIDField()
    seq = serializers.IntegerField(min_value=0, help_text="The hand's seq this move answers")
    move = MoveSerializer()


class PartieCreateSerializer(serializers.Serializer):
    """A casual table: each person named is invited, and sits only once he accepts."""

    game = serializers.ChoiceField(choices=Game.choices)
    players = serializers.ListField(
        child=serializers.CharField(max_length=150), allow_empty=True, max_length=12,
        help_text="Usernames invited, seated first in this order; name yourself to sit")
    bots = serializers.ListField(child=BotField(), required=False,
                                 default=list)
    options = OptionsField(required=False, default=dict)
    buy_in = serializers.IntegerField(
        min_value=0, max_value=MAX_BUY_IN, default=0,
        help_text="The chips each person must hold in his casual wallet to sit (at most the "
                  "club's limit, ACADEMIE_CASUAL_MAX_BUY_IN)")
    move_timeout = serializers.FloatField(min_value=0.1, max_value=3600, default=30)
    forced_move_delay = serializers.FloatField(min_value=0, max_value=60, default=1)
    comet_window = serializers.FloatField(min_value=0, max_value=15, default=2)
    pause_between_hands = serializers.FloatField(min_value=0, max_value=3600, default=5)
    share_window = serializers.FloatField(
        min_value=0, max_value=30, required=False, default=None, allow_null=True,
        help_text="Seconds a new hand waits for the people's shares of randomness (HAND_RECORD.md "
                  "versions 2 and 3), at least 1 at a table with a person; the club's setting "
                  "when left out")
    table_label = serializers.CharField(max_length=64, default="free table")

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        window = attrs.get("share_window")
        if attrs.get("players") and window is not None and window < MIN_SHARE_WINDOW:
            raise serializers.ValidationError({"share_window": [_(
                "at a table with a person, the share window is at least %(min)s second: each "
                "person must have time to send a share of randomness") % {
                    "min": MIN_SHARE_WINDOW}]})
        return attrs

    def validate_players(self, value: list[str]) -> list:
        users = get_user_model().objects.filter(username__in=value)
        by_name = {u.username: u for u in users}
        missing = [name for name in value if name not in by_name]
        if missing:
            raise serializers.ValidationError(
                _("no such player: %(names)s") % {"names": ", ".join(missing)})
        return [by_name[name] for name in value]


#: Seconds a table with a person waits at least for the shares (HAND_RECORD.md, version 3).
MIN_SHARE_WINDOW = 1


class SeatSerializer(serializers.ModelSerializer):
    player = serializers.CharField(source="player.username")

    class Meta:
        model = Seat
        fields = ["number", "player", "bot", "away"]


class InvitationSerializer(serializers.ModelSerializer):
    player = serializers.CharField(source="player.username", allow_null=True, default=None)

    class Meta:
        model = Invitation
        fields = ["number", "player", "bot", "answer", "answered_at"]


class InvitationAnswerSerializer(serializers.Serializer):
    accept = serializers.BooleanField(help_text="true to take the seat, false to decline it "
                                                "(a decline cancels the table)")


class AwaySerializer(serializers.Serializer):
    away = serializers.BooleanField(help_text="true: you leave the table; false: you are back")
    how = serializers.ChoiceField(
        choices=LEAVING, default=LEAVE_TIMEOUT,
        help_text="leaving: pause, the table waits until you are back (a casual table only); "
                  "timeout, the time-out rule plays your decisions at once (the default)",
        error_messages={"invalid_choice": gettext_lazy(
            "unknown way to leave '{input}': choose pause (the table waits for you, at a "
            "casual table) or timeout (the time-out rule plays for you)")})


class CometOrderSerializer(serializers.Serializer):
    partie = serializers.UUIDField(read_only=True)
    order = serializers.ChoiceField(
        choices=Seat.CometOrder.choices,
        help_text="blocked: when a run you hold a card of is blocked; out: when it is your last "
                  "card; first: at the first chance; never; ask: your click, within the "
                  "table's Comet window")
    window = serializers.FloatField(read_only=True, help_text="the table's Comet window, s")


class PauserSerializer(serializers.Serializer):
    seat = serializers.IntegerField(source="number")
    player = serializers.CharField(source="player.username")


class AbsenceSerializer(serializers.Serializer):
    """The requester's absence from the partie (``context["user"]``), and who the table waits
    for: read from the partie and its seats with their players."""

    partie = serializers.UUIDField(source="pk")
    away = serializers.SerializerMethodField(help_text="you have left the table")
    how = serializers.SerializerMethodField(
        help_text="how you left: pause or timeout; null while you are at the table")
    may_pause = serializers.SerializerMethodField(
        help_text="whether this table may be paused (a casual table)")
    paused = serializers.SerializerMethodField(help_text="the table waits: nothing is played")
    paused_at = serializers.DateTimeField(allow_null=True,
                                          help_text="since when it waits (null: it plays)")
    paused_by = serializers.SerializerMethodField(help_text="the players it waits for")

    def _mine(self, partie: Partie) -> Seat | None:
        user = self.context["user"]
        return next((s for s in partie.seats.all() if s.player_id == user.pk), None)

    def get_away(self, partie: Partie) -> bool:
        seat = self._mine(partie)
        return bool(seat and seat.away)

    @extend_schema_field(serializers.ChoiceField(choices=LEAVING, allow_null=True))
    def get_how(self, partie: Partie) -> str | None:
        seat = self._mine(partie)
        if seat is None or not seat.away:
            return None
        return LEAVE_PAUSE if seat.pauses else LEAVE_TIMEOUT

    def get_may_pause(self, partie: Partie) -> bool:
        return pause_allowed(partie)

    def get_paused(self, partie: Partie) -> bool:
        return partie.paused_at is not None and partie.status == Partie.Status.PLAYING

    @extend_schema_field(PauserSerializer(many=True))
    def get_paused_by(self, partie: Partie) -> list[dict[str, Any]]:
        if not self.get_paused(partie):
            return []
        return list(PauserSerializer([s for s in partie.seats.all() if s.pauses],
                                     many=True).data)


class HandSummarySerializer(serializers.ModelSerializer):
    class Meta:
        model = Hand
        fields = ["id", "number", "dealer", "status", "commitment", "last_seq", "deadline",
                  "started_at", "ended_at"]


class PartieSerializer(serializers.ModelSerializer):
    seats = SeatSerializer(many=True, read_only=True)
    invitations = InvitationSerializer(many=True, read_only=True)
    hands = HandSummarySerializer(many=True, read_only=True)
    created_by = serializers.CharField(source="created_by.username", allow_null=True,
                                       default=None)

    class Meta:
        model = Partie
        fields = ["id", "game", "options", "club_key", "table_label", "status", "buy_in",
                  "created_by", "invitations", "seats", "hands", "created_at", "ended_at"]


class PartieListSerializer(serializers.ModelSerializer):
    """A partie in a list: its seats and how many hands it has dealt, not the hands (the
    detail has them): a list is a page of parties, whatever their length."""

    seats = SeatSerializer(many=True, read_only=True)
    invitations = InvitationSerializer(many=True, read_only=True)
    hands_dealt = serializers.IntegerField(read_only=True)
    created_by = serializers.CharField(source="created_by.username", allow_null=True,
                                       default=None)

    class Meta:
        model = Partie
        fields = ["id", "game", "options", "club_key", "table_label", "status", "buy_in",
                  "created_by", "invitations", "seats", "hands_dealt", "created_at",
                  "ended_at"]


# -- Answers of the hand endpoints, for the schema: the views answer plain dicts
# (games.selectors), and tests/test_api_schema.py checks every answer against these shapes.


class NextHandSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    number = serializers.IntegerField()


class ReceiptSerializer(serializers.Serializer):
    """The service's Ed25519 signature on what it showed (HAND_RECORD.md, version 3)."""

    hand = serializers.CharField()
    seq = serializers.IntegerField()
    hash = serializers.CharField(help_text="the hash of the hand's event at seq")
    key = serializers.CharField(help_text="the signing key's id (GET /api/keys)")
    sig = serializers.CharField(help_text="Ed25519 over canonical([\"academie.checkpoint/1\", "
                                          "hand, seq, hash]), 128 hex digits")


class HandViewSerializer(serializers.Serializer):
    """A hand as the requester may see it (``selectors.view_of``): his seat's view, or a
    spectator's; the seed only once the hand is over."""

    format = serializers.IntegerField(help_text="the hand's HAND_RECORD.md version (1, 2 or 3)")
    receipt = ReceiptSerializer(allow_null=True, help_text="the receipt of seq (version 3)")
    digest = serializers.CharField(allow_null=True, help_text="once over: the record's digest")
    hand = serializers.UUIDField()
    partie = serializers.UUIDField()
    game = serializers.ChoiceField(choices=Game.choices)
    number = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Hand.Status.choices)
    seq = serializers.IntegerField(help_text="The seq of the hand's last event: a move answers it")
    your_seat = serializers.IntegerField(allow_null=True, help_text="null: a spectator")
    to_act = serializers.ListField(child=serializers.IntegerField(),
                                   help_text="the seats the hand waits for")
    legal_moves = MoveSerializer(many=True, help_text="the requester's legal moves now")
    deadline = serializers.DateTimeField(allow_null=True)
    deadline_kind = serializers.CharField(allow_null=True)
    commitment = serializers.CharField(help_text="SHA-256 of the seed, published at the deal")
    seed = serializers.CharField(allow_null=True, help_text="revealed once the hand is over")
    next_hand = NextHandSerializer(allow_null=True,
                                   help_text="once over: the partie's next hand, when dealt")
    view = serializers.DictField(help_text="the game's view of the hand for this seat: the "
                                           "requester's cards, counts of the others', the table")


class CommandAnswerSerializer(serializers.Serializer):
    hand = serializers.UUIDField()
    seq = serializers.IntegerField(help_text="the hand's seq after the command")
    applied_from_seq = serializers.IntegerField(help_text="the seq of its first event")
    next_hand = NextHandSerializer(allow_null=True,
                                   help_text="the hand it dealt, when it ended this one")


class MoveAnswerSerializer(HandViewSerializer):
    command = CommandAnswerSerializer(help_text="the command's first answer (a retry gets it "
                                                "again)")


class HandEventsSerializer(serializers.Serializer):
    hand = serializers.UUIDField()
    over = serializers.BooleanField()
    events = serializers.ListField(
        child=serializers.DictField(),
        help_text="HAND_RECORD.md's events (`seq`, `type`, `at`, `by`, and the type's fields), "
                  "redacted for the requester until the hand is over; a version-3 hand's with "
                  "`prev`, `hash` and the `seals` of its sealed fields")
    receipt = ReceiptSerializer(allow_null=True, help_text="the receipt of the last event "
                                                           "(version 3)")


class ShareSerializer(serializers.Serializer):
    share = serializers.CharField(
        max_length=64, trim_whitespace=False,
        help_text="32 random bytes of the seated person's browser, as 64 lowercase hex digits "
                  "(HAND_RECORD.md, version 2): once per hand, before its deal")


class ShareAnswerSerializer(serializers.Serializer):
    hand = serializers.UUIDField()
    seat = serializers.IntegerField()
    seq = serializers.IntegerField(help_text="The hand's seq after the share (and the deal)")
    dealt = serializers.BooleanField(help_text="Whether this share completed the people's "
                                               "shares and the hand was dealt with it")
    receipt = ReceiptSerializer(allow_null=True, help_text="the receipt of seq (version 3)")


class HandVerificationSerializer(serializers.Serializer):
    ok = serializers.BooleanField()
    digest = serializers.CharField(allow_null=True)
    discrepancy = serializers.CharField(allow_null=True)


class SigningKeySerializer(serializers.Serializer):
    id = serializers.CharField(help_text="the first 16 hex digits of sha256 of the public key")
    public = serializers.CharField(help_text="the raw Ed25519 public key, 64 hex digits")
    since = serializers.CharField()
    until = serializers.CharField(allow_null=True, help_text="null: the current key")


class SigningKeysSerializer(serializers.Serializer):
    keys = SigningKeySerializer(many=True)
