"""The hands this process wrote last, kept for their next move (moves._in_one_statement).

A move played in one statement reads its hand, its partie and its seats, then writes. When the
same process wrote that hand's last event, it already holds all of it: the hand row as written,
the seats, and the state at ``last_seq``. Kept here, the next move on the hand skips its read,
as an event-sourced application keeps its aggregates in memory.

Nothing is trusted that the write would not check. An entry is used only for the move that
answers its ``last_seq``, and the move's statement updates the hand row only if it is still at
that seq and being played, then inserts event ``last_seq + 1`` (store.save): if any other
process or command appended to the hand since (a move, a time-out, a forced move), or the row
was moved to another seq or out of play in any other way, the statement fails and writes
nothing, and the move is played again in a transaction after a fresh, locked read. What else
the move reads does not change while a hand is played: a partie closes only between hands and
its seats are never reassigned. (The row's other columns are the command's to write: a value
changed there by hand, without an event, is overwritten, as the locked path would.)

A hand this process only read is offered too (``offer``: the hand's ``GET``, which reads the
same row, seats and snapshot): the next move on it, if this process serves it, then skips its
read as well. It is checked the same way, and never replaces an entry at a later seq.

A partie has one hand at play at a time, so the map holds one entry per partie: keeping or
offering a partie's next hand drops its last one. A hand that another process ended would
otherwise stay here, never asked for again, until 1,024 later hands pushed it out; the
full map's objects (about 90 per hand) made every full garbage collection of a busy worker
slower (bench/api_bench.md, eighth round).

An entry is taken out while a move uses it (``take``), and put back only after that move's
statement has run (``keep``), so two threads never share one; a move that fails drops it. The
hand and its partie are copied when kept: the command's answer still holds its own.
"""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models.base import ModelState

from games.models import Hand, Seat

from .store import Loaded

#: How many hands one process keeps: more than the tables a club plays at once. An entry (the
#: hand's row with its snapshot, its partie, seats and state) took about 6 KB, measured.
SIZE = 1024


@dataclass(frozen=True)
class Recent:
    hand: Hand
    seats: tuple[Seat, ...]
    loaded: Loaded


class RecentHands:
    """A bounded map of hand id to the hand as this process last wrote it (least recently kept
    dropped first), safe to use from several threads."""

    def __init__(self, size: int = SIZE) -> None:
        self.size = size
        self._entries: OrderedDict[uuid.UUID, Recent] = OrderedDict()
        self._of_partie: dict[Any, uuid.UUID] = {}  # partie id -> the id of its entry's hand
        self._lock = threading.Lock()

    def take(self, hand_id: Any, seq: int) -> Recent | None:
        """The hand kept for a move that answers ``seq``, taken out; ``None`` if none is kept
        or it is at another seq (that entry is dropped: the hand moved on elsewhere)."""
        key = _key(hand_id)
        if key is None:
            return None
        with self._lock:
            found = self._pop(key)
        return found if found is not None and found.hand.last_seq == seq else None

    def keep(self, hand: Hand, seats: Sequence[Seat], loaded: Loaded) -> None:
        """Keep ``hand`` as just written (its row committed), at play: a hand that is over has
        no next move."""
        entry = self._entry(hand, seats, loaded)
        if entry is None:
            return
        with self._lock:
            self._store(hand.pk, entry)

    def offer(self, hand: Hand, seats: Sequence[Seat], loaded: Loaded) -> None:
        """Keep ``hand`` as just read (committed, at play) unless this process already holds
        it at this seq or a later one: a read may be older than what a move here has written
        since it began."""
        entry = self._entry(hand, seats, loaded)
        if entry is None:
            return
        with self._lock:
            held = self._entries.get(hand.pk)
            if held is None or held.hand.last_seq < hand.last_seq:
                self._store(hand.pk, entry)

    def _entry(self, hand: Hand, seats: Sequence[Seat], loaded: Loaded) -> Recent | None:
        """The entry for ``hand``, copied; ``None`` if nothing is kept (a hand that is over
        has no next move, and a size of 0 keeps nothing)."""
        if self.size <= 0 or hand.status != Hand.Status.PLAYING:
            return None
        return Recent(_copy(hand), tuple(seats), loaded)

    def _store(self, key: uuid.UUID, entry: Recent) -> None:
        partie_id = entry.hand.partie_id
        other = self._of_partie.get(partie_id)
        if other is not None and other != key:
            held = self._entries.get(other)
            if held is not None and (held.hand.number or 0) > (entry.hand.number or 0):
                return  # an earlier hand of the partie, read before its next was dealt
            self._pop(other)
        self._entries[key] = entry
        self._entries.move_to_end(key)
        self._of_partie[partie_id] = key
        while len(self._entries) > self.size:
            self._pop(next(iter(self._entries)))

    def _pop(self, key: uuid.UUID) -> Recent | None:
        found = self._entries.pop(key, None)
        if found is not None and self._of_partie.get(found.hand.partie_id) == key:
            del self._of_partie[found.hand.partie_id]
        return found

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._of_partie.clear()

    def __len__(self) -> int:
        return len(self._entries)


def _copy(hand: Hand) -> Hand:
    """A copy of the hand and of its partie, their values shared (the values a command sets
    are replaced, never changed in place). ``copy.copy`` of a model instance goes through its
    pickling, which looks for memoryviews in every field: a fifth of a kept move's CPU."""
    partie = _shallow(hand.partie)
    kept = _shallow(hand)
    kept._state.fields_cache["partie"] = partie
    return kept


def _shallow(instance: Any) -> Any:
    copied = instance.__class__.__new__(instance.__class__)
    copied.__dict__.update(instance.__dict__)
    copied._state = ModelState()
    copied._state.db = instance._state.db
    copied._state.adding = instance._state.adding
    copied._state.fields_cache = dict(instance._state.fields_cache)
    return copied


def _key(hand_id: Any) -> uuid.UUID | None:
    if isinstance(hand_id, uuid.UUID):
        return hand_id
    try:
        return uuid.UUID(str(hand_id))
    except ValueError:
        return None


#: This process's hands.
hands = RecentHands()
