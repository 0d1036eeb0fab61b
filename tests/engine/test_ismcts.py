"""The *fort* bot (ISMCTS): legal moves, forced and time-out moves as for every bot, and no
peeking: it decides from its seat's view and history alone.

Every hand here is dealt from a fixed seed.
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import random
import sys
from pathlib import Path
from typing import Any

import pytest

from games.engine import comet, commere, ismcts
from games.engine.base import BY_FORCED, BY_TIMEOUT, Event
from games.engine.bots import LEVELS, Bot, IsmctsBot, make_bot
from games.engine.deal import commitment, deal_from_seed
from games.engine.play import play_hand
from games.engine.registry import get_game
from games.engine.visibility import redact_events

PLAYERS = {"comet": 4, "commere": 5}
SEEDS = [f"{i:02x}" * 32 for i in range(1, 9)]


def _setup(game_name: str, seed: str) -> dict[str, Any]:
    game = get_game(game_name)
    players = PLAYERS[game_name]
    deck, dealer = deal_from_seed(game_name, seed, players)
    return dict(deck=deck, dealer=dealer,
                seats=[{"seat": i, "player": f"p{i}"} for i in range(players)],
                options=game.normalise_options({}),
                chips_before={str(i): 50 for i in range(players)}, pot_before=0,
                commitment=commitment(seed))


class Recorder(Bot):
    """A bot that plays as ``inner`` and notes every decision point it was asked at."""

    def __init__(self, inner: Bot, points: list[tuple[Any, int, list[Any], bool, list[Event]]]):
        super().__init__(inner.rng)
        self.inner = inner
        self.by = inner.by
        self.points = points

    def choose(self, game: Any, state: Any, seat: int, legal: list[Any], required: bool,
               events: Any = ()) -> Any:
        move = self.inner.choose(game, state, seat, legal, required, events)
        assert move is None or move in legal
        if len(legal) + (not required) > 1:
            self.points.append((state, seat, legal, required, list(events)))
        return move


@pytest.mark.parametrize("game_name", ["comet", "commere"])
@pytest.mark.parametrize("seed", SEEDS[:4])
def test_fort_plays_legal_moves_to_the_end(game_name: str, seed: str) -> None:
    game = get_game(game_name)
    points: list[Any] = []
    bots = [Recorder(IsmctsBot(random.Random(i), playouts=12), points)
            for i in range(PLAYERS[game_name])]
    state, events = play_hand(game, bots=bots, **_setup(game_name, seed))
    assert game.is_over(state)
    # Forced moves are recorded as forced whoever plays them, as for every bot; the Recorder
    # checked that every move chosen was among the legal ones.
    replayed = game.replay(_setup(game_name, seed)["deck"], [])
    for event in events:
        mv = game.move_of(event)
        if mv is not None:
            seat, _move = mv
            only = len(game.legal_moves(replayed).get(seat, [])) == 1
            awaited = seat in game.to_act(replayed)
            assert (event.by == BY_FORCED) == (only and awaited), event
        replayed = game.apply(replayed, event)


@pytest.mark.parametrize("game_name", ["comet", "commere"])
def test_a_forced_move_is_played_without_search(
    game_name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    searched: list[int] = []
    real = ismcts.choose

    def counting(game: Any, view: Any, history: Any, **kwargs: Any) -> Any:
        searched.append(len(view["legal_moves"]) + (not kwargs["required"]))
        return real(game, view, history, **kwargs)

    monkeypatch.setattr(ismcts, "choose", counting)
    game = get_game(game_name)
    state, events = play_hand(game, bots=[IsmctsBot(random.Random(i), playouts=4)
                                          for i in range(PLAYERS[game_name])],
                              **_setup(game_name, SEEDS[5]))
    forced = sum(e.by == BY_FORCED for e in events)
    assert forced and searched and min(searched) > 1


@pytest.mark.parametrize("game_name", ["comet", "commere"])
def test_a_fort_seat_times_out_to_the_default_move(game_name: str) -> None:
    """The time-out move of a seat does not depend on its bot: the service plays the game's
    ``default_move`` and records it ``timeout``."""
    game = get_game(game_name)
    setup = _setup(game_name, SEEDS[1])
    state = game.replay(setup["deck"], game.begin(**setup))
    seat = game.to_act(state)[0]
    move = game.default_move(state, seat)
    events = game.decide(state, seat, move, BY_TIMEOUT)
    assert events[0].by == BY_TIMEOUT


def test_levels_name_the_three_bots() -> None:
    assert LEVELS == {"debutant": "random", "habile": "heuristic", "fort": "ismcts"}
    assert isinstance(make_bot("ismcts", random.Random(0)), IsmctsBot)
    with pytest.raises(ValueError, match="unknown bot 'expert'"):
        make_bot("expert", random.Random(0))


# ---------------------------------------------------------------------------------------------
# Determinisations agree with what the seat sees


def _decision_points(game_name: str, seed: str) -> list[tuple[Any, int, list[Any], bool, list]]:
    game = get_game(game_name)
    points: list[Any] = []
    bots = [Recorder(make_bot("heuristic", random.Random(i)), points)
            for i in range(PLAYERS[game_name])]
    play_hand(game, bots=bots, **_setup(game_name, seed))
    return points


def _history(game_name: str, events: list[Event], seat: int) -> list[dict[str, Any]]:
    return redact_events([e.to_dict() for e in events], viewer=seat,
                         n_seats=PLAYERS[game_name], over=False)


@pytest.mark.parametrize("game_name", ["comet", "commere"])
def test_every_sample_looks_the_same_to_the_seat(game_name: str) -> None:
    game = get_game(game_name)
    checked = 0
    for seed in SEEDS:
        for state, seat, _legal, _required, events in _decision_points(game_name, seed):
            view = game.view(state, seat)
            history = _history(game_name, events, seat)
            for k in range(3):
                sample = game.sample_state(view, history, random.Random(k))
                seen = game.view(sample, seat)
                # The history of passes is the state's own record: a sample starts without it.
                assert {key: seen[key] for key in view if key != "passes"} == \
                    {key: view[key] for key in view if key != "passes"}
                checked += 1
    assert checked > 20


@pytest.mark.parametrize("game_name", ["comet", "commere"])
def test_samples_vary_the_hidden_cards(game_name: str) -> None:
    game = get_game(game_name)
    state, seat, _legal, _required, events = _decision_points(game_name, SEEDS[2])[0]
    view = game.view(state, seat)
    history = _history(game_name, events, seat)
    others = {repr(game.sample_state(view, history, random.Random(k)).hands) for k in range(10)}
    assert len(others) > 5


# ---------------------------------------------------------------------------------------------
# No peeking


def _twin(game_name: str, state: Any, seat: int, events: list[Event], deck: list[str]) -> Any:
    """The same hand with two cards the seat cannot see swapped between two other holders
    in the deal, or ``None`` if no such pair keeps the seat's view."""
    game = get_game(game_name)
    named = {e.data.get("card") for e in events} | {e.data.get("stands_for") for e in events}
    view = game.view(state, seat)
    mine = set(view["hand"])
    candidates = [c for c in deck if c not in mine and c not in named and c != "9D"]
    holder = {}
    for c in candidates:
        for s in range(PLAYERS[game_name]):
            if c in game.view(state, s)["hand"]:
                holder[c] = s
        holder.setdefault(c, -1)  # Ma commère's talon
    for a in candidates:
        for b in candidates:
            if holder[a] == holder[b] or holder[a] == seat or holder[b] == seat:
                continue
            twin_deck = list(deck)
            i, j = twin_deck.index(a), twin_deck.index(b)
            twin_deck[i], twin_deck[j] = twin_deck[j], twin_deck[i]
            twin = game.replay(twin_deck, events)
            if game.view(twin, seat) == view and twin != state:
                return twin
    return None


@pytest.mark.parametrize("game_name", ["comet", "commere"])
def test_same_view_same_move_whatever_the_hidden_cards(game_name: str) -> None:
    game = get_game(game_name)
    pairs = 0
    for seed in SEEDS:
        deck = _setup(game_name, seed)["deck"]
        for state, seat, legal, required, events in _decision_points(game_name, seed)[:3]:
            twin = _twin(game_name, state, seat, events, deck)
            if twin is None:
                continue
            pairs += 1
            moves_a, moves_b = [], []
            for k in range(6):
                moves_a.append(IsmctsBot(random.Random(k), playouts=25).choose(
                    game, state, seat, legal, required, events))
                moves_b.append(IsmctsBot(random.Random(k), playouts=25).choose(
                    game, twin, seat, legal, required, events))
            # The same move for each seed, so the same distribution of moves over seeds.
            assert moves_a == moves_b
    assert pairs >= 4


def test_the_search_is_never_given_the_state(monkeypatch: pytest.MonkeyPatch) -> None:
    """The entry point takes a view and a history; the adapter hands it nothing else."""
    assert "state" not in inspect.signature(ismcts.choose).parameters
    given: list[Any] = []
    real = ismcts.choose

    def spy(*args: Any, **kwargs: Any) -> Any:
        given.extend(args)
        given.extend(kwargs.values())
        return real(*args, **kwargs)

    monkeypatch.setattr(ismcts, "choose", spy)
    state, seat, legal, required, events = _decision_points("commere", SEEDS[3])[0]
    IsmctsBot(random.Random(0), playouts=5).choose(commere, state, seat, legal, required,
                                                   events)
    assert given and all(arg is not state for arg in given)
    assert not any(dataclasses.is_dataclass(arg) and not isinstance(arg, type)
                   and hasattr(arg, "hands") for arg in given)


@pytest.mark.parametrize("game_name", ["comet", "commere"])
def test_the_bot_module_reads_no_hidden_field(game_name: str) -> None:
    """Every read of the real state's fields during a decision is made by the game's own
    ``view`` (for the seat's own hand and the counts), never by the bot's modules."""
    game = get_game(game_name)
    state, seat, legal, required, events = _decision_points(game_name, SEEDS[4])[0]
    reads: list[tuple[str, str]] = []
    cls = type(state)

    class Watched(cls):  # type: ignore[misc, valid-type]
        __slots__ = ()

        def __getattribute__(self, name: str) -> Any:
            reads.append((sys._getframe(1).f_code.co_filename, name))
            return object.__getattribute__(self, name)

    watched = Watched(**{f.name: getattr(state, f.name) for f in dataclasses.fields(state)})
    IsmctsBot(random.Random(0), playouts=10).choose(game, watched, seat, legal, required,
                                                    events)
    readers = {Path(f).name for f, _ in reads}
    assert readers, "the view was read"
    assert readers <= {f"{game_name}.py"}, readers


def test_the_bot_module_names_no_state_field() -> None:
    """A static check of the same: ismcts.py touches no field of either game's state."""
    fields = {f.name for cls in (comet.CometState, commere.State)
              for f in dataclasses.fields(cls)}
    tree = ast.parse(Path(ismcts.__file__).read_text())
    touched = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    assert not touched & fields, touched & fields
