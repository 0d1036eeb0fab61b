"""After every move: let bots play, schedule forced moves and deadlines, end the hand.

RULES.md §3: a seat's only legal move is played for it by the service, at once for a bot, after
``forced_move_delay`` for a person, and in Comet never before the Comet holder's ``comet_window``
has passed (while a person holds the Comet and may still play it). Every other decision has a
deadline (``move_timeout``) after which the default move is played.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from games import live
from games.engine.base import BY_FORCED, BY_PLAYER, BY_TIMEOUT, Move
from games.engine.bots import make_bot
from games.models import Hand, Partie, Seat

from . import chips, store

KIND_TIMEOUT = "timeout"
KIND_FORCED = "forced"
KIND_BOT = "bot"
MAX_STEPS = 10_000


@dataclass
class Table:
    """What a command needs to know of a partie while it plays a hand: read once per command
    (the seats and their players; the ledger accounts when a payment first needs them)."""

    partie: Partie
    seats: list[Seat]
    accounts: chips.Accounts = field(init=False)
    bots: dict[int, str] = field(init=False)
    #: The command's events, written with the hand row at its end (store.save).
    events: list[dict[str, Any]] = field(default_factory=list)
    #: The command is played to be written in one statement outside any transaction
    #: (moves._in_one_statement): it holds its payments (``accounts.hold``), and what would
    #: run on commit waits in ``after`` until it is written. If it turns out to write more
    #: than its hand's events and row (payments held, or the hand's end), the caller writes
    #: it as played in a transaction instead (moves._in_guarded), without playing it again.
    one_statement: bool = False
    after: list[Callable[[], None]] = field(default_factory=list)
    #: The command that ended the hand also dealt the next one (moves._deal_at_once): the
    #: next-hand timer queued by the hand's end has nothing left to do and is not queued.
    next_hand_dealt: bool = False
    #: The partie's fields the command changed (a hand's end, a deal), written with the hand's
    #: row (store.save's ``partie_fields``) rather than by a statement of their own.
    partie_fields: set[str] = field(default_factory=set)
    #: The partie's row is locked by this command's transaction, and ``partie`` holds it as it
    #: is now (store.save read it back as it wrote the hand's end): a deal takes it as it is.
    partie_locked: bool = False
    #: ``accounts`` hold the balances as of the hand's end (store.save read them back too): the
    #: deal that follows at once takes them; a deal after it reads them again.
    balances_fresh: bool = False
    #: The command armed its hand's timer (Celery timers: ``hand.timer_at``, _set_deadline):
    #: store.save writes that column only then.
    timer_armed: bool = False

    def on_commit(self, callback: Callable[[], None]) -> None:
        if self.one_statement:
            self.after.append(callback)
        else:
            transaction.on_commit(callback)

    def __post_init__(self) -> None:
        self.accounts = chips.Accounts(self.partie, self.seats)
        self.bots = {s.number: s.bot for s in self.seats if s.bot}
        if self.one_statement:
            self.accounts.hold()

    def seat_of(self, user_id: Any) -> int | None:
        return next((s.number for s in self.seats if s.player_id == user_id), None)


def bot_move(
    table: Table, hand: Hand, loaded: store.Loaded, seat: int, required: bool
) -> Move | None:
    # A bot's randomness comes from the hand and the point of play, so a replayed partie is
    # deterministic and two workers never disagree about a bot's choice.
    rng = random.Random(f"{hand.id}:{hand.last_seq}:{seat}")
    bot = make_bot(table.bots[seat], rng)
    legal = loaded.game.legal_moves(loaded.state).get(seat, [])
    return bot.choose(loaded.game, loaded.state, seat, legal, required)


def apply_move(
    table: Table, hand: Hand, loaded: store.Loaded, seat: int, move: Move, by: str, *,
    actor: Any = None, command_id: Any = None, now: datetime,
) -> store.Loaded:
    """Decide, append, post the chips. The caller holds the transaction and the hand's lock,
    or plays in one statement (``table.one_statement``): then the chips are held."""
    produced = loaded.game.decide(loaded.state, seat, move, by)
    sealed = store.append(hand, produced, prev_hash=loaded.last_hash, actor=actor,
                          command_id=command_id, at=now, pending=table.events)
    chips.post_payments(accounts=table.accounts, hand=hand, sealed=sealed)
    state = loaded.state
    for event in produced:
        state = loaded.game.apply(state, event)
    return store.Loaded(game=loaded.game, state=state, last_hash=sealed[-1]["hash"])


def advance(table: Table, hand: Hand, loaded: store.Loaded, *, now: datetime) -> store.Loaded:
    """Play every move that needs no waiting, then set the hand's next deadline."""
    game = loaded.game
    bots = table.bots
    partie = table.partie
    for _ in range(MAX_STEPS):
        if game.is_over(loaded.state):
            _finish(table, hand, loaded, now=now)
            _announce(table, hand)
            return loaded
        legal = game.legal_moves(loaded.state)
        awaited = game.to_act(loaded.state)
        moved = False
        # Priority: a seat that only *may* act (the Comet holder) has its chance first.
        for seat in legal:
            if seat not in awaited and bots.get(seat) not in (None, "timeout"):
                move = bot_move(table, hand, loaded, seat, required=False)
                if move is not None:
                    loaded = apply_move(table, hand, loaded, seat, move, BY_PLAYER, now=now)
                    moved = True
                    break
        if moved:
            continue
        seat = awaited[0]
        person_may_intervene = any(s not in awaited and s not in bots for s in legal)
        window = partie.comet_window if person_may_intervene else timedelta(0)
        only_move = len(legal[seat]) == 1
        if seat in bots and bots[seat] != "timeout" and not window:
            move = bot_move(table, hand, loaded, seat, required=True)
            assert move is not None
            by = BY_FORCED if only_move else BY_PLAYER
            loaded = apply_move(table, hand, loaded, seat, move, by, now=now)
            continue
        if only_move:
            delay = max(timedelta(0) if seat in bots else partie.forced_move_delay, window)
            if not delay:  # a table without delays plays the only move at once
                loaded = apply_move(table, hand, loaded, seat, legal[seat][0], BY_FORCED,
                                    now=now)
                continue
            _set_deadline(table, hand, now + delay, KIND_FORCED, now=now)
        elif seat in bots and bots[seat] != "timeout":
            _set_deadline(table, hand, now + window, KIND_BOT, now=now)
        else:
            _set_deadline(table, hand, now + partie.move_timeout, KIND_TIMEOUT, now=now)
        _announce(table, hand)
        return loaded
    raise RuntimeError(f"hand {hand.id} did not settle after {MAX_STEPS} moves")


def fire(table: Table, hand: Hand, loaded: store.Loaded, *, now: datetime) -> store.Loaded:
    """The pending decision's deadline has passed: play its move (forced, time-out or bot)."""
    game = loaded.game
    awaited = game.to_act(loaded.state)
    seat = awaited[0]
    legal = game.legal_moves(loaded.state)[seat]
    if hand.deadline_kind == KIND_BOT and seat in table.bots:
        move = bot_move(table, hand, loaded, seat, required=True)
        assert move is not None
        by = BY_FORCED if len(legal) == 1 else BY_PLAYER
    elif len(legal) == 1:
        move, by = legal[0], BY_FORCED
    else:
        move, by = game.default_move(loaded.state, seat), BY_TIMEOUT
    loaded = apply_move(table, hand, loaded, seat, move, by, now=now)
    return advance(table, hand, loaded, now=now)


def _set_deadline(table: Table, hand: Hand, at: datetime, kind: str, *, now: datetime) -> None:
    """The hand now waits for its pending decision until ``at``; its timer is queued on commit.

    Celery timers keep one task per hand (games/tasks.py): if the task armed for this hand is
    still to come and due no later than ``at``, nothing is queued (it finds this deadline when
    it runs, and is queued again for it); otherwise the command arms a task for ``at``. The
    usual move sets a later deadline than the last one, so a hand's moves queue one task, not
    one each.

    The hand's last deadline must not be later than ``at`` either. The armed task may run
    while this command is being played, find that deadline still to come and arm itself again
    for it (services.timer_fire); a command that skipped would then leave the hand waiting
    until ``at`` with its task due only at that later time. Since the hand is still at the
    seq this command read, that re-armed time can only be the hand's last deadline."""
    from games.tasks import arm_deadline, one_timer_per_hand, schedule_deadline

    last = hand.deadline
    hand.deadline = at
    hand.deadline_kind = kind
    hand.deadline_seq = hand.last_seq
    seq = hand.last_seq
    hand_id = hand.id
    if one_timer_per_hand():
        armed = hand.timer_at
        if armed is not None and now < armed <= at and last is not None and last <= at:
            return
        hand.timer_at = at
        table.timer_armed = True
        table.on_commit(lambda: arm_deadline(hand_id=hand_id, at=at))
        return
    table.on_commit(lambda: schedule_deadline(hand_id=hand_id, seq=seq, at=at))


def _announce(table: Table, hand: Hand) -> None:
    """Once the command commits, tell the partie's watchers where it left ``hand``
    (games/live.py): ``advance`` is the last step of every command on a hand."""
    message = live.announcement(partie=table.partie, hand=hand)
    table.on_commit(lambda: live.announce(message))


def _finish(table: Table, hand: Hand, loaded: store.Loaded, *, now: datetime) -> None:
    hand.status = Hand.Status.OVER
    hand.ended_at = now
    hand.deadline = None
    hand.deadline_kind = ""
    hand.deadline_seq = None
    partie = table.partie
    if partie.game == "comet":
        partie.comet_played_last = bool(loaded.game.comet_played(loaded.state))  # type: ignore[attr-defined]
    partie.next_hand_at = now + partie.pause_between_hands
    table.partie_fields.update(("comet_played_last", "next_hand_at"))  # written with the hand
    partie_id, at = partie.pk, partie.next_hand_at

    def schedule() -> None:
        from games.tasks import schedule_next_hand

        if not table.next_hand_dealt:
            schedule_next_hand(partie_id=partie_id, at=at)

    table.on_commit(schedule)


def table_for(partie: Partie) -> Table:
    """The partie and its seats, in order, with their users (a deal names them). A move reads
    its table with its hand instead (store.lock_hand)."""
    return Table(partie=partie, seats=store.seats(partie))


def now() -> datetime:
    return timezone.now()
