"""Hidden information for the event list (RULES.md §3).

Until the hand is over a seat sees the cards played, the cards passed to or by him, and nothing
else: a card in an event he may not see is replaced by ``null``. In versions 1 and 2 the hash
chain is withheld too, since a hidden card could be found by hashing each of the 52
candidates. A version-3 event's hash is taken over its seals instead (HAND_RECORD.md), so it is
shown with its ``prev``, its ``hash`` and its ``seals``: every viewer can check the chain, and
the seals tell nothing of the values they stand for.

How another seat's move was made (``by``: chosen, forced or on time-out) is withheld too: a
forced move says that the seat had no other legal move, which in Comet says that he does not
hold the Comet. The mover sees his own, and everyone sees all once the hand is over.

It lives in the engine because the engine's own players need it too: the ISMCTS bot is handed
the history exactly as its seat's page would show it.
"""

from __future__ import annotations

from typing import Any

# Event types whose ``card`` is seen only by some seats, and which seats: Ma commère's offer and
# give-back are seen by the two players who exchange; a return goes face down under the talon;
# a draw is seen by the player who receives it.
PRIVATE_CARD_TYPES = {"offer", "give_back", "return", "draw"}
# A player's moves; the service's own events (``by: "service"``) hide nothing.
MOVE_BYS = {"player", "forced", "timeout"}


def _partner(event: dict[str, Any], n_seats: int, offers: dict[int, int]) -> set[int]:
    seat = event["seat"]
    if event["type"] == "offer":
        return {seat, (seat + 1) % n_seats}
    if event["type"] == "give_back":
        # The asked seat gives back to the offerer, the seat before him.
        return {seat, offers.get(seat, (seat - 1) % n_seats)}
    return {seat}


def redact_events(
    events: list[dict[str, Any]], *, viewer: int | None, n_seats: int, over: bool,
    chain: bool = False,
) -> list[dict[str, Any]]:
    """The events as ``viewer`` (a seat, or ``None`` for a spectator) may see them. With
    ``chain`` (a version-3 hand, whose events carry their ``seals``), the chain is kept."""
    if over:
        return [dict(e) for e in events]
    out = []
    offers: dict[int, int] = {}
    withheld = () if chain else ("hash", "prev")
    for event in events:
        shown = {k: v for k, v in event.items() if k not in withheld}
        if event["type"] == "offer":
            offers[(event["seat"] + 1) % n_seats] = event["seat"]
        if event["type"] in PRIVATE_CARD_TYPES and (
            viewer is None or viewer not in _partner(event, n_seats, offers)
        ):
            shown["card"] = None
        if shown.get("by") in MOVE_BYS and viewer != event.get("seat"):
            shown["by"] = None
        if event["type"] == "keep_comet" and viewer != event["seat"]:
            # Comet: keeping it at a blocked run would say who holds it; the view hides him
            # too (only the holder sees his seat in to_act then).
            shown["seat"] = None
        out.append(shown)
    return out
