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


# -- next_seating: who sits where between parties -------------------------------------------

from tournaments.seating import Change, next_seating  # noqa: E402


def test_people_keep_their_table_and_bots_fill_it() -> None:
    plan = next_seating("comet", ended={1: ["a", "b"]}, playing={2: ["c", "d", "e"]}, pool=[],
                        changes=[], bots_allowed=True)

    assert plan.start == {1: (["a", "b"], 1)}  # Comet's lower best size is 3
    assert plan.made == [] and plan.stop == set()


def test_late_arrivals_fill_the_smallest_tables_of_people_first() -> None:
    plan = next_seating("comet", ended={1: ["a", "b", "c"], 2: ["d", "e"], 3: []},
                        playing={}, pool=["x", "y"], changes=[], bots_allowed=True,
                        bot_tables={3})

    assert plan.start[2][0] == ["d", "e", "x"]
    assert plan.start[1][0] == ["a", "b", "c", "y"]
    assert plan.start[3] == ([], 3)  # the bots' own table plays on
    assert [(c.kind, c.player, c.to_table, now) for c, now in plan.made] == [
        ("join", "x", 2, True), ("join", "y", 1, True)]


def test_open_tables_never_differ_by_more_than_one() -> None:
    plan = next_seating("comet", ended={1: ["a", "b", "c", "d", "e", "f"], 2: ["g", "h"]},
                        playing={}, pool=[], changes=[], bots_allowed=False)

    sizes = sorted(len(people) for people, _ in plan.start.values())
    assert sizes == [4, 4]
    assert [(c.kind, c.player, c.from_table, c.to_table) for c, _ in plan.made] == [
        ("move", "f", 1, 2), ("move", "e", 1, 2)]


def test_a_table_in_play_gives_one_up_after_its_hand_and_the_small_one_waits() -> None:
    plan = next_seating("comet", ended={1: ["a", "b"]}, playing={2: ["c", "d", "e", "f"]},
                        pool=[], changes=[], bots_allowed=False)

    assert plan.start == {}  # table 1 waits for the one who comes from table 2
    assert plan.stop == {2}
    ((change, now),) = plan.made
    assert (change.kind, change.player, change.from_table, change.to_table, now) == (
        "move", "f", 2, 1, False)

    # Table 2's hand over: both start, three and three.
    later = next_seating("comet", ended={1: ["a", "b"], 2: ["c", "d", "e", "f"]}, playing={},
                         pool=[], changes=[Change("move", "f", 2, 1, id=7)],
                         bots_allowed=False)
    assert later.start == {1: (["a", "b", "f"], 0), 2: (["c", "d", "e"], 0)}
    assert later.done == [7]


def test_a_table_that_cannot_be_played_closes_and_its_people_join_the_others() -> None:
    # No bots: a Comet table needs two; the one left alone joins table 2 after its hand.
    plan = next_seating("comet", ended={1: ["a"]}, playing={2: ["b", "c", "d"]}, pool=[],
                        changes=[], bots_allowed=False)

    assert plan.start == {}
    assert plan.stop == {2}
    assert [(c.kind, c.player, c.to_table, now) for c, now in plan.made] == [
        ("join", "a", 2, False)]


def test_asked_replacements_and_removals_are_carried_out_when_the_table_is_between_parties(
) -> None:
    changes = [Change("replace", "b", 1, id=1), Change("remove", "c", 1, id=2),
               Change("remove", "e", 2, id=3)]
    plan = next_seating("comet", ended={1: ["a", "b", "c", "d"]}, playing={2: ["e", "f", "g"]},
                        pool=[], changes=changes, bots_allowed=False)

    assert plan.start == {1: (["a", "d"], 1)}  # the replacing bot, though bots fill no seat
    assert plan.done == [1, 2]  # table 2 is still playing its hand


def test_a_replacement_waits_with_its_table_for_a_player_still_at_a_table_in_play() -> None:
    # Table 2 waits for "a", moved to it from table 1 still in play: its absent "e" is replaced
    # when it starts, not forgotten meanwhile.
    changes = [Change("move", "a", 1, 2, id=1), Change("replace", "e", 2, id=2)]
    first = next_seating("comet", ended={2: ["d", "e", "f"]}, playing={1: ["a", "b", "c", "g"]},
                         pool=[], changes=changes, bots_allowed=False)
    assert first.start == {} and first.done == []  # seat_change stopped table 1 itself

    then = next_seating("comet", ended={1: ["a", "b", "c", "g"], 2: ["d", "e", "f"]},
                        playing={}, pool=[], changes=changes, bots_allowed=False)
    assert then.start == {1: (["b", "c", "g"], 0), 2: (["d", "f", "a"], 1)}
    assert then.done == [1, 2]


def test_an_asked_move_waits_for_both_tables() -> None:
    move = Change("move", "a", 1, 2, id=5)
    first = next_seating("comet", ended={1: ["a", "b", "c"]}, playing={2: ["d", "e"]},
                         pool=[], changes=[move], bots_allowed=False)
    assert first.start == {1: (["b", "c"], 0)} and first.done == []

    then = next_seating("comet", ended={2: ["d", "e"]}, playing={1: ["b", "c"]}, pool=["a"],
                        changes=[move], bots_allowed=False)
    assert then.start == {2: (["d", "e", "a"], 0)} and then.done == [5]


def test_too_many_people_wait_for_a_seat_at_full_tables() -> None:
    plan = next_seating("comet", ended={}, playing={1: list("abcdef")}, pool=["x"], changes=[],
                        bots_allowed=False)

    assert plan.made == [] and plan.stop == set()
