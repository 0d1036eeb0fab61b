"""The *fort* bot: information-set Monte Carlo tree search (ISMCTS).

Cowling, Powley and Whitehouse (IEEE TCIAIG 2012): a tree over the seat's own information sets
(single-observer ISMCTS). Each playout takes a determinisation, a deal of the cards the seat
cannot see drawn uniformly among the deals that agree with what it has seen
(``game.sample_state``); walks the tree choosing the seat's moves by UCT among those that deal
allows, counting for each move how often it was available; adds one node; and plays the hand
out. The other seats play the heuristic player's moves, in the tree and after it: the search
is a best response to sensible play, not to an opponent who sees the cards.

Two things keep a few dozen playouts from ranking moves by luck. The determinisations are a
pool, each played with the moves the tree tries in turn, with the same random source for the
rest of the hand (common random numbers), so two moves are compared on the same deals. And
the search overrules the heuristic player's own move only when it beats it on those paired
deals by more than their noise.

It decides from the seat's ``view`` and the hand's history as that seat sees it, and from
nothing else: ``choose`` is never given the state, and the states it searches are its own
samples. Its random source is seeded by the caller (the service seeds it with the hand's public
commitment and the point of play), so a replay makes the same decisions.

Standard library only, like the rest of the engine.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Mapping, Sequence
from typing import Any

from .base import Move
from .protocol import Game

#: Playouts per decision by default, by game: a decision within 200 ms on one core of the
#: reference machine (bench/ismcts_bench.py measures it, and the strength at other counts).
#: A Comet playout is a whole deal of 51 cards; a Ma commère round is mostly shorter, and its
#: moves differ by little, so it needs more playouts to tell them apart.
DEFAULT_PLAYOUTS = {"comet": 60, "commere": 600}
#: The exploration constant of UCT, in units of the largest gain or loss seen in the playouts.
EXPLORATION = 0.7
#: How sure the search must be, in standard errors of the paired difference, to play another
#: move than the heuristic player's.
CONFIDENCE = 1.0
#: Declining an optional move (the Comet holder letting a waiting card be played).
PASS = Move("pass")


def default_playouts(game_name: str) -> int:
    return DEFAULT_PLAYOUTS[game_name]


class Node:
    """A move of the searching seat from one of its information sets, with its statistics;
    under the root, its rewards by determinisation too (for the paired comparison)."""

    __slots__ = ("move", "children", "visits", "available", "reward", "by_deal")

    def __init__(self, move: Move | None) -> None:
        self.move = move
        self.children: dict[Move, Node] = {}
        self.visits = 0
        self.available = 0
        self.reward = 0.0
        self.by_deal: dict[int, list[float]] = {}

    def ucb(self, c: float) -> float:
        return self.reward / self.visits + c * math.sqrt(math.log(self.available) / self.visits)

    def mean_on(self, deal: int) -> float:
        return statistics.fmean(self.by_deal[deal])


def _decision(game: Game, state: Any, passed: bool) -> tuple[int, list[Move], bool] | None:
    """The hand's next decision as ``play.play_out`` asks it: (seat, legal moves, required).
    A seat that only *may* act is asked first, unless it has just declined."""
    legal = game.legal_moves(state)
    awaited = game.to_act(state)
    if not passed:
        for seat, moves in legal.items():
            if seat not in awaited:
                return seat, moves, False
    if not awaited:
        return None
    return awaited[0], legal[awaited[0]], True


def _step(game: Game, state: Any, seat: int, move: Move) -> Any:
    for event in game.decide(state, seat, move):
        state = game.apply(state, event)
    return state


def _sensible(game: Game, state: Any, seat: int, moves: list[Move], required: bool,
              rng: random.Random) -> Move:
    """The heuristic player's move (``PASS`` when it declines an optional one)."""
    if required and len(moves) == 1:
        return moves[0]
    return game.heuristic_move(state, seat, moves, required, rng) or PASS


def _reward(game: Game, state: Any, seat: int) -> float:
    """The seat's chips won or lost in the hand: the mean chips per hand is what it plays
    for."""
    result = game.result(state)
    assert result is not None
    return float(result["net"][str(seat)])


def choose(
    game: Game,
    view: Mapping[str, Any],
    history: Sequence[Mapping[str, Any]],
    *,
    required: bool,
    rng: random.Random,
    playouts: int | None = None,
) -> Move | None:
    """The seat's move (``None``: it declines an optional move), from its ``view`` and the
    ``history`` of the hand as it sees it."""
    seat = int(view["seat"])
    legal = [Move(m["type"], m.get("card"), m.get("suit")) for m in view["legal_moves"]]
    options = legal if required else [*legal, PASS]
    if len(options) == 1:
        return options[0]
    if playouts is None:
        playouts = default_playouts(game.NAME)
    # Enough determinisations for each to be played with every first move about once.
    pool = max(2, playouts // len(options))
    seeds = [rng.getrandbits(64) for _ in range(pool)]
    deals: dict[int, Any] = {}
    root = Node(None)
    spread = 1.0  # the largest gain or loss seen: the scale of the exploration term
    habile: Move | None = None
    for i in range(playouts):
        deal = i % pool
        if deal not in deals:
            deals[deal] = game.sample_state(view, history, random.Random(seeds[deal]))
        state = deals[deal]
        # The same source for the rest of the hand whatever the moves tried: paired playouts.
        play = random.Random(seeds[deal] + 1)
        if habile is None:  # his own cards are the same in every sample
            habile = _sensible(game, state, seat, legal, required, random.Random(seeds[0]))
        node = root
        path: list[Node] = []
        expanded = False
        passed = False
        point: tuple[int, list[Move], bool] | None = (seat, legal, required)
        while point is not None:
            mover, moves, must = point
            if mover == seat and not expanded and len(moves) + (not must) > 1:
                choices = moves if must else [*moves, PASS]
                for move in choices:
                    child = node.children.get(move)
                    if child is not None:
                        child.available += 1
                untried = [m for m in choices if m not in node.children]
                if untried:
                    guess = _sensible(game, state, seat, moves, must, play)
                    move = guess if guess in untried else play.choice(untried)
                    child = node.children[move] = Node(move)
                    child.available = 1
                    expanded = True  # one new node a playout; the rest is played out
                else:
                    child = max((node.children[m] for m in choices),
                                key=lambda ch: ch.ucb(EXPLORATION * spread))
                    move = child.move or PASS
                node = child
                path.append(node)
            else:
                move = _sensible(game, state, mover, moves, must, play)
            if move == PASS:
                passed = True
            else:
                state = _step(game, state, mover, move)
                passed = False
            point = None if game.is_over(state) else _decision(game, state, passed)
        reward = _reward(game, state, seat)
        spread = max(spread, abs(reward))
        for visited in path:
            visited.visits += 1
            visited.reward += reward
        path[0].by_deal.setdefault(deal, []).append(reward)
    best = max(root.children.values(), key=lambda ch: (ch.visits, ch.reward))
    mine = root.children.get(habile) if habile is not None else None
    if mine is not None and best is not mine and not _surely_better(best, mine):
        best = mine
    assert best.move is not None
    return None if best.move == PASS else best.move


def _surely_better(best: Node, sensible: Node) -> bool:
    """Whether ``best`` beats the heuristic player's move by more than the noise, on the
    determinisations both were played on."""
    common = [d for d in best.by_deal if d in sensible.by_deal]
    if len(common) < 3:
        return False
    diffs = [best.mean_on(d) - sensible.mean_on(d) for d in common]
    error = statistics.stdev(diffs) / math.sqrt(len(diffs))
    return statistics.fmean(diffs) > CONFIDENCE * error
