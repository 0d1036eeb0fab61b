"""Drive a hand with bots: the loop shared by the simulator, the tests and the benchmark."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .base import BY_FORCED, Event
from .bots import Bot
from .protocol import Game


def play_hand(
    game: Game,
    *,
    deck: Sequence[str],
    dealer: int,
    seats: Sequence[Mapping[str, Any]],
    options: Mapping[str, Any],
    chips_before: Mapping[str, int],
    pot_before: int,
    commitment: str,
    bots: Sequence[Bot],
    comet_payment_due: int | None = None,
    max_events: int = 100_000,
) -> tuple[Any, list[Event]]:
    """Play one hand to its end; return the final state and every event.

    Seats that only *may* act (the Comet holder at a waiting card) are offered their chance
    first, as RULES.md's priority says; then the first awaited seat moves. A seat's only legal
    move is recorded ``forced``.
    """
    extra = {"comet_payment_due": comet_payment_due} if comet_payment_due is not None else {}
    events = game.begin(
        deck=deck, dealer=dealer, seats=seats, options=options, chips_before=chips_before,
        pot_before=pot_before, commitment=commitment, **extra,
    )
    state = game.replay(deck, events)
    return play_out(game, state, events, bots=bots, max_events=max_events)


def play_out(
    game: Game, state: Any, events: list[Event], *, bots: Sequence[Bot], max_events: int = 100_000,
) -> tuple[Any, list[Event]]:
    """Play a started hand to its end, appending to ``events``."""
    while not game.is_over(state):
        if len(events) > max_events:
            raise RuntimeError("the hand does not end")
        legal = game.legal_moves(state)
        awaited = game.to_act(state)
        chosen = None
        for seat, moves in legal.items():
            if seat not in awaited:
                move = bots[seat].choose(game, state, seat, moves, False, events)
                if move is not None:
                    chosen = (seat, move, bots[seat].by)
                    break
        if chosen is None:
            seat = awaited[0]
            moves = legal[seat]
            move = bots[seat].choose(game, state, seat, moves, True, events)
            assert move is not None
            chosen = (seat, move, BY_FORCED if len(moves) == 1 else bots[seat].by)
        new = game.decide(state, *chosen)
        for event in new:
            state = game.apply(state, event)
        events.extend(new)
    return state, events
