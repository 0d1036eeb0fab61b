"""What-if: a finished hand played again from one of its steps with other moves, against the
same deal, on the pure engine. Nothing is written: the real hand, its events and its chips are
untouched; a caller keeps the branch as a draft if it wants to (tournaments.models.WhatIf).

The branch starts from the state after the first ``from_seq`` events of the record, plays the
moves given (any seat's, each one checked by the rules), and, asked to, plays the rest out by
the time-out rule (each seat to act plays its default move) until the hand is over.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.utils.translation import gettext as _

from games.engine.base import Event, Move, RuleError
from games.errors import GameError, HandNotOver
from games.models import Hand
from games.rule_words import in_words
from games.services import store

#: A hand that has not ended after this many played-out decisions is a bug, not a game.
PLAY_OUT_LIMIT = 2000


class BranchRefused(GameError):
    """A branch the rules refuse: which move, and why."""

    code = "branch_refused"


def branch(*, hand: Hand, from_seq: int, moves: Sequence[dict[str, Any]],
           play_out: bool = False) -> dict[str, Any]:
    """Play ``moves`` (``{"seat": n, "move": {"type": …, "card": …}}``) from the state after
    event ``from_seq`` of the finished ``hand``. Returns the branch's events, the table after
    them (every hand shown), the legal moves of each seat to act, and the result if over."""
    if hand.status != Hand.Status.OVER:
        raise HandNotOver(_("a what-if branches from a finished hand"))
    real = store.events(hand)
    if not 0 < from_seq <= len(real):
        raise BranchRefused(_("this hand has events 1 to %(last)s, not %(seq)s")
                            % {"last": len(real), "seq": from_seq})
    n = hand.partie.seats.count()
    engine, state = store.start(hand, n)
    for raw in real[:from_seq]:
        state = engine.apply(state, Event.from_dict(raw))
    played: list[dict[str, Any]] = []

    def play(seat: int, move: Move, by: str) -> None:
        nonlocal state
        for event in engine.decide(state, seat, move, by):
            state = engine.apply(state, event)
            played.append(event.to_dict())

    for i, step in enumerate(moves, start=1):
        try:
            seat, move = int(step["seat"]), Move(**step["move"])
        except (KeyError, TypeError, ValueError):
            raise BranchRefused(_("move %(i)s is not {\"seat\": n, \"move\": {\"type\": …}}")
                                % {"i": i}) from None
        if engine.is_over(state):
            raise BranchRefused(_("move %(i)s: the hand is already over in this branch") % {"i": i})
        try:
            play(seat, move, "player")
        except RuleError as exc:
            raise BranchRefused(
                _("move %(i)s (%(move)s, seat %(seat)s) is refused: %(why)s")
                % {"i": i, "move": move, "seat": seat, "why": in_words(exc.message)}) from None
    decisions = 0
    while play_out and not engine.is_over(state):
        seat = engine.to_act(state)[0]
        play(seat, engine.default_move(state, seat), "timeout")
        decisions += 1
        if decisions > PLAY_OUT_LIMIT:
            raise RuntimeError("a played-out branch did not end")
    view = engine.view(state, None)
    view["all_hands"] = {str(s): engine.view(state, s).get("hand") or [] for s in range(n)}
    legal = engine.legal_moves(state)
    return {
        "from_seq": from_seq,
        "events": played,
        "view": view,
        "to_act": [] if engine.is_over(state) else engine.to_act(state),
        "legal_moves": {str(s): [m.to_dict() for m in ms] for s, ms in legal.items() if ms},
        "result": engine.result(state) if engine.is_over(state) else None,
    }
