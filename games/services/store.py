"""The event store: a hand's stream, its state (a replay of the stream) and appends to its
hash chain (HAND_RECORD.md).

The events are the truth and the only state: a hand's state is its events replayed through the
rules engine, which takes well under a millisecond for a whole hand. The hand row keeps the
chain's last hash (``Hand.last_hash``) so that an append needs no read of the last event.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError
from django.utils.translation import gettext as _

from games.engine.base import Event
from games.engine.deal import deal_from_seed
from games.engine.protocol import Game
from games.engine.record import iso_z, seal
from games.engine.registry import get_game
from games.engine.seals import SEALS, seals_of
from games.engine.shares import SHARE, SharedDeal, shared_deck
from games.errors import StaleSequence
from games.models import Hand, HandEvent

COMMAND_REUSED = "this command_id was already used for another move"


@dataclass(frozen=True)
class Loaded:
    """A hand's state at ``hand.last_seq``, the hash the next event chains to, and the events
    it was replayed from (record form), read once per command."""

    game: Game
    state: Any
    last_hash: str
    stream: tuple[dict[str, Any], ...] = ()


def record_event(row: HandEvent) -> dict[str, Any]:
    """The record form of a stored event (HAND_RECORD.md)."""
    out: dict[str, Any] = {"seq": row.seq, "type": row.type, "at": row.at, "by": row.by}
    out.update(row.payload)
    out["prev"] = row.prev
    out["hash"] = row.hash
    return out


def events(hand: Hand) -> list[dict[str, Any]]:
    """The hand's stream in record form, in order."""
    return [record_event(r) for r in HandEvent.objects.filter(hand=hand).order_by("seq")]


def with_seals(hand: Hand, stream: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A version-3 hand's events with the seals of their sealed fields (``seals``), as they
    are shown during play; other versions' as they are."""
    if hand.record_format != 3:
        return stream
    seed = hand.secret.seed
    out = []
    for event in stream:
        seals = seals_of(event, seed)
        out.append({**event, SEALS: seals} if seals else event)
    return out


def shared(hand: Hand) -> bool:
    """Whether the hand is dealt from the players' shares (versions 2 and 3)."""
    return hand.record_format >= 2


def hand_deck(hand: Hand, n_seats: int | None = None) -> list[str]:
    """The hand's deck, dealt again from its seed (HAND_RECORD.md, the deal), and in versions 2
    and 3 from its seed and the shares of its stream (a dealt hand's)."""
    if shared(hand):
        shares = {int(p["seat"]): str(p["share"]) for p in HandEvent.objects.filter(
            hand=hand, type=SHARE).values_list("payload", flat=True)}
        return shared_deck(hand.record_format, hand.partie.game, hand.secret.seed, shares)
    n = hand.partie.seats.count() if n_seats is None else n_seats
    deck, _dealer = deal_from_seed(hand.partie.game, hand.secret.seed, n)
    return deck


def engine_of(hand: Hand) -> Game:
    """The engine that replays ``hand``: its game's, dealing at ``deal`` from the seed and the
    players' shares for a version-2 or version-3 hand."""
    game = get_game(hand.partie.game)
    if shared(hand):
        return SharedDeal(game, hand.secret.seed, version=hand.record_format)
    return game


def start(hand: Hand, n_seats: int | None = None) -> tuple[Game, Any]:
    """The hand's engine and its state before the first event."""
    game = engine_of(hand)
    if shared(hand):
        return game, game.initial_state(())
    return game, game.initial_state(hand_deck(hand, n_seats))


def load(hand: Hand, n_seats: int | None = None) -> Loaded:
    """The hand's state at ``last_seq``: every stored event replayed through its engine."""
    game = engine_of(hand)
    deck = () if shared(hand) else hand_deck(hand, n_seats)
    stream = events(hand)
    state = game.replay(deck, [Event.from_dict(e) for e in stream])
    return Loaded(game=game, state=state, last_hash=hand.last_hash or hand.commitment,
                  stream=tuple(stream))


def append(
    hand: Hand,
    new: Sequence[Event],
    *,
    prev_hash: str,
    actor: AbstractBaseUser | None = None,
    command_id: Any = None,
    at: datetime,
) -> list[dict[str, Any]]:
    """Append ``new`` after ``hand.last_seq`` and return them sealed (their record form).

    The caller holds the hand's row lock; the (hand, seq) unique constraint backs it, so a
    writer that got past the lock anyway (a bug, a hand edited by hand) loses with
    StaleSequence, and its whole command rolls back. ``hand.last_seq`` and ``hand.last_hash``
    move on; the caller saves the hand row."""
    stamp = iso_z(at)
    sealed = []
    link = prev_hash
    # A version-3 event's hash is over its sealed form, keyed by the hand's seed.
    seed = hand.secret.seed if hand.record_format == 3 else None
    for seq, event in enumerate(new, start=hand.last_seq + 1):
        s = seal(event, seq=seq, at=stamp, prev=link, seed=seed)
        link = s["hash"]
        sealed.append(s)
    actor_id = actor.pk if actor is not None else None
    rows = [
        HandEvent(hand=hand, seq=s["seq"], type=s["type"], payload=event.data, by=s["by"],
                  actor_id=actor_id if event.by != "service" else None,
                  command_id=command_id, at=stamp, prev=s["prev"], hash=s["hash"])
        for s, event in zip(sealed, new, strict=True)
    ]
    try:
        HandEvent.objects.bulk_create(rows)
    except IntegrityError:  # the caller's transaction is rolled back with the error
        raise StaleSequence(_("hand %(hand)s has moved past seq %(seq)s; reload the hand")
                            % {"hand": hand.pk, "seq": hand.last_seq}) from None
    hand.last_seq += len(new)
    hand.last_hash = link
    return sealed


def hand_ref(hand_id: Any, number: int) -> dict[str, Any]:
    """How an answer names another hand (``next_hand``): its id and its number."""
    return {"id": str(hand_id), "number": number}
