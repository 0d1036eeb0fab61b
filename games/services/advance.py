"""After every move: let bots play, set forced moves and deadlines, end the hand.

RULES.md §3: a seat's only legal move is played for it by the service, at once for a bot, after
``forced_move_delay`` for a person, and in Comet never before the Comet holder's ``comet_window``
has passed. Every other decision has a deadline (``move_timeout``) after which the default move
is played; for a player who left the table (``Seat.away``) it is played at once. A paused table
(``Partie.paused_at``: a person who left a casual table asked it to wait) plays nothing: its hand
waits on no deadline, with the kind ``paused``, until it resumes (``moves.seat_away``).

The Comet window is applied the same way whoever holds the Comet (a person, a bot, the awaited
seat itself): at a table with a person, every decision at which the Comet may be played waits
``max(comet_window, forced_move_delay)``, with the deadline kind ``comet``. Waiting only when a
person held it would let a spectator read the holder off the deadlines and their timing.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import transaction

from games import scheduling, signals
from games.engine.base import BY_FORCED, BY_PLAYER, BY_TIMEOUT, Move
from games.engine.bots import make_bot
from games.engine.shares import is_shuffling
from games.models import Hand, Partie, Seat

from . import chips, store

KIND_TIMEOUT = "timeout"
KIND_FORCED = "forced"
KIND_COMET = "comet"
KIND_DEAL = "deal"
#: A paused table's hand: no deadline runs and nothing is played until the table resumes. On
#: the hand row itself, which every writer of the hand locks and reads again after waiting.
KIND_PAUSED = "paused"
MAX_STEPS = 10_000


@dataclass
class Outbox:
    """What a command announces once it commits, in one message: the hands it changed, each
    with the events it appended to it, in order, whether it closed the partie, and whether it
    paused the table (True) or resumed it (False)."""

    partie: Partie
    changed: dict[Any, tuple[Hand, list[dict[str, Any]]]] = field(default_factory=dict)
    closed: bool = False
    paused: bool | None = None
    queued: bool = False

    def add(self, hand: Hand, events: list[dict[str, Any]]) -> None:
        if hand.pk in self.changed:
            self.changed[hand.pk][1].extend(events)
        else:
            self.changed[hand.pk] = (hand, list(events))
        self._queue()

    def close(self) -> None:
        self.closed = True
        self._queue()

    def pause(self, paused: bool) -> None:
        self.paused = paused
        self._queue()

    def _queue(self) -> None:
        if self.queued:
            return
        self.queued = True
        transaction.on_commit(lambda: signals.committed.send_robust(
            sender=Partie, partie=self.partie, changed=list(self.changed.values()),
            closed=self.closed, paused=self.paused))

    def mark(self) -> tuple[int, bool, bool]:
        return len(self.changed), self.closed, self.queued

    def undo(self, mark: tuple[int, bool, bool]) -> None:
        """Forget what was added since ``mark``: its savepoint rolled back (and with it an
        ``on_commit`` queued inside)."""
        n, self.closed, self.queued = mark
        for key in list(self.changed)[n:]:
            del self.changed[key]


@dataclass
class Table:
    """What a command needs to know of a partie while it plays its hands: the partie, its
    seats with their players, and the ledger accounts its payments move."""

    partie: Partie
    seats: list[Seat]
    accounts: chips.Accounts = field(init=False)
    bots: dict[int, str] = field(init=False)
    #: The seats whose players left the table (``Seat.away``).
    away: set[int] = field(init=False)
    #: The events the command appended, by hand, announced once it commits.
    appended: dict[Any, list[dict[str, Any]]] = field(default_factory=dict)
    #: The hands the command ended, announced when their rows are written.
    ended: set[Any] = field(default_factory=set)
    #: What the command announces once it commits (shared by the tables of one command).
    outbox: Outbox | None = None

    def __post_init__(self) -> None:
        if self.outbox is None:
            self.outbox = Outbox(self.partie)
        self.accounts = chips.Accounts(self.partie, self.seats)
        self.bots = {s.number: s.bot for s in self.seats if s.bot}
        self.away = {s.number for s in self.seats if s.away}

    @property
    def people(self) -> list[int]:
        """The seats of people: they send shares of randomness; bots send none."""
        return [s.number for s in self.seats if not s.bot]

    def seat_of(self, user_id: Any) -> int | None:
        return next((s.number for s in self.seats if s.player_id == user_id), None)


def table_for(partie: Partie) -> Table:
    """The partie and its seats in order, with their users (a deal names them)."""
    return Table(partie=partie, seats=list(partie.seats.select_related("player")
                                           .order_by("number")))


def bot_move(
    table: Table, hand: Hand, loaded: store.Loaded, seat: int, required: bool
) -> Move | None:
    # A bot's randomness comes from the hand's deal (its public commitment) and the point of
    # play, so a replayed partie is deterministic, two workers never disagree about a bot's
    # choice, and a seeded deal is played alike every time.
    rng = random.Random(f"{hand.commitment}:{hand.last_seq}:{seat}")
    bot = make_bot(table.bots[seat], rng)
    legal = loaded.game.legal_moves(loaded.state).get(seat, [])
    events = list(loaded.stream) if bot.needs_history else ()
    return bot.choose(loaded.game, loaded.state, seat, legal, required, events)


def apply_move(
    table: Table, hand: Hand, loaded: store.Loaded, seat: int, move: Move, by: str, *,
    actor: Any = None, command_id: Any = None, now: datetime,
) -> store.Loaded:
    """Decide, append, post the chips. The caller holds the transaction and the hand's lock."""
    produced = loaded.game.decide(loaded.state, seat, move, by)
    return append_events(table, hand, loaded, produced, actor=actor, command_id=command_id,
                         now=now)


def append_events(table: Table, hand: Hand, loaded: store.Loaded, produced: Any, *,
                  actor: Any = None, command_id: Any = None, now: datetime) -> store.Loaded:
    """Append ``produced`` to the hand's chain, post their payments, and fold them into the
    state."""
    sealed = store.append(hand, produced, prev_hash=loaded.last_hash, actor=actor,
                          command_id=command_id, at=now)
    table.appended.setdefault(hand.pk, []).extend(sealed)
    chips.post_payments(accounts=table.accounts, hand=hand, sealed=sealed)
    state = loaded.state
    for event in produced:
        state = loaded.game.apply(state, event)
    return store.Loaded(game=loaded.game, state=state, last_hash=hand.last_hash,
                        stream=(*loaded.stream, *sealed))


def wait_for_shares(hand: Hand, until: datetime) -> None:
    """A new hand waits for the people's shares until ``until``; then the timer deals it."""
    _set_deadline(hand, until, KIND_DEAL)


def deal_hand(table: Table, hand: Hand, loaded: store.Loaded, *, now: datetime) -> store.Loaded:
    """Deal a version-2 hand with the shares sent so far (its ``deal`` event and the antes),
    then play on as after any move."""
    produced = loaded.game.deal(loaded.state)
    loaded = append_events(table, hand, loaded, produced, now=now)
    hand.deadline, hand.deadline_kind, hand.deadline_seq = None, "", None
    return advance(table, hand, loaded, now=now)


def advance(table: Table, hand: Hand, loaded: store.Loaded, *, now: datetime) -> store.Loaded:
    """Play every move that needs no waiting, then set the hand's next deadline (or end it)."""
    game = loaded.game
    bots = table.bots
    partie = table.partie
    for _ in range(MAX_STEPS):
        if game.is_over(loaded.state):
            _finish(table, hand, loaded, now=now)
            return loaded
        legal = game.legal_moves(loaded.state)
        awaited = game.to_act(loaded.state)
        if _comet_window(table, game, loaded.state):
            # Every chance waits the same, and whoever holds the Comet (a person, by his
            # click or his standing order, or a bot) decides at its end (``_comet_chance``).
            delay = max(partie.comet_window, partie.forced_move_delay)
            _set_deadline(hand, now + delay, KIND_COMET)
            return loaded
        moved = False
        # Priority: a seat that only *may* act (the Comet holder) has its chance first.
        for seat in legal:
            if seat not in awaited and _decides(bots, seat):
                move = bot_move(table, hand, loaded, seat, required=False)
                if move is not None:
                    loaded = apply_move(table, hand, loaded, seat, move, BY_PLAYER, now=now)
                    moved = True
                    break
        if moved:
            continue
        seat = awaited[0]
        only_move = len(legal[seat]) == 1
        if _decides(bots, seat):
            move = bot_move(table, hand, loaded, seat, required=True)
            assert move is not None
            by = BY_FORCED if only_move else BY_PLAYER
            loaded = apply_move(table, hand, loaded, seat, move, by, now=now)
            continue
        elif seat in table.away:
            # A player who left the table: the time-out rule plays for him, without the wait.
            move, by = ((legal[seat][0], BY_FORCED) if only_move
                        else (game.default_move(loaded.state, seat), BY_TIMEOUT))
            loaded = apply_move(table, hand, loaded, seat, move, by, now=now)
            continue
        elif only_move:
            if not partie.forced_move_delay:  # a table without delays plays it at once
                loaded = apply_move(table, hand, loaded, seat, legal[seat][0], BY_FORCED,
                                    now=now)
                continue
            _set_deadline(hand, now + partie.forced_move_delay, KIND_FORCED)
        else:
            _set_deadline(hand, now + partie.move_timeout, KIND_TIMEOUT)
        return loaded
    raise RuntimeError(f"hand {hand.id} did not settle after {MAX_STEPS} moves")


def fire(table: Table, hand: Hand, loaded: store.Loaded, *, now: datetime) -> store.Loaded:
    """The pending decision's deadline has passed: play its move (forced, time-out or bot), or
    deal the hand that waited for the shares."""
    if is_shuffling(loaded.state):
        return deal_hand(table, hand, loaded, now=now)
    if hand.deadline_kind == KIND_COMET:
        return _comet_chance(table, hand, loaded, now=now)
    game = loaded.game
    seat = game.to_act(loaded.state)[0]
    legal = game.legal_moves(loaded.state)[seat]
    if _decides(table.bots, seat):
        move = bot_move(table, hand, loaded, seat, required=True)
        assert move is not None
        by = BY_FORCED if len(legal) == 1 else BY_PLAYER
    elif len(legal) == 1:
        move, by = legal[0], BY_FORCED
    else:
        move, by = game.default_move(loaded.state, seat), BY_TIMEOUT
    loaded = apply_move(table, hand, loaded, seat, move, by, now=now)
    return advance(table, hand, loaded, now=now)


def pending_move(table: Table, hand: Hand, seat: int) -> Move | None:
    """The move ``seat``'s player chose during the Comet chance the hand is at, if any."""
    found = next((s.pending for s in table.seats if s.number == seat), None)
    if not found or found.get("hand") != str(hand.pk) or found.get("seq") != hand.last_seq:
        return None
    move = found["move"]
    return Move(type=move["type"], card=move.get("card"), suit=move.get("suit"))


def _comet_chance(table: Table, hand: Hand, loaded: store.Loaded, *,
                  now: datetime) -> store.Loaded:
    """The end of a Comet chance (RULES.md §2, standing orders): the holder's choice first,
    made by his click during the chance, by his standing order, or by the bot he is; then,
    if he did not play the Comet, the awaited seat's move. Whoever holds the Comet, the
    chance has lasted the same, so that no timing tells where it is."""
    game, state = loaded.game, loaded.state
    legal = game.legal_moves(state)
    awaited = game.to_act(state)[0]
    holder = game.comet_holder(state)
    seats = {s.number: s for s in table.seats}
    move: Move | None = None
    if holder in table.bots and _decides(table.bots, holder):
        move = bot_move(table, hand, loaded, holder, required=holder == awaited)
    elif holder >= 0 and holder not in table.bots and holder not in table.away:
        order = seats[holder].comet_order
        move = pending_move(table, hand, holder)
        if move is None and game.comet_order_plays(state, holder, order):
            move = COMET_MOVE
        elif move is None and holder == awaited and order != "ask":
            move = game.default_move(state, holder)  # his order keeps the Comet
    if move is not None and move in legal.get(holder, []):
        loaded = apply_move(table, hand, loaded, holder, move, BY_PLAYER, now=now)
        return advance(table, hand, loaded, now=now)
    if awaited == holder and awaited not in table.bots:
        # "Ask me" with no click, or a player away: the time-out rule.
        move, by = game.default_move(state, awaited), BY_TIMEOUT
    elif _decides(table.bots, awaited):
        move = bot_move(table, hand, loaded, awaited, required=True)
        assert move is not None
        by = BY_FORCED if len(legal[awaited]) == 1 else BY_PLAYER
    elif len(legal[awaited]) == 1:
        move, by = legal[awaited][0], BY_FORCED
    else:
        move, by = game.default_move(state, awaited), BY_TIMEOUT
    loaded = apply_move(table, hand, loaded, awaited, move, by, now=now)
    return advance(table, hand, loaded, now=now)


COMET_MOVE = Move("comet")


def _decides(bots: dict[int, str], seat: int) -> bool:
    """A bot that chooses its moves (a "timeout" bot stands for an absent person)."""
    return bots.get(seat) not in (None, "timeout")


def _comet_window(table: Table, game: Any, state: Any) -> bool:
    """Whether this decision waits the Comet window: the Comet may be played now, and a person
    (or a "timeout" bot standing for one) sits at the table. Both are public; who holds the
    Comet plays no part."""
    window_open = getattr(game, "comet_window_open", None)
    if window_open is None or not window_open(state):
        return False
    people = len(table.seats) - sum(_decides(table.bots, s.number) for s in table.seats)
    return people > 0 and bool(table.partie.comet_window or table.partie.forced_move_delay)


def _set_deadline(hand: Hand, at: datetime, kind: str) -> None:
    """The hand now waits for its pending decision until ``at``; its timer is queued once the
    command commits (a rolled-back command queues nothing)."""
    hand.deadline = at
    hand.deadline_kind = kind
    hand.deadline_seq = seq = hand.last_seq
    hand_id = hand.pk
    transaction.on_commit(lambda: scheduling.deadline_due(hand_id=hand_id, seq=seq, at=at))


def _finish(table: Table, hand: Hand, loaded: store.Loaded, *, now: datetime) -> None:
    hand.status = Hand.Status.OVER
    hand.ended_at = now
    table.ended.add(hand.pk)
    hand.deadline = None
    hand.deadline_kind = ""
    hand.deadline_seq = None
    partie = table.partie
    if partie.game == "comet":
        partie.comet_played_last = bool(loaded.game.comet_played(loaded.state))  # type: ignore[attr-defined]
    partie.next_hand_at = now + partie.pause_between_hands
    partie.save(update_fields=["comet_played_last", "next_hand_at"])
    partie_id, at = partie.pk, partie.next_hand_at
    # Queued even when the command deals the next hand at once: the task then finds nothing
    # due, and the deal does not depend on this command's own attempt (moves.deal_at_once).
    transaction.on_commit(lambda: scheduling.next_hand_due(partie_id=partie_id, at=at))


HAND_FIELDS = ["last_seq", "last_hash", "status", "ended_at", "deadline", "deadline_seq",
               "deadline_kind"]


def save(table: Table, hand: Hand) -> None:
    """Write the hand row as the command leaves it, tell the receivers of ``hand_ended`` in the
    transaction if it ended, and put its events in the command's outbox."""
    hand.save(update_fields=HAND_FIELDS)
    events = table.appended.pop(hand.pk, [])
    if hand.pk in table.ended:
        table.ended.discard(hand.pk)
        signals.hand_ended.send(sender=Hand, partie=table.partie, hand=hand)
    assert table.outbox is not None
    table.outbox.add(hand, events)
