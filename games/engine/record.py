"""Hand records (HAND_RECORD.md): sealing events into the hash chain and exporting a record."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from .base import Event, event_hash
from .seals import FORMAT_V3, hash_v3, seals_of
from .shares import DEAL, FORMAT_V2, SHARE

FORMAT = "academie.hand/1"


def iso_z(at: datetime) -> str:
    """UTC, ISO-8601 with a final ``Z`` (microsecond precision)."""
    utc = at.astimezone(UTC)
    if utc.year >= 1000:  # isoformat's text then is strftime's, written several times faster
        return f"{utc.isoformat(timespec='microseconds')[:-6]}Z"
    return utc.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def seal(event: Event, *, seq: int, at: str, prev: str, seed: str | None = None
         ) -> dict[str, Any]:
    """The record form of an event: its fields, ``seq``, ``at``, ``prev`` and ``hash``. With
    the hand's ``seed`` (version 3) the hash is taken over the event's sealed form."""
    sealed: dict[str, Any] = {"seq": seq, "type": event.type, "at": at, "by": event.by}
    sealed.update(event.data)
    sealed["prev"] = prev
    sealed["hash"] = event_hash(sealed) if seed is None else hash_v3(sealed,
                                                                     seals_of(sealed, seed))
    return sealed


def seal_all(
    events: Sequence[Event], *, commitment: str, at: str | Sequence[str], start_seq: int = 1,
    prev: str | None = None, seed: str | None = None,
) -> list[dict[str, Any]]:
    """Chain events from ``prev`` (the commitment for a hand's first event); ``seed``: a
    version-3 chain."""
    out = []
    link = commitment if prev is None else prev
    for i, event in enumerate(events):
        stamp = at if isinstance(at, str) else at[i]
        sealed = seal(event, seq=start_seq + i, at=stamp, prev=link, seed=seed)
        link = sealed["hash"]
        out.append(sealed)
    return out


def build_record(
    *,
    game: str,
    hand: str,
    table: str,
    partie: str,
    number: int,
    seed: str,
    deck: Sequence[str],
    events: Sequence[Mapping[str, Any]],
    version: int | None = None,
) -> dict[str, Any]:
    """The exported document of a finished hand; its header repeats ``hand_started``. A hand
    dealt by a ``deal`` event is a version-2 record (version 3 when ``version`` says so), with
    its ``shares``."""
    started = events[0]
    over = events[-1]
    if started["type"] != "hand_started" or over["type"] != "hand_over":
        raise ValueError("a record needs a finished hand: hand_started … hand_over")
    v2 = any(e["type"] == DEAL for e in events)
    if version == 3 and not v2:
        raise ValueError("a version-3 hand is dealt by a deal event")
    record: dict[str, Any] = {
        "format": FORMAT_V3 if version == 3 else FORMAT_V2 if v2 else FORMAT,
        "game": game,
        "hand": hand,
        "table": table,
        "partie": partie,
        "number": number,
        "options": started["options"],
        "seats": started["seats"],
        "dealer": started["dealer"],
        "chips_before": started["chips_before"],
        "pot_before": started["pot_before"],
        "commitment": started["commitment"],
    }
    if "comet_payment_due" in started:
        record["comet_payment_due"] = started["comet_payment_due"]
    if v2:
        record["shares"] = sorted(({"seat": e["seat"], "share": e["share"]}
                                   for e in events if e["type"] == SHARE),
                                  key=lambda share: share["seat"])
    record.update(
        {
            "seed": seed,
            "deck": list(deck),
            "events": [dict(e) for e in events],
            "result": over["result"],
            "digest": over["hash"],
        }
    )
    return record
