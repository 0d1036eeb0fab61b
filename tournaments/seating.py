"""The seating draw: balanced tables from a seed recorded with the soirée.

Table sizes (ARCHITECTURE.md): Comet 2–6, best 3–4; Ma commère 4–12, best 7–8. Among the
numbers of tables whose balanced sizes fit the game, the draw takes the one whose tables are
nearest the best size (then the one with fewer tables); bots, where
the soirée allows them, fill tables up to the lower best size.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from django.utils.translation import gettext as _

T = TypeVar("T")

SIZES = {"comet": (2, 6, 3, 4), "commere": (4, 12, 7, 8)}  # min, max, best low, best high


class SeatingError(ValueError):
    pass


@dataclass(frozen=True)
class TablePlan:
    players: tuple[object, ...]
    bots: int


def balanced(n: int, k: int) -> list[int]:
    base, extra = divmod(n, k)
    return [base + 1] * extra + [base] * (k - extra)


def table_sizes(game: str, n: int) -> list[int]:
    lo, hi, best_lo, best_hi = SIZES[game]
    best: tuple[int, int, list[int]] | None = None
    for k in range(1, n + 1):
        sizes = balanced(n, k)
        if sizes[-1] < lo or sizes[0] > hi:
            continue
        distance = sum(max(best_lo - s, 0, s - best_hi) for s in sizes)
        key = (distance, k)
        if best is None or key < best[:2]:
            best = (distance, k, sizes)
    if best is None:
        raise SeatingError(_("%(n)s players cannot be seated at tables of %(lo)s to %(hi)s.")
                           % {"n": n, "lo": lo, "hi": hi})
    return best[2]


def draw(
    game: str, players: Sequence[T], *, seed: str, bots_allowed: bool, min_tables: int = 1
) -> list[TablePlan]:
    """Seat ``players`` (in a fixed order, e.g. by check-in) at tables, from ``seed``; with
    bots allowed, at least ``min_tables`` tables (the extra ones all bots)."""
    lo, _hi, best_lo, _best_hi = SIZES[game]
    rng = random.Random(hashlib.sha256(seed.encode()).digest())
    order = list(players)
    rng.shuffle(order)
    n = len(order)
    if n == 0 and not bots_allowed:
        raise SeatingError(_("Nobody has checked in."))
    if n < lo and not bots_allowed:
        raise SeatingError(_("%(n)s player(s) checked in: the game needs at least %(lo)s, and "
                             "this soirée does not allow bots.") % {"n": n, "lo": lo})
    sizes = table_sizes(game, n) if n >= lo else [n]
    if bots_allowed and len(sizes) < min_tables:
        sizes += [0] * (min_tables - len(sizes))
    plans = []
    start = 0
    for size in sizes:
        seated = tuple(order[start:start + size])
        start += size
        bots = max(best_lo - size, 0) if bots_allowed else 0
        plans.append(TablePlan(players=seated, bots=bots))
    return plans


# -- Between parties: who sits where next ----------------------------------------------------


@dataclass(frozen=True)
class Change:
    """A seat change the planner is given (asked, not yet carried out) or makes."""

    kind: str  # "move", "join", "replace", "remove" (tournaments.models.Announcement.Kind)
    player: Any
    from_table: int | None = None
    to_table: int | None = None
    id: int | None = None  # the asked change's announcement; None for one the planner makes
    reason: str = "balance"


@dataclass
class NextSeating:
    #: The tables to start a partie now: their people, in seat order, and their bots.
    start: dict[int, tuple[list[Any], int]] = field(default_factory=dict)
    #: The asked changes carried out by these starts (their ids).
    done: list[int] = field(default_factory=list)
    #: The changes the planner makes: carried out now (True) or asked of a table in play.
    made: list[tuple[Change, bool]] = field(default_factory=list)
    #: The tables in play to stop after their hand in play, for a change that waits for them.
    stop: set[int] = field(default_factory=set)


def next_seating(game: str, *, ended: dict[int, list[Any]], playing: dict[int, list[Any]],
                 pool: Sequence[Any], changes: Sequence[Change], bots_allowed: bool,
                 bot_tables: set[int] = frozenset()) -> NextSeating:  # type: ignore[assignment]
    """The next parties of the tables whose partie is over (``ended``: each one's people, still
    there), given the tables in play (``playing``), the people waiting for a seat (``pool``:
    late arrivals, people of a table that closed) and the seat changes asked.

    The rules, between hands only: people keep their table; asked changes are carried out when
    the tables they concern are between parties; the people waiting fill the smallest tables;
    tables never differ by more than one person (a table in play gives one up after its hand
    in play, the table that takes him waiting meanwhile); a table that can no longer be played
    closes and its people go to the others; bots, where allowed, fill tables up to the lower
    best size (a table of bots only plays on).
    """
    lo, hi, best_lo, _best_hi = SIZES[game]
    out = NextSeating()
    seated = {p for people in playing.values() for p in people}
    held = {c.player for c in changes}  # people an asked change places, not the pool
    people = {n: [p for p in ps if p not in held] for n, ps in ended.items()}
    extra_bots: dict[int, int] = {n: 0 for n in ended}
    waits: set[int] = set()  # ended tables waiting for a person still at a table in play
    replaced: list[Change] = []
    for c in changes:
        if c.kind in ("replace", "remove"):
            if c.from_table in ended and c.id is not None:
                if c.kind == "replace":
                    extra_bots[c.from_table] += 1  # type: ignore[index]
                    replaced.append(c)  # done once its table starts or closes
                else:
                    out.done.append(c.id)
        elif c.to_table in ended:
            if c.player in seated:
                waits.add(c.to_table)
            else:
                people[c.to_table].append(c.player)
                if c.id is not None:
                    out.done.append(c.id)
    waiting = [p for p in pool if p not in held and p not in seated]
    open_ = [n for n in sorted(ended) if n not in waits]

    def bots_for(n: int, count: int) -> int:
        if n in bot_tables and count == 0:
            return best_lo if bots_allowed else 0
        return extra_bots.get(n, 0) + (max(best_lo - count - extra_bots.get(n, 0), 0)
                                       if bots_allowed else 0)

    def playable(n: int) -> bool:
        count = len(people[n])
        if count == 0 and n not in bot_tables:
            return False
        return count + bots_for(n, count) >= lo

    # The people waiting take the smallest open tables; a table that cannot be played closes
    # and its people wait with them, until every open table can be played.
    while True:
        for p in list(waiting):
            roomy = [n for n in open_ if len(people[n]) < hi]
            if not roomy:
                break
            n = min(roomy, key=lambda m: (not people[m], len(people[m]), m))
            people[n].append(p)
            waiting.remove(p)
            out.made.append((Change("join", p, None, n, reason="arrival"), True))
        closing = [n for n in open_ if not playable(n)]
        if not closing:
            break
        n = closing[0]
        open_.remove(n)
        waiting = people[n] + waiting
        out.made = [(c, now) for c, now in out.made if not (c.to_table == n and now)]
        people[n] = []
    # Balance the open tables of people (a table of bots only is not one) among themselves:
    # the last seated of the largest moves.
    peopled = [n for n in open_ if people[n]]
    while peopled:
        big = max(peopled, key=lambda m: (len(people[m]), -m))
        small = min(peopled, key=lambda m: (len(people[m]), m))
        if len(people[big]) - len(people[small]) <= 1:
            break
        p = people[big].pop()
        people[small].append(p)
        out.made.append((Change("move", p, big, small), True))
    # A table in play two or more larger than the smallest open one gives up one person after
    # its hand in play; the open one waits for him.
    if peopled:
        small = min(peopled, key=lambda m: (len(people[m]), m))
        givers = [n for n in sorted(playing) if len(playing[n]) - len(people[small]) > 1
                  and not any(p in held for p in playing[n])]
        if givers:
            big = max(givers, key=lambda m: (len(playing[m]), -m))
            out.made.append((Change("move", playing[big][-1], big, small), False))
            out.stop.add(big)
            open_.remove(small)
            waits.add(small)
    # Who is still waiting takes a seat at the smallest table in play with room, after its hand.
    for p in waiting:
        roomy = [n for n in sorted(playing) if len(playing[n]) < hi]
        if not roomy:
            break
        n = min(roomy, key=lambda m: (len(playing[m]), m))
        playing = {**playing, n: [*playing[n], p]}
        out.made.append((Change("join", p, None, n, reason="arrival"), False))
        out.stop.add(n)
    for n in open_:
        if playable(n):
            out.start[n] = (people[n], bots_for(n, len(people[n])))
    # A replacement waits with its table: the bot takes the seat when the table starts.
    out.done = sorted(out.done + [c.id for c in replaced  # type: ignore[misc]
                                  if c.from_table not in waits])
    return out
