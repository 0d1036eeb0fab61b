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
from dataclasses import dataclass
from typing import TypeVar

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
        raise SeatingError(f"{n} players cannot be seated at {game} tables of {lo} to {hi}")
    return best[2]


def draw(
    game: str, players: Sequence[T], *, seed: str, bots_allowed: bool, min_tables: int = 1
) -> list[TablePlan]:
    """Seat ``players`` (in a fixed order, e.g. by check-in) at tables, from ``seed``; with
    bots allowed, at least ``min_tables`` tables (the extra ones all bots)."""
    lo, _, best_lo, _ = SIZES[game]
    rng = random.Random(hashlib.sha256(seed.encode()).digest())
    order = list(players)
    rng.shuffle(order)
    n = len(order)
    if n == 0 and not bots_allowed:
        raise SeatingError("nobody has checked in")
    if n < lo and not bots_allowed:
        raise SeatingError(f"{n} player(s) checked in: {game} needs at least {lo}, "
                           f"and this soirée does not allow bots")
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
