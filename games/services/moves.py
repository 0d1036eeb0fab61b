"""A player's move, and the move the service plays when a deadline passes.

Each is one transaction (ARCHITECTURE.md, command flow): lock the hand, replay its events,
let the engine decide, append the events it produced, post their chips, write the hand, and
on commit queue the next deadline's timer and announce the events.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from games import signing
from games.engine.base import BY_PLAYER, Move, RuleError
from games.engine.shares import is_share, is_shuffling, share_event
from games.errors import (
    AlreadyDealt,
    CommandConflict,
    HandIsOver,
    IllegalMoveError,
    NotSeated,
    PartieOver,
    ShareAlreadySent,
    ShareRefused,
    StaleSequence,
)
from games.models import Command, Hand, Partie, Seat

from . import store
from .advance import (
    KIND_COMET,
    Table,
    advance,
    append_events,
    apply_move,
    deal_hand,
    fire,
    save,
    table_for,
    wait_for_shares,
)
from .parties import deal_after

logger = logging.getLogger(__name__)

#: Hands one command may deal in a row at zero pause, while each ends at its deal.
CHAINED_DEALS = 4


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
    #: Chosen during a Comet chance: played when the chance ends (``response["played_at"]``).
    pending: bool = False


def _locked(hand_id: Any) -> tuple[Hand, Table]:
    """The hand with its partie and seed, its row locked until the command commits: the lock
    serialises the writers of one hand (the (hand, seq) unique constraint backs it)."""
    hand = (Hand.objects.select_for_update(of=("self",))
            .select_related("partie", "secret").get(pk=hand_id))
    return hand, table_for(hand.partie)


def move_play(
    *, hand_id: uuid.UUID, user: AbstractBaseUser, move: Move, seq: int,
    command_id: uuid.UUID, at: datetime,
) -> MovePlayed:
    """Play ``move`` for ``user``'s seat, answering the hand at ``seq``; idempotent by id."""
    request = {"hand": str(hand_id), "seq": seq, "move": move.to_dict()}
    with transaction.atomic():
        hand, table = _locked(hand_id)
        seat = table.seat_of(user.pk)
        # Who may move, before when: one without a seat is refused as such (403), whatever
        # seq he answers. A seated player's own retry is answered below.
        if seat is None:
            raise NotSeated(_("you have no seat at this table"))
        if seq != hand.last_seq or hand.status == Hand.Status.OVER:
            response = _answered_before(hand, request, user, command_id)
            return MovePlayed(response, hand, store.load(hand, len(table.seats)), seat,
                              retried=True)
        loaded = store.load(hand, len(table.seats))
        if seat in table.away:  # a player who moves has come back to the table
            Seat.objects.filter(partie_id=hand.partie_id, number=seat).update(away=False)
            table.away.discard(seat)
        first_new = hand.last_seq + 1
        if hand.deadline_kind == KIND_COMET and hand.deadline is not None:
            # A click during a Comet chance is played when the chance ends, as a standing
            # order is: the chance lasts the same whoever holds the Comet and however he
            # decides (RULES.md §2).
            if Command.objects.filter(command_id=command_id).exists():  # a retry
                response = _answered_before(hand, request, user, command_id)
                return MovePlayed(response, hand, loaded, seat, retried=True,
                                  pending="pending" in response)
            _legal_or_refused(loaded, seat, move, command_id)
            chosen = {"hand": str(hand.pk), "seq": hand.last_seq, "move": move.to_dict()}
            Seat.objects.filter(partie_id=hand.partie_id, number=seat).update(pending=chosen)
            next(s for s in table.seats if s.number == seat).pending = chosen
            if at < hand.deadline:
                response = {"hand": str(hand.id), "seq": hand.last_seq,
                            "applied_from_seq": None, "pending": move.to_dict(),
                            "played_at": hand.deadline.isoformat(), "next_hand": None}
                _command(command_id, hand, user, request, response)
                return MovePlayed(response=response, hand=hand, loaded=loaded, seat=seat,
                                  pending=True)
            loaded = fire(table, hand, loaded, now=at)  # the chance is over: play it now
            save(table, hand)
            dealt = deal_at_once(table, hand, at)
            response = {"hand": str(hand.id), "seq": hand.last_seq,
                        "applied_from_seq": first_new,
                        "next_hand": store.hand_ref(dealt.pk, dealt.number) if dealt else None}
            _command(command_id, hand, user, request, response)
            return MovePlayed(response=response, hand=hand, loaded=loaded, seat=seat)
        try:
            loaded = apply_move(table, hand, loaded, seat, move, BY_PLAYER, actor=user,
                                command_id=command_id, now=at)
        except RuleError as exc:
            # An id already used is a reused id whatever the move (409, as a legal move's is
            # below), not an illegal move: a command at the hand's current seq is never a
            # retry, since applying one moves its hand on. Looked up only on this error path.
            if Command.objects.filter(command_id=command_id).exists():
                raise CommandConflict(store.COMMAND_REUSED) from None
            raise IllegalMoveError(exc.message, rule=exc.rule) from None
        loaded = advance(table, hand, loaded, now=at)
        save(table, hand)
        dealt = deal_at_once(table, hand, at)
        response = {"hand": str(hand.id), "seq": hand.last_seq, "applied_from_seq": first_new,
                    "next_hand": store.hand_ref(dealt.pk, dealt.number) if dealt else None}
        _command(command_id, hand, user, request, response)
        return MovePlayed(response=response, hand=hand, loaded=loaded, seat=seat)


def _command(command_id: uuid.UUID, hand: Hand, user: AbstractBaseUser,
             request: dict[str, Any], response: dict[str, Any]) -> None:
    try:
        Command.objects.create(command_id=command_id, hand=hand, user=user,
                               request=request, response=response)
    except IntegrityError:
        # An id that answered a move elsewhere (a retry of this one never gets here: its
        # hand has moved past the seq it answered). The whole move rolls back.
        raise CommandConflict(store.COMMAND_REUSED) from None


def _legal_or_refused(loaded: store.Loaded, seat: int, move: Move,
                      command_id: uuid.UUID) -> None:
    """The engine's refusal of ``move`` (as ``apply_move`` would give it), or nothing."""
    try:
        loaded.game.decide(loaded.state, seat, move, BY_PLAYER)
    except RuleError as exc:
        if Command.objects.filter(command_id=command_id).exists():
            raise CommandConflict(store.COMMAND_REUSED) from None
        raise IllegalMoveError(exc.message, rule=exc.rule) from None


def share_send(*, hand_id: uuid.UUID, user: AbstractBaseUser, share: str,
               at: datetime) -> dict[str, Any]:
    """``user``'s share of randomness for the deal of the hand (HAND_RECORD.md, version 2):
    once per hand and seat, before the deal. The share that completes the people's shares
    deals the hand in the same command."""
    if not is_share(share):
        raise ShareRefused(_("a share is 32 random bytes written as 64 lowercase hex digits"))
    with transaction.atomic():
        hand, table = _locked(hand_id)
        seat = table.seat_of(user.pk)
        if seat is None:
            raise NotSeated(_("you have no seat at this table"))
        if seat not in table.people:
            raise ShareRefused(_("a bot's seat sends no share"))
        loaded = store.load(hand, len(table.seats))
        state = loaded.state
        if not is_shuffling(state):
            if store.shared(hand) and _sent(loaded, seat):
                raise ShareAlreadySent(_("your share for this hand is already in"))
            raise AlreadyDealt(_("this hand is already dealt: a share can no longer count"))
        if seat in state.sent:
            raise ShareAlreadySent(_("your share for this hand is already in"))
        loaded = append_events(table, hand, loaded, [share_event(seat, share)], actor=user,
                               now=at)
        dealt = set(table.people) <= set(loaded.state.sent)
        if dealt:
            loaded = deal_hand(table, hand, loaded, now=at)
        elif hand.deadline is not None:
            # The window's end is unchanged; its timer now answers this seq.
            wait_for_shares(hand, hand.deadline)
        save(table, hand)
        deal_at_once(table, hand, at)
        return {"hand": str(hand.id), "seat": seat, "seq": hand.last_seq, "dealt": dealt,
                "receipt": signing.hand_receipt(hand, hand.last_seq, hand.last_hash)}


def _sent(loaded: store.Loaded, seat: int) -> bool:
    return any(e["type"] == "share" and e["seat"] == seat for e in loaded.stream)


def deal_at_once(table: Table, last: Hand, at: datetime) -> Hand | None:
    """A partie without a pause between hands deals its next hand in the command that ended
    the last one, so that the players learn it from the answer instead of waiting for a
    timer. A new hand that ends at its deal (a forced announcement, a table of bots) is
    followed at once by the next, up to ``CHAINED_DEALS`` in one command. Each deal has a
    savepoint: one that fails rolls back alone, and the timer queued by the hand's end deals
    it. Returns the first hand dealt, if any."""
    if last.status != Hand.Status.OVER or table.partie.pause_between_hands:
        return None
    first = None
    assert table.outbox is not None
    for _attempt in range(CHAINED_DEALS):
        mark = table.outbox.mark()
        try:
            with transaction.atomic():
                dealt = deal_after(table=table, last=last, at=at)
        except Exception:
            table.outbox.undo(mark)
            logger.exception("dealing the next hand of partie %s failed; left to the timer",
                             table.partie.pk)
            break
        if dealt is None:
            break
        first = first or dealt
        last = dealt
        if dealt.status != Hand.Status.OVER:
            break
    return first


def _answered_before(hand: Hand, request: dict[str, Any], user: AbstractBaseUser,
                     command_id: uuid.UUID) -> dict[str, Any]:
    """The stored answer of a retried command, or why the move cannot be played.

    Only a move that does not answer the hand's current seq can be a retry: applying a command
    moves its hand past the seq it answered."""
    done = Command.objects.filter(command_id=command_id).first()
    if done is not None:
        if done.request != request or done.user_id != user.pk:
            raise CommandConflict(store.COMMAND_REUSED)
        return dict(done.response)
    # The seq first: a move that lost the race to the hand's last move is a 409 like any
    # other lost race, whether or not that last move ended the hand.
    if request["seq"] != hand.last_seq:
        raise StaleSequence(_("the hand is at seq {seq}, your move answers {asked}; reload the "
                              "hand").format(seq=hand.last_seq, asked=request["seq"]))
    raise HandIsOver(_("this hand is over: no move can be played"))


def deadline_fire(*, hand_id: Any, seq: int, at: datetime) -> bool:
    """Play the pending decision's move if the hand still waits for it at ``seq`` and it is
    due; otherwise do nothing, so a late or duplicated timer is harmless. True if it played.

    Most timers find their hand moved on (every move sets a new deadline): one read of two
    columns answers them without the hand's lock. A hand's seq only grows and a finished hand
    is never played again, so a hand past ``seq`` or over stays so; only a hand still at
    ``seq`` is locked and checked again (compare and set)."""
    if not Hand.objects.filter(pk=hand_id, last_seq=seq, status=Hand.Status.PLAYING).exists():
        return False
    with transaction.atomic():
        try:
            hand, table = _locked(hand_id)
        except Hand.DoesNotExist:
            return False
        if (hand.status != Hand.Status.PLAYING or hand.deadline is None
                or hand.deadline_seq != seq or hand.last_seq != seq or hand.deadline > at
                or hand.partie.status == Partie.Status.OVER):
            return False
        loaded = store.load(hand, len(table.seats))
        fire(table, hand, loaded, now=at)
        save(table, hand)
        deal_at_once(table, hand, at)
        return True


def seat_away(*, partie_id: Any, user: AbstractBaseUser, away: bool, at: datetime) -> bool:
    """The player leaves the table (``away``) or comes back. While he is away every decision
    of his is played at once by the time-out rule; one he is awaited for now is played now.
    Returns whether he is away."""
    with transaction.atomic():
        seat = (Seat.objects.select_for_update().select_related("partie")
                .filter(partie_id=partie_id, player_id=user.pk).first())
        if seat is None:
            raise NotSeated(_("you have no seat at this table"))
        if seat.partie.status != Partie.Status.PLAYING:
            raise PartieOver(_("this partie is over"))
        seat.away = away
        seat.save(update_fields=["away"])
        current = (Hand.objects.filter(partie_id=partie_id, status=Hand.Status.PLAYING)
                   .values_list("pk", flat=True).first())
        if away and current is not None:
            hand, table = _locked(current)
            loaded = store.load(hand, len(table.seats))
            # A pending deadline of his own (not the Comet window: that waits alike for all).
            if (hand.status == Hand.Status.PLAYING and hand.deadline_kind != KIND_COMET
                    and loaded.game.to_act(loaded.state)[:1] == [seat.number]):
                fire(table, hand, loaded, now=at)
                save(table, hand)
                deal_at_once(table, hand, at)
    return away


def seat_comet_order(*, partie_id: Any, user: AbstractBaseUser, order: str | None = None) -> str:
    """The seated player's standing order for the Comet (RULES.md §2), set if ``order`` is
    given. Any seat may hold one: having one says nothing of who holds the Comet."""
    with transaction.atomic():
        seat = (Seat.objects.select_for_update()
                .filter(partie_id=partie_id, player_id=user.pk).first())
        if seat is None:
            raise NotSeated(_("you have no seat at this table"))
        if order is not None and order != seat.comet_order:
            seat.comet_order = order
            seat.save(update_fields=["comet_order"])
        return str(seat.comet_order)
