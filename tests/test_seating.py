"""The seating draw: balanced table sizes for each game, bots only where allowed."""

import pytest

from tournaments.seating import SeatingError, draw, table_sizes


@pytest.mark.parametrize(("game", "n", "sizes"), [
    ("comet", 2, [2]), ("comet", 3, [3]), ("comet", 7, [4, 3]), ("comet", 10, [4, 3, 3]),
    ("comet", 12, [4, 4, 4]), ("comet", 5, [5]),
    ("commere", 4, [4]), ("commere", 8, [8]), ("commere", 15, [8, 7]), ("commere", 13, [7, 6]),
    ("commere", 12, [6, 6]),
])
def test_tables_are_balanced_and_as_near_the_best_size_as_can_be(game, n, sizes) -> None:
    assert table_sizes(game, n) == sizes


def test_the_draw_is_reproducible_from_the_seed_and_seats_everyone_once() -> None:
    players = [f"p{i}" for i in range(11)]
    a = draw("comet", players, seed="abc", bots_allowed=False)
    b = draw("comet", players, seed="abc", bots_allowed=False)
    c = draw("comet", players, seed="abd", bots_allowed=False)
    assert a == b and a != c
    seated = [p for t in a for p in t.players]
    assert sorted(seated) == sorted(players)


def test_bots_fill_a_short_table_only_where_the_soiree_allows_them() -> None:
    assert draw("commere", ["ann"], seed="s", bots_allowed=True)[0].bots == 6
    with pytest.raises(SeatingError, match="does not allow bots"):
        draw("commere", ["ann", "bob"], seed="s", bots_allowed=False)
    plans = draw("comet", ["ann", "bob"], seed="s", bots_allowed=False)
    assert [len(p.players) + p.bots for p in plans] == [2]
