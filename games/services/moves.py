"""A player's move, and the move the service plays when a deadline passes.

Each is one transaction (ARCHITECTURE.md, command flow): lock the hand, replay its events,
let the engine decide, append the events it produced, post their chips, write the hand, and
on commit queue the next deadline's timer and announce the events.

A player may leave the table and come back (``seat_away``); at a casual table he may pause it
until he is back, and the clock gives up a table paused too long (``partie_pause_expire``).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any, TypeVar

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from games import scheduling, signing
from games.engine.base import BY_PLAYER, Move, RuleError
from games.engine.shares import is_share, is_shuffling, share_event
from games.errors import (
    AlreadyDealt,
    CommandConflict,
    GameError,
    HandIsOver,
    IllegalMoveError,
    NotSeated,
    OrderRefused,
    PartieOver,
    PauseRefused,
    ShareAlreadySent,
    ShareRefused,
    StaleSequence,
    TablePaused,
)
from games.models import Command, Hand, Partie, Seat

from . import store
from .advance import (
    KIND_COMET,
    KIND_PAUSED,
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
from .invitations import CASUAL
from .parties import deal_after, partie_stop_dealing

logger = logging.getLogger(__name__)

#: Hands one command may deal in a row at zero pause, while each ends at its deal.
CHAINED_DEALS = 4
#: How a player leaves the table (RULES.md §3, leaving the table): the table waits for him (a
#: casual table only), or the time-out rule plays his decisions at once.
LEAVE_PAUSE = "pause"
LEAVE_TIMEOUT = "timeout"
LEAVING = (LEAVE_PAUSE, LEAVE_TIMEOUT)
#: A casual table paused this long is given up, as a table its players have left.
PAUSE_LIMIT = timedelta(minutes=30)


class _Back(Exception):  # noqa: N818 (a signal between two steps of move_play, not an error)
    """The mover is one the paused table waits for: he comes back first (``move_play``)."""

    def __init__(self, *, partie_id: Any) -> None:
        super().__init__()
        self.partie_id = partie_id


def pause_allowed(partie: Partie) -> bool:
    """Only a casual table waits for a player who left it: a soirée's table plays on (the
    evening would wait for him), and the time-out rule plays for him there."""
    return partie.club_key == CASUAL


def _waiting_for(table: Table) -> list[str]:
    """The usernames of the players a paused table waits for."""
    return [s.player.get_username() for s in table.seats if s.pauses]


def _paused_error(names: list[str]) -> str:
    return _("the table is paused, waiting for %(names)s") % {"names": ", ".join(names)}


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
    hand = (Hand.objects.select_for_update(of=("self",), no_key=True)
            .select_related("partie", "secret").get(pk=hand_id))
    return hand, table_for(hand.partie)


def move_play(
    *, hand_id: uuid.UUID, user: AbstractBaseUser, move: Move, seq: int,
    command_id: uuid.UUID, at: datetime,
) -> MovePlayed:
    """Play ``move`` for ``user``'s seat, answering the hand at ``seq``; idempotent by id.

    At a paused table only one it waits for may move: his move brings him back, which resumes
    the table if it waited for him alone (then his move is played as any), and is refused if it
    still waits for another (he is back all the same)."""
    command = partial(_move_play, hand_id=hand_id, user=user, move=move, seq=seq,
                      command_id=command_id, at=at)
    try:
        return command()
    except _Back as back:
        partie_id = back.partie_id
    # His return in a transaction of its own, committed whatever becomes of the move.
    seat_away(partie_id=partie_id, user=user, away=False, at=at)
    return command()


def _move_play(
    *, hand_id: uuid.UUID, user: AbstractBaseUser, move: Move, seq: int,
    command_id: uuid.UUID, at: datetime,
) -> MovePlayed:
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
        if hand.deadline_kind == KIND_PAUSED:
            waiting = _waiting_for(table)
            if any(s.pauses for s in table.seats if s.number == seat):
                raise _Back(partie_id=hand.partie_id)
            raise TablePaused(_paused_error(waiting))
        loaded = store.load(hand, len(table.seats))
        if seat in table.away:  # a player who moves has come back to the table
            Seat.objects.filter(partie_id=hand.partie_id, number=seat).update(away=False,
                                                                              pauses=False)
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
        # A paused table deals nothing: the share counts, and the deal waits for the resume.
        dealt = (set(table.people) <= set(loaded.state.sent)
                 and hand.deadline_kind != KIND_PAUSED)
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


def seat_away(*, partie_id: Any, user: AbstractBaseUser, away: bool, at: datetime,
              how: str = LEAVE_TIMEOUT) -> bool:
    """The player leaves the table (``away``) or comes back (RULES.md §3, leaving the table).

    He leaves ``how`` he chooses: ``timeout``, every decision of his is played at once by the
    time-out rule (one he is awaited for now, now); ``pause``, at a casual table only, the table
    waits for him: no deadline runs, no bot moves, no hand is dealt. A table that no longer
    waits for anyone resumes, its deadlines starting afresh at ``at``. Returns whether he is
    away."""
    if how not in LEAVING:
        raise GameError(_("unknown way to leave %(how)s: choose %(choices)s")
                        % {"how": repr(how), "choices": ", ".join(LEAVING)}, code="invalid")

    def leave(partie: Partie, hand: Hand | None, table: Table) -> bool:
        seat = next((s for s in table.seats if s.player_id == user.pk), None)
        if seat is None:
            raise NotSeated(_("you have no seat at this table"))
        if partie.status != Partie.Status.PLAYING:
            raise PartieOver(_("this partie is over"))
        pauses = away and how == LEAVE_PAUSE
        if pauses and not pause_allowed(partie):
            raise PauseRefused(_("a soirée's table does not wait for a player who leaves it: "
                                 "the time-out rule plays for him until he is back"))
        seat.away, seat.pauses = away, pauses
        seat.save(update_fields=["away", "pauses"])
        if away:
            table.away.add(seat.number)
        else:
            table.away.discard(seat.number)
        paused, waits = partie.paused_at is not None, any(s.pauses for s in table.seats)
        if waits and not paused:
            _pause(table, hand, at)
        elif paused and not waits:
            _resume(table, hand, at)
        elif away and not paused and hand is not None and hand.deadline_kind != KIND_COMET:
            # A pending deadline of his own (not the Comet window: that waits alike for all).
            loaded = store.load(hand, len(table.seats))
            if loaded.game.to_act(loaded.state)[:1] == [seat.number]:
                fire(table, hand, loaded, now=at)
                save(table, hand)
                deal_at_once(table, hand, at)
        return away

    return _at_the_table(partie_id, leave)


def partie_pause_expire(*, partie_id: Any, at: datetime) -> bool:
    """Give up a casual table paused for ``PAUSE_LIMIT``, as a table its players left: the time-
    out rule plays for those it waited for, the hand in play is finished, and no hand is dealt
    after it. Does nothing to a table paused for less, so a late or repeated sweep is harmless.
    True if it gave the table up."""

    def give_up(partie: Partie, hand: Hand | None, table: Table) -> bool:
        if (partie.status != Partie.Status.PLAYING or partie.paused_at is None
                or at < partie.paused_at + PAUSE_LIMIT):
            return False
        Seat.objects.filter(partie=partie, pauses=True).update(pauses=False)
        for seat in table.seats:
            seat.pauses = False
        # Between hands this closes the partie now (and says so); otherwise after the hand in
        # play, which the time-out rule finishes for them.
        partie_stop_dealing(partie_id=partie.pk, until=at, at=at)
        if hand is None:
            partie.paused_at = None
            partie.save(update_fields=["paused_at"])
        else:
            _resume(table, hand, at)
        return True

    return _at_the_table(partie_id, give_up)


class _Dealt(Exception):
    """The partie's hand in play changed between its read and the locks: start again."""


_T = TypeVar("_T")


def _at_the_table(partie_id: Any, work: Callable[[Partie, Hand | None, Table], _T]) -> _T:
    """``work`` in one transaction, on the partie and its hand in play (if any) locked in the
    order a move takes them: the hand, then the partie (its end writes the partie). A pause
    thus waits for a move in flight and never deadlocks one; a deal needs the partie's lock, so
    once it is held the hand in play is the one locked, or the transaction starts again."""
    for _attempt in range(5):
        try:
            with transaction.atomic():
                playing = Hand.objects.filter(partie_id=partie_id, status=Hand.Status.PLAYING)
                hand_id = playing.values_list("pk", flat=True).first()
                hand = (None if hand_id is None else
                        Hand.objects.select_for_update(of=("self",), no_key=True)
                        .select_related("secret").get(pk=hand_id))
                partie = Partie.objects.select_for_update(no_key=True).get(pk=partie_id)
                if playing.values_list("pk", flat=True).first() != hand_id:
                    raise _Dealt
                if hand is not None:
                    hand.partie = partie
                return work(partie, hand, table_for(partie))
        except _Dealt:
            continue
    raise CommandConflict(_("the table is dealing its next hand: try again"), code="table_busy")


def _pause(table: Table, hand: Hand | None, at: datetime) -> None:
    """The table waits: its hand in play waits on no deadline (a timer already queued finds
    none), and no next hand is due."""
    partie = table.partie
    partie.paused_at = at
    partie.next_hand_at = None
    partie.save(update_fields=["paused_at", "next_hand_at"])
    if hand is not None:
        hand.deadline, hand.deadline_seq, hand.deadline_kind = None, None, KIND_PAUSED
        save(table, hand)
    assert table.outbox is not None
    table.outbox.pause(True)


def _resume(table: Table, hand: Hand | None, at: datetime) -> None:
    """The table plays again as if its pending decision had just come: what needs no waiting
    is played (the absent players' decisions by the time-out rule, the bots'), and the next
    deadline, or the pause before the next hand, runs from ``at``. The same for every seat:
    a resume tells nothing of anyone's cards."""
    partie = table.partie
    partie.paused_at = None
    fields = ["paused_at"]
    if hand is None and partie.status == Partie.Status.PLAYING:
        partie.next_hand_at = due = at + partie.pause_between_hands
        fields.append("next_hand_at")
        partie_pk = partie.pk
        transaction.on_commit(lambda: scheduling.next_hand_due(partie_id=partie_pk, at=due))
    partie.save(update_fields=fields)
    assert table.outbox is not None
    table.outbox.pause(False)
    if hand is None:
        return
    hand.deadline_kind = ""
    loaded = store.load(hand, len(table.seats))
    if not is_shuffling(loaded.state):
        advance(table, hand, loaded, now=at)
    elif set(table.people) <= set(loaded.state.sent):  # every share came during the pause
        deal_hand(table, hand, loaded, now=at)
    else:
        wait_for_shares(hand, at + partie.share_window)
    save(table, hand)
    deal_at_once(table, hand, at)


#: The shortest Comet window in which "ask me" is offered: a person reads the table, decides
#: and clicks in it. A shorter window leaves the Comet to the other orders and the button.
ASK_WINDOW_MIN = timedelta(seconds=8)


def seat_comet_order(*, partie_id: Any, user: AbstractBaseUser, order: str | None = None) -> str:
    """The seated player's standing order for the Comet (RULES.md §2), set if ``order`` is
    given. Any seat may hold one: having one says nothing of who holds the Comet. "Ask me" is
    refused at a table whose Comet window is shorter than ``ASK_WINDOW_MIN``."""
    with transaction.atomic():
        # The seat's row alone is locked: its partie is read for its window, not written.
        seat = (Seat.objects.select_for_update(no_key=True, of=("self",))
                .select_related("partie")
                .filter(partie_id=partie_id, player_id=user.pk).first())
        if seat is None:
            raise NotSeated(_("you have no seat at this table"))
        window = seat.partie.comet_window
        if order == Seat.CometOrder.ASK and window < ASK_WINDOW_MIN:
            raise OrderRefused(
                _("“ask me” needs a Comet window of at least %(least)s s to decide in; this "
                  "table's is %(window)s s: choose another order, or play the Comet with its "
                  "button") % {"least": int(ASK_WINDOW_MIN.total_seconds()),
                               "window": f"{window.total_seconds():g}"})
        if order is not None and order != seat.comet_order:
            seat.comet_order = order
            seat.save(update_fields=["comet_order"])
        return str(seat.comet_order)
