"""A player's move, and the move the service plays when a deadline passes."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from games.engine.base import BY_PLAYER, Move, RuleError
from games.errors import (
    CommandConflict,
    HandIsOver,
    IllegalMoveError,
    NotSeated,
    StaleSequence,
)
from games.models import Command, Hand, Partie

from . import store
from .advance import advance, fire, table_for


def _locked_hand(hand_id: Any) -> Hand:
    # The row lock serialises writers of one hand; the (hand, seq) unique constraint backs it.
    # Lock only the hand's row: PostgreSQL refuses FOR UPDATE on the nullable side of the
    # outer join to the seed, and the partie's row is the dealer's lock, not the movers'.
    return (Hand.objects.select_for_update(of=("self",)).select_related("partie", "secret")
            .get(pk=hand_id))


def move_play(
    *, hand_id: uuid.UUID, user: AbstractBaseUser, move: Move, seq: int,
    command_id: uuid.UUID, at: datetime,
) -> dict[str, Any]:
    """Play ``move`` for ``user``'s seat, answering the hand at ``seq``; idempotent by id."""
    request = {"hand": str(hand_id), "seq": seq, "move": move.to_dict()}
    with transaction.atomic():
        hand = _locked_hand(hand_id)
        done = Command.objects.filter(command_id=command_id).first()
        if done is not None:
            if done.request != request or done.user_id != user.pk:
                raise CommandConflict("this command_id was already used for another move")
            return dict(done.response)
        # The seq first: a move that lost the race to the hand's last move is a 409 like any
        # other lost race, whether or not that last move ended the hand.
        if seq != hand.last_seq:
            raise StaleSequence(f"the hand is at seq {hand.last_seq}, your move answers {seq}; "
                                f"reload the hand")
        if hand.status == Hand.Status.OVER:
            raise HandIsOver("this hand is over: no move can be played")
        table = table_for(hand.partie)
        seat = next((s.number for s in table.seats if s.player_id == user.pk), None)
        if seat is None:
            raise NotSeated("you have no seat at this table")
        loaded = store.load(hand)
        first_new = hand.last_seq + 1
        try:
            from .advance import apply_move

            loaded = apply_move(table, hand, loaded, seat, move, BY_PLAYER, actor=user,
                                command_id=command_id, now=at)
        except RuleError as exc:
            raise IllegalMoveError(exc.message, rule=exc.rule) from None
        loaded = advance(table, hand, loaded, now=at)
        hand.save()
        response = {"hand": str(hand.id), "seq": hand.last_seq, "applied_from_seq": first_new}
        Command.objects.create(command_id=command_id, hand=hand, user=user, request=request,
                               response=response)
        return response


def deadline_fire(*, hand_id: Any, seq: int, at: datetime) -> bool:
    """Play the pending decision's move if the hand still waits for it at ``seq`` and it is
    due; otherwise do nothing (a late or duplicated timer is harmless). True if it played."""
    with transaction.atomic():
        try:
            hand = _locked_hand(hand_id)
        except Hand.DoesNotExist:
            return False
        if (hand.status != Hand.Status.PLAYING or hand.deadline is None
                or hand.deadline_seq != seq or hand.last_seq != seq or hand.deadline > at):
            return False
        if hand.partie.status == Partie.Status.OVER:
            return False
        table = table_for(hand.partie)
        loaded = store.load(hand)
        fire(table, hand, loaded, now=at)
        hand.save()
        return True
