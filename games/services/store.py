"""The event store: load a hand's stream, replay it, append new events to the hash chain."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError
from django.utils import timezone

from games.engine.base import Event
from games.engine.deal import deal_from_seed
from games.engine.protocol import Game
from games.engine.record import iso_z, seal
from games.engine.registry import get_game
from games.errors import StaleSequence
from games.models import Hand, HandEvent


@dataclass(frozen=True)
class Loaded:
    """A hand's stream and the state its replay gives."""

    game: Game
    deck: list[str]
    events: list[dict[str, Any]]
    state: Any

    @property
    def last_hash(self) -> str:
        return str(self.events[-1]["hash"])


def record_event(row: HandEvent) -> dict[str, Any]:
    """The record form of a stored event (HAND_RECORD.md)."""
    out: dict[str, Any] = {"seq": row.seq, "type": row.type, "at": row.at, "by": row.by}
    out.update(row.payload)
    out["prev"] = row.prev
    out["hash"] = row.hash
    return out


def hand_deck(hand: Hand) -> list[str]:
    deck, _ = deal_from_seed(hand.partie.game, hand.secret.seed, hand.partie.seats.count())
    return deck


def load(hand: Hand) -> Loaded:
    game = get_game(hand.partie.game)
    rows = HandEvent.objects.filter(hand=hand).order_by("seq")
    events = [record_event(r) for r in rows]
    deck = hand_deck(hand)
    state = game.replay(deck, [Event.from_dict(e) for e in events])
    return Loaded(game=game, deck=deck, events=events, state=state)


def append(
    hand: Hand,
    new: Sequence[Event],
    *,
    prev_hash: str,
    actor: AbstractBaseUser | None = None,
    command_id: Any = None,
    at: datetime | None = None,
) -> list[dict[str, Any]]:
    """Append events after ``hand.last_seq``; the (hand, seq) unique constraint is the lock."""
    stamp = iso_z(at or timezone.now())
    sealed = []
    link = prev_hash
    for i, event in enumerate(new, start=hand.last_seq + 1):
        s = seal(event, seq=i, at=stamp, prev=link)
        link = s["hash"]
        sealed.append(s)
    rows = [
        HandEvent(
            hand=hand, seq=s["seq"], type=s["type"], payload=event.data, by=s["by"],
            actor=actor if event.by != "service" else None, command_id=command_id,
            at=stamp, prev=s["prev"], hash=s["hash"],
        )
        for s, event in zip(sealed, new, strict=True)
    ]
    try:
        HandEvent.objects.bulk_create(rows)
    except IntegrityError:
        raise StaleSequence("another move was recorded first; reload the hand") from None
    hand.last_seq += len(new)
    return sealed
