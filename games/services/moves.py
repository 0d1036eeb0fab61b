"""A player's move, and the move the service plays when a deadline passes."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import DEFAULT_DB_ALIAS, OperationalError, connections, transaction
from django.utils import timezone

from games.engine.base import BY_PLAYER, Move, RuleError
from games.errors import (
    CommandConflict,
    GameError,
    HandIsOver,
    IllegalMoveError,
    NotSeated,
    StaleSequence,
)
from games.models import Command, Hand, Partie, Seat
from ledger.exceptions import LedgerError

from . import chips, recent, store
from .advance import Table, advance, apply_move, fire
from .parties import deal_after

logger = logging.getLogger(__name__)

#: Hands one command may deal in a row at zero pause, while each ends at its deal.
CHAINED_DEALS = 4


def _locked_table(hand_id: Any) -> tuple[Hand, Table]:
    """The hand, locked, and its table (partie and seats), read once for the whole command.

    The row lock serialises writers of one hand; the (hand, seq) unique constraint backs it.
    The snapshot gives the hand's state, so the events are not read (store.load)."""
    hand, seats, accounts = store.lock_hand(hand_id)
    table = Table(partie=hand.partie, seats=seats)
    if accounts is not None:  # read with the hand (PostgreSQL)
        table.accounts = chips.Accounts(hand.partie, seats, found=accounts)
    return hand, table


@dataclass(frozen=True)
class MovePlayed:
    """What ``move_play`` answers: ``response``, the command's answer (stored, and given again
    to a retry), and the hand, its state and the player's seat as the command left them, so
    that the API answers without reading the hand again. For a retry (``retried``) they are the
    hand as it is now, which may have moved on since the first answer."""

    response: dict[str, Any]
    hand: Hand
    loaded: store.Loaded
    seat: int | None
    retried: bool = False


def move_play(
    *, hand_id: uuid.UUID, user: AbstractBaseUser, move: Move, seq: int,
    command_id: uuid.UUID, at: datetime,
) -> MovePlayed:
    """Play ``move`` for ``user``'s seat, answering the hand at ``seq``; idempotent by id."""
    request = {"hand": str(hand_id), "seq": seq, "move": move.to_dict()}
    if one_statement_possible():
        try:
            played = _in_one_statement(hand_id, user, move, seq, command_id, at, request)
        except _DealFailed:  # rolled back whole (_in_guarded): as below, without the deal
            return _in_transaction(hand_id, user, move, seq, command_id, at, request, deal=False)
        if played is not None:
            return played
    try:
        return _in_transaction(hand_id, user, move, seq, command_id, at, request, deal=True)
    except _DealFailed:
        # Rolled back whole: played again, the hand ends without its successor, which the
        # timer queued by the hand's end deals (as it deals any hand after a pause).
        return _in_transaction(hand_id, user, move, seq, command_id, at, request, deal=False)


class _DealFailed(Exception):  # noqa: N818 - a signal, not an error
    """The next hand's deal failed in the transaction of the move that ended the last one: that
    transaction is rolled back, and the move played again without the deal."""


def _in_transaction(hand_id: uuid.UUID, user: AbstractBaseUser, move: Move, seq: int,
                    command_id: uuid.UUID, at: datetime, request: dict[str, Any], *,
                    deal: bool) -> MovePlayed:
    """The move in a transaction, the hand locked: any move ``_in_one_statement`` leaves (a
    retry, a refusal, no usable snapshot, elsewhere than PostgreSQL or inside a caller's
    transaction, a refusal in ``_in_guarded``). ``deal``: a hand it ends is followed by
    the next in the same transaction (``_deal_at_once``); a failed deal raises _DealFailed."""
    with transaction.atomic():
        hand, table = _locked_table(hand_id)
        seat = table.seat_of(user.pk)
        if seq != hand.last_seq or hand.status == Hand.Status.OVER:
            response = _answered_before(hand, request, user, command_id)
            return MovePlayed(response, hand, store.load(hand), seat, retried=True)
        if seat is None:
            raise NotSeated("you have no seat at this table")
        loaded = store.load(hand)
        first_new = hand.last_seq + 1
        try:
            loaded = apply_move(table, hand, loaded, seat, move, BY_PLAYER, actor=user,
                                command_id=command_id, now=at)
        except RuleError as exc:
            raise IllegalMoveError(exc.message, rule=exc.rule) from None
        loaded = advance(table, hand, loaded, now=at)
        response, command = _answer(hand, first_new, user, command_id, request)
        # The Command row's primary key refuses an id that answers a move elsewhere (see
        # _answered_before): CommandConflict, and the whole move rolls back.
        _write(table, hand, loaded, at, command, deal=deal)
        return MovePlayed(response=response, hand=hand, loaded=loaded, seat=seat)


def _write(table: Table, hand: Hand, loaded: store.Loaded, at: datetime,
           command: dict[str, Any], *, deal: bool) -> None:
    """What a move played in a transaction writes: the hand (with the partie, as it ends) and
    the command's row; a hand it ends is followed by the next (``deal``: _deal_at_once). The
    payments the table holds (``_in_guarded``) are posted after the hand's write, with the
    next hand's antes if one is dealt; elsewhere they were posted as they were made."""
    if hand.status == Hand.Status.OVER:
        # The hand is written first, the partie with it (its next_hand_at: the deal is due).
        _save(table, hand, loaded)
        written = deal and _deal_at_once(table, hand, at, command=command)
        table.accounts.flush()
        if not written:  # no deal, or none was due: the command's row on its own
            store.insert(Command, [command])
    else:
        _save(table, hand, loaded, command=command)
        table.accounts.flush()


def _save(table: Table, hand: Hand, loaded: store.Loaded,
          command: dict[str, Any] | None = None) -> None:
    """store.save of a command played in a transaction: its events and hand row, the partie's
    fields it changed and, as a hand ends, the partie's row and the accounts' balances read
    back for the deal that follows (``table.partie_locked``, ``table.balances_fresh``)."""
    # A command that holds its payments (_in_guarded) has read no account yet: the hand's end
    # reads them (the deal that follows needs their balances).
    to_read = table.accounts.to_read() if table.accounts.holding else None
    table.partie_locked = table.balances_fresh = store.save(
        hand, loaded, pending=table.events, command=command, partie_fields=table.partie_fields,
        accounts=table.accounts.known(), timer_armed=table.timer_armed, accounts_of=to_read)
    if to_read is not None and table.balances_fresh:
        table.accounts.take(to_read.found)


def _answer(hand: Hand, first_new: int, user: AbstractBaseUser, command_id: uuid.UUID,
            request: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A played move's answer, and its Command row (which keeps the answer for a retry)."""
    response = {"hand": str(hand.id), "seq": hand.last_seq, "applied_from_seq": first_new,
                "next_hand": None}
    command = {"command_id": command_id, "hand_id": hand.pk, "user_id": user.pk,
               "request": request, "response": response, "created_at": timezone.now()}
    return response, command


def one_statement_possible() -> bool:
    """Whether a usual move may be one statement here (PostgreSQL, outside a transaction):
    inside one (a test, a script) the caller's transaction must hold the whole command, and
    with autocommit off a statement is no transaction by itself. A read made here is committed,
    and may be offered to the kept hands (selectors.hand_view_by_id)."""
    db = connections[DEFAULT_DB_ALIAS]
    return store.writes_in_one_statement() and not db.in_atomic_block and db.get_autocommit()


def _in_one_statement(hand_id: uuid.UUID, user: AbstractBaseUser, move: Move, seq: int,
                      command_id: uuid.UUID, at: datetime,
                      request: dict[str, Any]) -> MovePlayed | None:
    """The usual move, which writes only its events, its hand row and its Command row, played
    without a transaction: the hand read without a lock, then one statement that writes all
    three, atomic by itself (PostgreSQL). Two round trips instead of four (BEGIN, the locking
    read, the write, COMMIT), and no row lock to write; one when this process wrote the hand's
    last event and still holds it (recent.py): then the hand is not read at all.

    The statement is the lock: it updates the hand row only if it is still being played at
    the seq read, and the (hand, seq) unique constraint backs it (store.save); if another
    command appended to the hand since it was read, or the row changed otherwise, the
    statement fails and writes nothing. The update runs before the inserts
    (store._execute_guarded), so the statement waits for a locked writer rather than
    deadlocking with it. A move with chips to post, or that ends its hand, goes on in a
    transaction on the hand as read here (``_in_guarded``). ``None`` whenever the answer
    needs more: not the hand's current seq (a retry, a stale move), no usable snapshot (a
    replay needs the lock), an illegal move (its refusal), a statement refused by a
    constraint, or a refusal in ``_in_guarded``; the caller then plays the command as always,
    in a transaction with the hand locked, which gives the same answer it gave before this
    path existed. _DealFailed: ``_in_guarded`` rolled back because the next hand's deal
    failed."""
    kept = recent.hands.take(hand_id, seq)
    if kept is not None:  # this process wrote the hand's last event: no read
        hand, seats, loaded = kept.hand, list(kept.seats), kept.loaded
    else:
        try:
            hand, seats = store.read_hand(hand_id)
        except Hand.DoesNotExist:
            return None
        if seq != hand.last_seq or hand.status == Hand.Status.OVER:
            return None
        found = store.from_snapshot(hand)
        if found is None:
            return None
        loaded = found
    table = Table(partie=hand.partie, seats=seats, one_statement=True)
    seat = table.seat_of(user.pk)
    if seat is None:
        return None
    first_new = hand.last_seq + 1
    try:
        loaded = apply_move(table, hand, loaded, seat, move, BY_PLAYER, actor=user,
                            command_id=command_id, now=at)
        loaded = advance(table, hand, loaded, now=at)
    except RuleError:
        return None
    if table.accounts.holds() or hand.status == Hand.Status.OVER:
        # Chips to post, or the hand's end (the partie's row, the next deal): a transaction.
        return _in_guarded(hand, seats, table, loaded, seat, user, command_id, at, request,
                           first_new)
    response, command = _answer(hand, first_new, user, command_id, request)
    try:
        store.save(hand, loaded, pending=table.events, command=command,
                   timer_armed=table.timer_armed)
    except (StaleSequence, CommandConflict):
        return None
    recent.hands.keep(hand, seats, loaded)
    for callback in table.after:  # what the transaction would have run on commit
        callback()
    return MovePlayed(response=response, hand=hand, loaded=loaded, seat=seat)


def _in_guarded(hand: Hand, seats: list[Seat], table: Table, loaded: store.Loaded, seat: int,
                user: AbstractBaseUser, command_id: uuid.UUID, at: datetime,
                request: dict[str, Any], first_new: int) -> MovePlayed | None:
    """A move that ``_in_one_statement`` played and found to post chips or end its hand,
    written in a transaction on the hand as that path read it (or kept it), without the
    locking read that ``_in_transaction`` opens with, and without playing the move again: the
    ``table`` holds what it played (its events, its payments held, its callbacks for the
    commit in ``after``). The transaction's first statement is the hand's guarded write
    (store.save), which takes the hand's row lock and refuses the whole command if the hand
    moved on since it was read. The payments held are posted after that write: with the next
    hand's antes when the command deals it, in one batch, else on their own. A move that ends
    a hand and deals the next makes two round trips fewer, five in all: no locking read, one
    ledger batch instead of two (bench/api_bench.md, tenth round).

    ``None`` if the hand had moved on, the command id was used before, a payment was refused,
    the database gave up on the transaction (a deadlock, a lock or statement time-out), or the
    hand's read was not the hand's state: that transaction is rolled back whole, and the caller
    plays the move as always (``_in_transaction``), which gives the answer it gave before this
    path existed. A failed deal of the next hand raises _DealFailed, rolled back too: the
    caller plays the move again, locked, without the deal."""
    committed: list[bool] = []
    try:
        with transaction.atomic():
            # The first callback on commit: whether the commit happened, if a later one fails.
            transaction.on_commit(lambda: committed.append(True))
            table.one_statement = False  # from here on, callbacks wait for this commit
            for callback in table.after:
                transaction.on_commit(callback)
            table.after.clear()
            response, command = _answer(hand, first_new, user, command_id, request)
            _write(table, hand, loaded, at, command, deal=True)  # the guarded write first
            if hand.status == Hand.Status.PLAYING:  # its next move need not read it
                kept = hand, loaded
                transaction.on_commit(lambda: recent.hands.keep(kept[0], seats, kept[1]))
    except (GameError, LedgerError, OperationalError):
        if committed:  # a callback failed after the commit: the move was played, not refused
            raise
        return None
    return MovePlayed(response=response, hand=hand, loaded=loaded, seat=seat)


def _deal_at_once(table: Table, last: Hand, at: datetime,
                  command: dict[str, Any] | None = None) -> bool:
    """A partie without a pause between hands deals its next hand in the command that ended
    the last one (as a table without delays plays a forced move at once), so that the players
    learn it from the answer instead of asking until a timer has dealt it. Nothing to do when
    there is a pause to wait (the timer deals), or when the partie is over (its end condition
    was met, and this command closed it).

    A move's ``command`` row is written with the first new hand's row, its answer naming that
    hand (``next_hand``); then True. That first deal is part of the move's transaction: if it
    fails, _DealFailed, and the move is played again without it (move_play), since the hand's
    end must not depend on the next deal. Without ``command`` (a timer's move), it has a
    savepoint of its own instead, and a failure rolls back the deal alone.

    A new hand that ends at its deal (a forced announcement, a table of bots) is followed at
    once by the next, up to ``CHAINED_DEALS`` hands in one command, each in a savepoint; the
    finished hand's view then names its successor, and nobody waits for a timer. Past that
    bound, or after a deal that failed, the timer queued by the last hand's end deals the
    next."""
    if table.partie.pause_between_hands:
        return False
    first = None
    for _ in range(CHAINED_DEALS):
        alone = first is None and command is not None
        try:
            dealt = deal_after(table=table, last=last, at=at, savepoint=not alone,
                               command=command if alone else None)
        except CommandConflict:
            raise  # the move's own command id, written with the new hand: the move's refusal
        except Exception as exc:
            logger.exception("dealing the next hand of partie %s failed; left to the timer",
                             table.partie.pk)
            if alone:
                raise _DealFailed from exc
            break
        if dealt is None:
            break
        table.accounts.flush()  # payments held (_in_guarded) go with the first deal's antes
        last = dealt
        if first is None:
            first = dealt
            table.next_hand_dealt = True
        if dealt.status != Hand.Status.OVER:
            break
    return first is not None and command is not None


def _answered_before(hand: Hand, request: dict[str, Any], user: AbstractBaseUser,
                     command_id: uuid.UUID) -> dict[str, Any]:
    """The stored answer of a retried command, or why the move cannot be played.

    Only a move that does not answer the hand's current seq can be a retry: applying a command
    moves its hand past the seq it answered. So the usual move skips this lookup, and the
    Command row's primary key refuses an id already used at another hand or seq."""
    done = Command.objects.filter(command_id=command_id).first()
    if done is not None:
        if done.request != request or done.user_id != user.pk:
            raise CommandConflict(store.COMMAND_REUSED)
        return dict(done.response)
    # The seq first: a move that lost the race to the hand's last move is a 409 like any
    # other lost race, whether or not that last move ended the hand.
    if request["seq"] != hand.last_seq:
        raise StaleSequence(f"the hand is at seq {hand.last_seq}, your move answers "
                            f"{request['seq']}; reload the hand")
    raise HandIsOver("this hand is over: no move can be played")


def timer_fire(*, hand_id: Any, armed: datetime, at: datetime,
               arm: Callable[[datetime], None]) -> tuple[bool, datetime | None]:
    """The hand's armed timer (Celery timers, games/tasks.py), due at ``armed``, runs at ``at``.

    If the hand still counts on it (``timer_at`` is ``armed``) and its deadline has passed, the
    pending decision is played (``deadline_fire``), and the command that plays it arms the
    timer of the decision that follows. If the deadline is still to come (the commands since it
    was armed set later ones and queued nothing), or the decision was played meanwhile, the
    timer is armed again for the deadline the hand has now: ``timer_at`` set to it, compared and
    set under the hand's lock, so that a command arming its own at the same time wins, and
    ``arm(deadline)`` called before that commits (queued after the commit, a crash between the
    two would lose the hand's timer: a redelivered task would find ``timer_at`` moved on).

    A deadline that has passed and that ``deadline_fire`` still did not play (a hand edited by
    hand, a partie closed under it) is left to the sweeper rather than queued again at once,
    which would run again and again. Returns whether it played, and the time it armed again
    for (``None``: the hand is over, waits for nothing, another task serves it, or the sweeper
    will)."""
    current = Hand.objects.filter(pk=hand_id).values_list(
        "status", "deadline", "deadline_seq", "timer_at", "last_seq").first()
    if current is None:
        return False, None
    status, deadline, seq, timer_at, last_seq = current
    if status != Hand.Status.PLAYING or timer_at != armed:
        return False, None
    if deadline is not None and seq is not None and deadline <= at and deadline_fire(
            hand_id=hand_id, seq=seq, at=at, last_seq=last_seq):
        return True, None
    with transaction.atomic():
        due = (Hand.objects.select_for_update()
               .filter(pk=hand_id, status=Hand.Status.PLAYING, timer_at=armed,
                       deadline__isnull=False)
               .values_list("deadline", flat=True).first())
        if due is None:
            return False, None
        if due <= at:
            logger.warning("hand %s: deadline %s passed but not played; left to the sweeper",
                           hand_id, due.isoformat())
            return False, None
        if not Hand.objects.filter(pk=hand_id, timer_at=armed).update(timer_at=due):
            return False, None  # SQLite has no row lock: a command armed its own meanwhile
        arm(due)
    return False, due


def deadline_fire(*, hand_id: Any, seq: int, at: datetime, last_seq: int | None = None) -> bool:
    """Play the pending decision's move if the hand still waits for it at ``seq`` and it is
    due; otherwise do nothing (a late or duplicated timer is harmless). True if it played.

    Most timers find their hand moved on: every move sets a deadline, and the next move makes
    it stale. That is answered by one unlocked read of two columns, without a transaction or
    the hand's lock: a hand's seq only grows and a finished hand is never played again, so a
    hand past ``seq`` or over is past it for good. Only a hand still at ``seq`` is locked and
    checked again. ``last_seq``: the hand's, as a caller that found it being played has just
    read it (timer_fire, the sweeper); that read stands for this one."""
    if last_seq is None:
        current = Hand.objects.filter(pk=hand_id).values_list("last_seq", "status").first()
        if current is None or current != (seq, Hand.Status.PLAYING):
            return False
    elif last_seq != seq:
        return False
    with transaction.atomic():
        try:
            hand, table = _locked_table(hand_id)
        except Hand.DoesNotExist:
            return False
        if (hand.status != Hand.Status.PLAYING or hand.deadline is None
                or hand.deadline_seq != seq or hand.last_seq != seq or hand.deadline > at):
            return False
        if hand.partie.status == Partie.Status.OVER:
            return False
        loaded = store.load(hand)
        loaded = fire(table, hand, loaded, now=at)
        _save(table, hand, loaded)
        if hand.status == Hand.Status.OVER:
            _deal_at_once(table, hand, at)  # each deal in a savepoint: a timer's move
        return True
