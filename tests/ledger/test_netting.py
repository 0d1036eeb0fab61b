"""Settling nets with the fewest transfers (pure, no database)."""

from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ledger.netting import EXACT_LIMIT, minimal_transfers


def settle(nets: dict[str, int], transfers: list[tuple[str, str, int]]) -> dict[str, int]:
    left = dict(nets)
    for payer, payee, amount in transfers:
        assert amount > 0
        left[payer] += amount
        left[payee] -= amount
    return left


def fewest_possible(nets: dict[str, int]) -> int:
    """n - (most zero-sum groups), by brute force over subsets."""
    values = [v for v in nets.values() if v]

    def most_groups(items: tuple[int, ...]) -> int:
        if not items:
            return 0
        best = 1
        first, rest = items[0], items[1:]
        for size in range(len(rest)):
            for picked in combinations(range(len(rest)), size):
                if first + sum(rest[i] for i in picked) == 0:
                    others = tuple(rest[i] for i in range(len(rest)) if i not in picked)
                    if sum(others) == 0 and others:
                        best = max(best, 1 + most_groups(others))
        return best

    return len(values) - most_groups(tuple(values))


def nets_summing_to_zero(max_size: int, min_size: int = 0) -> st.SearchStrategy[dict[str, int]]:
    def close(values: list[int]) -> dict[str, int]:
        nets = {f"p{i}": v for i, v in enumerate(values)}
        nets[f"p{len(values)}"] = -sum(values)
        return nets

    return st.lists(st.integers(-60, 60), min_size=min_size, max_size=max_size).map(close)


def test_a_loser_pays_the_two_winners() -> None:
    assert minimal_transfers({"ann": 30, "ben": 20, "cid": -50}) == [
        ("cid", "ann", 30),
        ("cid", "ben", 20),
    ]


def test_equal_and_opposite_nets_settle_in_pairs_where_greedy_would_not() -> None:
    # Greedy largest-first would need 4 transfers; two pairs and a trio need 1 + 1 + 2.
    nets = {"a": 7, "b": -7, "c": 5, "d": -5, "e": 6, "f": -3, "g": -3}
    transfers = minimal_transfers(nets)
    assert len(transfers) == 4 == fewest_possible(nets)
    assert set(settle(nets, transfers).values()) == {0}


def test_nothing_to_settle() -> None:
    assert minimal_transfers({"a": 0, "b": 0}) == []
    assert minimal_transfers({}) == []


def test_nets_that_do_not_sum_to_zero_cannot_be_settled() -> None:
    with pytest.raises(ValueError, match="sum to 5"):
        minimal_transfers({"a": 5})


@settings(max_examples=150, deadline=None)
@given(nets_summing_to_zero(max_size=7))
def test_transfers_settle_everyone_with_the_fewest_possible(nets: dict[str, int]) -> None:
    transfers = minimal_transfers(nets)
    assert set(settle(nets, transfers).values()) <= {0}
    assert len(transfers) == fewest_possible(nets)


@settings(max_examples=30, deadline=None)
@given(nets_summing_to_zero(min_size=EXACT_LIMIT + 1, max_size=40))
def test_beyond_the_exact_limit_transfers_still_settle_everyone_in_at_most_n_minus_one(
    nets: dict[str, int],
) -> None:
    transfers = minimal_transfers(nets)
    parties = sum(1 for v in nets.values() if v)
    assert set(settle(nets, transfers).values()) <= {0}
    assert len(transfers) <= max(parties - 1, 0)
