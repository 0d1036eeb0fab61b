"""Who pays whom to settle a set of nets, with the fewest transfers. Pure Python.

A net is positive for a party who is owed chips (a creditor) and negative for one who owes.
Any settlement needs at most n - 1 transfers for n parties with non-zero nets, and exactly
n - g for the best one, where g is the largest number of groups the parties split into whose
nets each sum to zero (each group settles on its own with size - 1 transfers).

- Up to EXACT_LIMIT parties, the split is found exactly by dynamic programming over subsets
  (2^n states), so the number of transfers is the minimum.
- Beyond that (finding the best split is NP-hard), pairs whose nets cancel exactly are settled
  first, then the rest by greedy matching of the largest creditor with the largest debtor.
Within a group, greedy matching settles k parties in at most k - 1 transfers, since each
transfer clears at least one of them and the last clears two.
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable, Mapping
from typing import TypeVar

K = TypeVar("K", bound=Hashable)

EXACT_LIMIT = 14


def minimal_transfers(nets: Mapping[K, int]) -> list[tuple[K, K, int]]:
    """(payer, payee, amount) transfers that bring every net to zero; nets must sum to zero."""
    if sum(nets.values()) != 0:
        raise ValueError(f"Nets sum to {sum(nets.values())}, not zero: nothing can settle them.")
    parties = [(key, net) for key, net in nets.items() if net]
    groups = _best_groups(parties) if len(parties) <= EXACT_LIMIT else _pairs_then_rest(parties)
    transfers: list[tuple[K, K, int]] = []
    for group in groups:
        transfers.extend(_greedy(group))
    return transfers


def _best_groups(parties: list[tuple[K, int]]) -> list[list[tuple[K, int]]]:
    """Split into the most zero-sum groups (exact, 2^n)."""
    n = len(parties)
    if n == 0:
        return []
    full = (1 << n) - 1
    sums = [0] * (full + 1)
    for mask in range(1, full + 1):
        low = mask & -mask
        sums[mask] = sums[mask ^ low] + parties[low.bit_length() - 1][1]
    # best[mask]: the most zero-sum prefixes of any ordering of the parties in mask.
    best = [0] * (full + 1)
    for mask in range(1, full + 1):
        top = 0
        rest = mask
        while rest:
            low = rest & -rest
            rest ^= low
            top = max(top, best[mask ^ low])
        best[mask] = top + (1 if sums[mask] == 0 else 0)
    # Walk back one party at a time; every zero-sum prefix closes a group.
    order: list[int] = []
    mask = full
    while mask:
        target = best[mask] - (1 if sums[mask] == 0 else 0)
        rest = mask
        while rest:
            low = rest & -rest
            rest ^= low
            if best[mask ^ low] == target:
                order.append(low.bit_length() - 1)
                mask ^= low
                break
    order.reverse()
    groups: list[list[tuple[K, int]]] = []
    current: list[tuple[K, int]] = []
    running = 0
    for index in order:
        current.append(parties[index])
        running += parties[index][1]
        if running == 0:
            groups.append(current)
            current = []
    return groups


def _pairs_then_rest(parties: list[tuple[K, int]]) -> list[list[tuple[K, int]]]:
    waiting: dict[int, list[tuple[K, int]]] = {}
    groups: list[list[tuple[K, int]]] = []
    rest: list[tuple[K, int]] = []
    for party in parties:
        partners = waiting.get(-party[1])
        if partners:
            groups.append([partners.pop(), party])
        else:
            waiting.setdefault(party[1], []).append(party)
    for unmatched in waiting.values():
        rest.extend(unmatched)
    if rest:
        groups.append(rest)
    return groups


def _greedy(group: list[tuple[K, int]]) -> list[tuple[K, K, int]]:
    # Heaps of (-size, position, key): the largest first, ties by position (deterministic).
    creditors = [(-net, i, key) for i, (key, net) in enumerate(group) if net > 0]
    debtors = [(net, i, key) for i, (key, net) in enumerate(group) if net < 0]
    heapq.heapify(creditors)
    heapq.heapify(debtors)
    transfers: list[tuple[K, K, int]] = []
    while creditors and debtors:
        owed, ci, creditor = heapq.heappop(creditors)
        owes, di, debtor = heapq.heappop(debtors)
        amount = min(-owed, -owes)
        transfers.append((debtor, creditor, amount))
        if -owed > amount:
            heapq.heappush(creditors, (owed + amount, ci, creditor))
        if -owes > amount:
            heapq.heappush(debtors, (owes + amount, di, debtor))
    return transfers
