"""What both games share: moves, events, rule errors, canonical JSON and the hash chain."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

BY_PLAYER = "player"
BY_FORCED = "forced"
BY_TIMEOUT = "timeout"
BY_SERVICE = "service"
MOVE_BYS = (BY_PLAYER, BY_FORCED, BY_TIMEOUT)

#: Fields of a record event that are not the fields of its type.
ENVELOPE = ("seq", "type", "at", "by", "prev", "hash")


class RuleError(Exception):
    """A move the rules forbid. ``rule`` names the clause; the message speaks to the player."""

    rule = "rules"

    def __init__(self, message: str, *, rule: str | None = None) -> None:
        super().__init__(message)
        if rule is not None:
            self.rule = rule

    @property
    def message(self) -> str:
        return str(self.args[0])


class NotYourTurn(RuleError):
    rule = "turn"


class IllegalMove(RuleError):
    rule = "move"


class HandOver(RuleError):
    rule = "hand_over"


@dataclass(frozen=True, slots=True)
class Move:
    """A player's decision. ``type`` is the event type it becomes (``open``, ``play``, …)."""

    type: str
    card: str | None = None
    suit: str | None = None

    def to_dict(self) -> dict[str, str]:
        out = {"type": self.type}
        if self.card is not None:
            out["card"] = self.card
        if self.suit is not None:
            out["suit"] = self.suit
        return out

    def __str__(self) -> str:
        return " ".join(x for x in (self.type, self.suit, self.card) if x)


@dataclass(frozen=True, slots=True)
class Event:
    """One event of a hand: its type, who made it, and the fields of its type (JSON values)."""

    type: str
    by: str
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "by": self.by, **self.data}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Event:
        data = {k: v for k, v in d.items() if k not in ENVELOPE}
        return cls(type=d["type"], by=d["by"], data=data)

    def __hash__(self) -> int:  # data is a dict: hash what identifies the event
        return hash((self.type, self.by, canonical_json(self.data)))


S = TypeVar("S")
#: A game's state transition for one event type: ``(state, event.data) -> new state``.
Handlers = Mapping[str, Callable[[S, dict[str, Any]], S]]


def apply_event(handlers: Handlers[S], state: S, event: Event, *, game: str) -> S:
    """One event through its type's handler (both engines' ``apply``)."""
    try:
        handler = handlers[event.type]
    except KeyError:
        raise ValueError(f"{game} has no {event.type!r} event") from None
    return handler(state, event.data)


def fold(handlers: Handlers[S], state: S, events: Iterable[Event], *, game: str) -> S:
    """Every event through its handler in turn (both engines' ``replay``): the replay's inner
    loop, one dictionary lookup and one call per event."""
    event = None
    try:
        for event in events:
            state = handlers[event.type](state, event.data)
    except KeyError:
        if event is not None and event.type not in handlers:
            raise ValueError(f"{game} has no {event.type!r} event") from None
        raise
    return state


def canonical_json(obj: Any) -> bytes:
    """HAND_RECORD.md's canonical JSON: sorted keys, no spaces, raw UTF-8."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def event_hash(event: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of the event without its ``hash`` field."""
    body = {k: v for k, v in event.items() if k != "hash"}
    return hashlib.sha256(canonical_json(body)).hexdigest()
