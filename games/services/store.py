"""The event store: a hand's state (from its snapshot or a replay of its stream), appends to
the hash chain, and the plain SQL of the commands' hot path (the last section).

The events are the truth. The hand row keeps, besides, the state they give at ``last_seq``
(``Hand.snapshot``) and the chain's last hash (``Hand.last_hash``), both written by every command
in the transaction that appends the events (``save``). A move then reads one row instead of the
whole stream. A snapshot that is missing, stale (another ``last_seq``) or unreadable is ignored
and the state is replayed from the events: the snapshot is only an optimisation, and
tests/games/test_snapshot.py checks it against a full replay.
"""

from __future__ import annotations

import functools
import io
import json
import logging
import operator
import pickle
import uuid
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, fields, is_dataclass
from dataclasses import field as dataclass_field
from datetime import datetime
from typing import Any, NoReturn

import orjson
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import DEFAULT_DB_ALIAS, DatabaseError, IntegrityError, connections, models
from django.db.backends.utils import CursorDebugWrapper, CursorWrapper
from django.utils import timezone

from config.rows import built
from games.engine import comet, commere
from games.engine.base import Event
from games.engine.deal import deal_from_seed
from games.engine.protocol import Game
from games.engine.record import iso_z, seal
from games.engine.registry import get_game
from games.errors import CommandConflict, StaleSequence
from games.models import Command, Hand, HandEvent, HandSeed, Partie, Seat
from ledger.models import Account, AccountKind

logger = logging.getLogger(__name__)

SNAPSHOT_PROTOCOL = 5
#: A statement for ``_execute``: the model it writes, its SQL (``%s`` placeholders), its values.
_Statement = tuple[type[models.Model], str, list[Any]]
COMMAND_REUSED = "this command_id was already used for another move"
#: A partie's pot in the ledger: the account of kind pot whose ref is this and the partie's id.
POT_REF_PREFIX = "partie:"
#: Every field of the hand row a command may change (``save``): its place in the chain, its
#: state, and its pending decision.
HAND_FIELDS = ["last_seq", "last_hash", "snapshot", "status", "ended_at", "deadline",
               "deadline_seq", "deadline_kind"]
#: ``HAND_FIELDS`` and the hand's armed timer, for a command that armed one (advance.py): a
#: command that did not leaves the column to the timer task, which may have moved it since the
#: command read the hand.
HAND_FIELDS_ARMED = [*HAND_FIELDS, "timer_at"]


@dataclass(frozen=True)
class Loaded:
    """A hand's state at ``hand.last_seq`` and the hash the next event chains to."""

    game: Game
    state: Any
    last_hash: str

    @property
    def deck(self) -> list[str]:
        return list(self.state.deck)  # both engines' states keep the dealt deck


def record_event(row: HandEvent) -> dict[str, Any]:
    """The record form of a stored event (HAND_RECORD.md)."""
    out: dict[str, Any] = {"seq": row.seq, "type": row.type, "at": row.at, "by": row.by}
    out.update(row.payload)
    out["prev"] = row.prev
    out["hash"] = row.hash
    return out


def events(hand: Hand) -> list[dict[str, Any]]:
    """The hand's stream in record form, in order."""
    return [record_event(r) for r in HandEvent.objects.filter(hand=hand).order_by("seq")]


def hand_deck(hand: Hand) -> list[str]:
    deck, _ = deal_from_seed(hand.partie.game, hand.secret.seed, hand.partie.seats.count())
    return deck


def load(hand: Hand) -> Loaded:
    """The hand's state: its snapshot when it is the state at ``last_seq``, else a replay."""
    return from_snapshot(hand) or replay(hand)


def from_snapshot(hand: Hand) -> Loaded | None:
    """The hand's state from its snapshot alone, or ``None`` if that is not the state at
    ``last_seq`` (a reader without the hand's lock must not replay: the events it would read
    may have moved on past the row it read)."""
    game = get_game(hand.partie.game)
    state = thaw(hand, game)
    return None if state is None else Loaded(game=game, state=state, last_hash=hand.last_hash)


def replay(hand: Hand) -> Loaded:
    """The reference: every stored event through the rules engine, the snapshot ignored."""
    game = get_game(hand.partie.game)
    stream = events(hand)
    state = game.replay(hand_deck(hand), [Event.from_dict(e) for e in stream])
    return Loaded(game=game, state=state,
                  last_hash=str(stream[-1]["hash"]) if stream else hand.commitment)


def save(hand: Hand, loaded: Loaded, *, pending: Sequence[dict[str, Any]] = (),
         command: dict[str, Any] | None = None, partie_fields: Collection[str] = (),
         accounts: Sequence[Account] = (), timer_armed: bool = False,
         accounts_of: AccountsOf | None = None) -> bool:
    """Write what a command did: its ``pending`` events (``append``'s rows), the hand row with
    the state it reached (the snapshot at ``last_seq``) and its ``Command`` row, if any. A hand
    being dealt (not saved yet) is inserted with its seed (``hand.secret``) instead.
    ``partie_fields``: the fields of ``hand.partie`` the command changed (a hand's end, a deal),
    updated in the same statement; that update locks the partie's row until the end of the
    transaction.

    On PostgreSQL this is one statement (the inserts as common table expressions of the
    hand's update): one round trip and one statement to plan instead of three. The (hand, seq)
    unique constraint still refuses a second writer of a seq (StaleSequence), and the Command
    primary key an id already used (CommandConflict).

    There, the hand's row is also compared and set: it is updated only if it is still being
    played at the seq the command read (the seq before its first event), and the events take
    their hand from that update, so that a row at another seq or no longer played, whatever
    moved it (by hand, a database restored to an earlier seq), refuses the whole statement
    too (StaleSequence). A command played without the hand's lock relies on it
    (moves._in_one_statement).

    True when ``hand.partie`` was updated and read back by that statement (PostgreSQL, a hand
    in play): it then holds the row as it is now, locked, its other fields included (a soirée
    may have moved its closing time since the hand was read), and a deal need not lock and
    read it again (parties.deal_after). The same statement then reads ``accounts`` again
    (their balances and last postings, as the command's payments and anybody's committed
    entries left them: a player may have bought chips while the move was played), for the
    deal's ``chips_before``.

    ``timer_armed``: the command armed the hand's timer (``hand.timer_at``), written with it;
    otherwise that column is left as it is.

    ``accounts_of`` (PostgreSQL, a hand in play whose partie is updated): the accounts are not
    known yet, and the same statement reads them whole, found by their club, owners and pot
    (as ``accounts`` finds them), into ``accounts_of.found``; ``accounts`` is then empty."""
    hand.last_hash = loaded.last_hash
    hand.snapshot = freeze(loaded.state, hand.last_seq)
    fields = HAND_FIELDS_ARMED if timer_armed else HAND_FIELDS
    if pending and not hand._state.adding and writes_in_one_statement():
        return _execute_guarded(hand, pending, command, read_seq=pending[0]["seq"] - 1,
                                partie_fields=partie_fields, accounts=accounts, fields=fields,
                                accounts_of=accounts_of)
    writes = [_update_statement(hand.partie, sorted(partie_fields))] if partie_fields else []
    if pending:
        writes.append(_insert_statement(HandEvent, pending))
    if command is not None:
        writes.append(_insert_statement(Command, [command]))
    if hand._state.adding:  # a hand being dealt: its row is written once, as it ends the deal
        writes += [_create_statement(hand), _create_statement(hand.secret)]
    else:
        writes.append(_update_statement(hand, fields))
    _execute(writes)
    for made in (hand, hand.secret) if hand._state.adding else ():
        made._state.adding = False
        made._state.db = _db().alias
    return False


@dataclass
class AccountsOf:
    """Which accounts ``save`` reads with a hand's end (``accounts_of``): the club's wallets of
    ``owners`` and its pot ``pot_ref``; ``found`` receives them."""

    club_key: str
    owners: Sequence[Any]
    pot_ref: str
    found: list[Account] = dataclass_field(default_factory=list)


def freeze(state: Any, seq: int) -> bytes:
    # The seq goes with the state, so that a snapshot left behind by a writer that appended
    # events without it is seen as stale rather than taken for the current state.
    out = io.BytesIO()
    pickler = pickle.Pickler(out, protocol=SNAPSHOT_PROTOCOL)
    pickler.dispatch_table = _REDUCERS
    pickler.dump((seq, state))
    return out.getvalue()


def _reducer(cls: type) -> Any:
    values = operator.attrgetter(*(f.name for f in fields(cls)))
    return lambda obj: (cls, values(obj))


# The engine's state records pickled as ``cls(*values)``: a slotted dataclass's own pickling
# goes through dataclasses.fields() for every instance, which made freezing and thawing a
# state four and two times slower. Any other record still pickles (more slowly).
_REDUCERS = {cls: _reducer(cls) for cls in (commere.State, commere.Table, commere.Pass,
                                             comet.CometState, comet.Setup)
             if len(fields(cls)) > 1 and all(f.init for f in fields(cls))}


class ForbiddenSnapshot(pickle.UnpicklingError):
    """A snapshot names something other than an engine state class or a plain builtin."""


# Containers and scalars a state is made of (most are pickled by opcode and never looked up).
_BUILTINS = frozenset({"tuple", "frozenset", "dict", "list", "set", "str", "int", "float",
                       "bool", "bytes", "complex"})


class _StateUnpickler(pickle.Unpickler):
    """Only the engine's state dataclasses and plain builtins: a pickle may name any callable
    (``os.system``), and the snapshot column must never run anything it names."""

    def find_class(self, module: str, name: str) -> Any:
        if module == "builtins" and name in _BUILTINS:
            return super().find_class(module, name)
        if module.startswith("games.engine."):
            found = super().find_class(module, name)
            # A class defined there (not a name it imported), and a record, not a service.
            if isinstance(found, type) and found.__module__ == module and is_dataclass(found):
                return found
        raise ForbiddenSnapshot(f"a snapshot may not hold {module}.{name}")


def unfreeze(blob: bytes | memoryview) -> tuple[int, Any]:
    """``(seq, state)`` from a snapshot; ForbiddenSnapshot if it names anything else than an
    engine state class or a plain builtin (nothing it names is called before that check)."""
    found = _StateUnpickler(io.BytesIO(blob)).load()
    if not (isinstance(found, tuple) and len(found) == 2 and isinstance(found[0], int)):
        raise pickle.UnpicklingError("not a (seq, state) snapshot")
    return found


def thaw(hand: Hand, game: Game) -> Any | None:
    """The snapshot's state if it is the state at ``hand.last_seq``, else ``None`` (replay).

    An unreadable or forbidden snapshot is logged and ignored like a stale one: the events
    still give the state, and the next command overwrites the snapshot."""
    blob = hand.snapshot
    if not blob or not hand.last_hash:
        return None
    try:
        seq, state = unfreeze(blob)
    except Exception as exc:  # any malformed pickle: EOFError, ValueError, ForbiddenSnapshot…
        logger.warning("hand %s: snapshot refused (%s: %s), replaying its events",
                       hand.pk, type(exc).__name__, exc)
        return None
    if seq != hand.last_seq or type(state).__module__ != game.__name__:
        return None
    return state


def append(
    hand: Hand,
    new: Sequence[Event],
    *,
    prev_hash: str,
    actor: AbstractBaseUser | None = None,
    command_id: Any = None,
    at: datetime | None = None,
    pending: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Append events after ``hand.last_seq``; the (hand, seq) unique constraint is the lock.

    With ``pending`` (a command's list), the rows are kept there for ``save`` to write with the
    hand row at the end of the command; else they are inserted now. Returns the sealed events
    (their record form)."""
    stamp = iso_z(at or timezone.now())
    sealed = []
    link = prev_hash
    for i, event in enumerate(new, start=hand.last_seq + 1):
        s = seal(event, seq=i, at=stamp, prev=link)
        link = s["hash"]
        sealed.append(s)
    actor_id = actor.pk if actor is not None else None
    rows = [
        {"hand_id": hand.pk, "seq": s["seq"], "type": s["type"], "payload": event.data,
         "by": s["by"], "actor_id": actor_id if event.by != "service" else None,
         "command_id": command_id, "at": stamp, "prev": s["prev"], "hash": s["hash"]}
        for s, event in zip(sealed, new, strict=True)
    ]
    if pending is not None:
        pending.extend(rows)
    else:
        _execute([_insert_statement(HandEvent, rows)])
    hand.last_seq += len(new)
    return sealed


# -- plain SQL for the move path --------------------------------------------------------------
# A move reads and writes a few small rows; building those statements through the ORM cost
# more CPU than the database spent on them (bench/api_bench.md). These helpers read and write
# the same columns the ORM would, with the same conversions: every value written goes through
# its field's ``get_db_prep_save`` and every value read through the converters the ORM applies
# (UUIDs, JSON, datetimes, durations, bytes), on PostgreSQL and SQLite alike. No signals are
# sent (none are used).


def lock_hand(hand_id: Any) -> tuple[Hand, list[Seat], list[Account] | None]:
    """``read_hand``, the hand's row locked until the end of the transaction (PostgreSQL;
    SQLite has one writer at a time and no row locks), and on PostgreSQL the ledger accounts its
    payments may move chips between (``accounts``: the seats' wallets and the partie's pot, those
    that exist), still in one statement: a command that takes this lock plays a move with
    chips to post, or ends the hand (else ``None``: they are read when first needed)."""
    hand, seats, _, accounts = _read_hand(hand_id, lock=True, with_next=False)
    return hand, seats, accounts


def read_hand(hand_id: Any, *, lock: bool = False) -> tuple[Hand, list[Seat]]:
    """The hand with its partie and seed (``hand.partie``, ``hand.secret``), and the partie's
    seats in order, each with its user's id and username (``seat.player``, as ``seats`` gives
    them: the deal that a hand's last move makes names the players), in one statement."""
    hand, seats, _, _ = _read_hand(hand_id, lock=lock, with_next=False)
    return hand, seats


def read_hand_and_next(hand_id: Any) -> tuple[Hand, list[Seat], dict[str, Any] | None]:
    """``read_hand``, and the partie's next hand (``{"id", "number"}``) once this one is over
    and the next is dealt, else ``None``: still one statement."""
    hand, seats, following, _ = _read_hand(hand_id, lock=False, with_next=True)
    return hand, seats, following


def hand_ref(hand_id: Any, number: int) -> dict[str, Any]:
    """How an answer names another hand (``next_hand``): its id and its number."""
    return {"id": str(hand_id), "number": number}


def _read_hand(hand_id: Any, *, lock: bool, with_next: bool
               ) -> tuple[Hand, list[Seat], dict[str, Any] | None, list[Account] | None]:
    db = _db()
    with _cursor(db) as cursor:
        params = [Hand._meta.pk.get_db_prep_value(hand_id, db)]
        cursor.execute(_read_hand_sql(db.vendor, lock, with_next),
                       [Hand.Status.OVER.value, *params] if with_next else params)
        rows = cursor.fetchall()
    if not rows:
        raise Hand.DoesNotExist(f"no hand {hand_id}")
    hand, partie, secret = instances(rows[0], Hand, Partie, HandSeed)
    hand.partie = partie  # as select_related("partie", "secret") would
    if secret.pk is not None:
        hand.secret = secret
    accounts = None
    if db.vendor == "postgresql":  # one row, the seats' columns as arrays
        if lock:  # then the accounts' columns too, as arrays (NULL: no account yet)
            width = len(Account._meta.concrete_fields)
            accounts = _accounts_from_arrays(rows[0][-width:])
            rows = [rows[0][:-width]]
        seat_rows = list(zip(*rows[0][-5:], strict=True))
    else:  # a row per seat, the hand, partie and seed repeated on each
        seat_rows = [row[-5:] for row in rows]
    seats = [_seat(db, partie.pk, *row) for row in seat_rows]
    following = None
    if with_next:
        next_id, next_number = rows[0][-7:-5]
        if next_id is not None:
            following = hand_ref(_converted(Hand._meta.pk, next_id), next_number)
    return hand, seats, following, accounts


def _converted(field: models.Field, value: Any) -> Any:
    db = _db()
    col, converters = _converters(db.vendor, field)
    for convert in converters:
        value = convert(value, col, db)
    return value


@functools.lru_cache(maxsize=8)
def _read_hand_sql(vendor: str, lock: bool, with_next: bool = False) -> str:
    db = _db()
    qn = db.ops.quote_name
    hands, seats = qn(Hand._meta.db_table), qn(Seat._meta.db_table)
    user = get_user_model()
    users, user_pk = qn(user._meta.db_table), qn(user._meta.pk.column)
    username = qn(user._meta.get_field(user.USERNAME_FIELD).column)
    # The next hand only once this one is over (before, there is none to find).
    following = (f"LEFT JOIN {hands} n ON n.partie_id = h.partie_id "
                 f"AND n.number = h.number + 1 AND h.status = %s " if with_next else "")
    if vendor == "postgresql":
        # One row: the seats' columns as arrays. A row per seat would repeat the hand's
        # snapshot on each, decoded again each time.
        seat_columns = "s.ids, s.numbers, s.players, s.bots, s.names"
        seat_join = (f"CROSS JOIN LATERAL (SELECT array_agg(s.id ORDER BY s.number), "
                     f"array_agg(s.number ORDER BY s.number), "
                     f"array_agg(s.player_id ORDER BY s.number), "
                     f"array_agg(s.bot ORDER BY s.number), "
                     f"array_agg(u.{username} ORDER BY s.number) FROM {seats} s "
                     f"JOIN {users} u ON u.{user_pk} = s.player_id "
                     f"WHERE s.partie_id = h.partie_id) AS s(ids, numbers, players, bots, names) ")
        order = ""
    else:
        seat_columns = f"s.id, s.number, s.player_id, s.bot, u.{username}"
        seat_join = (f"JOIN {seats} s ON s.partie_id = p.id "
                     f"JOIN {users} u ON u.{user_pk} = s.player_id ")
        order = " ORDER BY s.number"
    account_columns = account_join = ""
    if lock and vendor == "postgresql":
        # The seats' wallets and the partie's pot (chips.Accounts), each column as an array.
        select, columns = _accounts_as_arrays(
            "p.club_key", "s.players", f"'{POT_REF_PREFIX}' || p.id::text")
        account_columns = ", " + columns
        account_join = f"CROSS JOIN LATERAL ({select}) AS a "
    sql = (f"SELECT {_columns(vendor, Hand, 'h')}, {_columns(vendor, Partie, 'p')}, "
           f"{_columns(vendor, HandSeed, 'k')}, "
           f"{'n.id, n.number, ' if with_next else ''}{seat_columns}{account_columns} "
           f"FROM {hands} h "
           f"JOIN {qn(Partie._meta.db_table)} p ON p.id = h.partie_id "
           f"LEFT JOIN {qn(HandSeed._meta.db_table)} k ON k.hand_id = h.id "
           f"{following}{seat_join}{account_join}"
           f"WHERE h.id = %s{order}")
    # Only the hand's row is locked: the partie's row is the dealer's lock, not the movers'.
    return sql + " FOR UPDATE OF h" if lock and db.features.has_select_for_update_of else sql


def _accounts_as_arrays(club: str, owners: str, pot_ref: str) -> tuple[str, str]:
    """A ``SELECT`` of the club's wallets of ``owners`` and its pot ``pot_ref`` (SQL expressions
    or placeholders), one row whose columns are arrays, one per account column in id order
    (``_accounts_from_arrays`` reads them back), and those columns as ``a.c0, a.c1, …`` for a
    query that names it ``a``. The kinds go in as literals: the partial unique indexes (one
    wallet per player and club, one pot per ref) serve a prepared plan only if it can see that
    a row's kind is theirs."""
    qn = _db().ops.quote_name
    fields = Account._meta.concrete_fields
    names = [f"c{i}" for i in range(len(fields))]
    select = (
        "SELECT "
        + ", ".join(f"array_agg(a.{qn(f.column)} ORDER BY a.id) AS {n}"
                    for f, n in zip(fields, names, strict=True))
        + f" FROM {qn(Account._meta.db_table)} a WHERE a.club_key = {club} AND "
        f"((a.kind = '{AccountKind.WALLET.value}' AND a.owner_id = ANY ({owners})) OR "
        f"(a.kind = '{AccountKind.POT.value}' AND a.ref = {pot_ref}))")
    return select, ", ".join(f"a.{n}" for n in names)


def _accounts_from_arrays(columns: Sequence[Any]) -> list[Account]:
    """The accounts of ``_accounts_as_arrays``'s row (its arrays NULL: no account)."""
    return [instances(row, Account)[0] for row in zip(*(c or [] for c in columns), strict=True)]


def lock_partie_row(partie_id: Any) -> Partie | None:
    """The partie, its row locked until the end of the transaction (the dealer's lock), or
    ``None`` if there is no such partie."""
    db = _db()
    qn = db.ops.quote_name
    lock = " FOR UPDATE" if db.features.has_select_for_update else ""
    with _cursor(db) as cursor:
        cursor.execute(f"SELECT {_columns(db.vendor, Partie, 'p')} "
                       f"FROM {qn(Partie._meta.db_table)} p WHERE p.id = %s{lock}",
                       [Partie._meta.pk.get_db_prep_value(partie_id, db)])
        row = cursor.fetchone()
    return None if row is None else instances(row, Partie)[0]


def lock_partie(partie_id: Any) -> tuple[Partie | None, Hand | None]:
    """``lock_partie_row``, and the partie's last hand (``None`` before the first);
    ``(None, None)`` if there is no such partie."""
    partie = lock_partie_row(partie_id)
    if partie is None:
        return None, None
    db = _db()
    qn = db.ops.quote_name
    with _cursor(db) as cursor:
        # A statement of its own, after the lock: one waiting for a concurrent dealer must see
        # the hand he dealt (a join in the locking statement would read the hands as they were
        # before the wait).
        cursor.execute(f"SELECT {_columns(db.vendor, Hand, 'h')} FROM {qn(Hand._meta.db_table)} "
                       f"h WHERE h.partie_id = %s ORDER BY h.number DESC LIMIT 1",
                       [Partie._meta.pk.get_db_prep_value(partie_id, db)])
        last = cursor.fetchone()
    return partie, (instances(last, Hand)[0] if last else None)


def seats(partie: Partie) -> list[Seat]:
    """The partie's seats in order, each with its user (only its id and username are read, as
    a deal needs: ``seat.player`` reads the rest if asked)."""
    db = _db()
    user = get_user_model()
    qn = db.ops.quote_name
    sql = (f"SELECT s.id, s.number, s.player_id, s.bot, u.{qn(user.USERNAME_FIELD)} "
           f"FROM {qn(Seat._meta.db_table)} s JOIN {qn(user._meta.db_table)} u "
           f"ON u.{qn(user._meta.pk.column)} = s.player_id WHERE s.partie_id = %s "
           f"ORDER BY s.number")
    with _cursor(db) as cursor:
        cursor.execute(sql, [Partie._meta.pk.get_db_prep_value(partie.pk, db)])
        rows = cursor.fetchall()
    return [_seat(db, partie.pk, *row) for row in rows]


def _seat(db: Any, partie_id: Any, pk: Any, number: int, player_id: Any, bot: str,
          username: str) -> Seat:
    """A seat read by plain SQL, with its user's id and username (the rest is read if asked)."""
    seat = built(Seat, db.alias, ("id", "partie_id", "number", "player_id", "bot"),
                 (pk, partie_id, number, player_id, bot))
    user = get_user_model()
    seat.player = built(user, db.alias, (user._meta.pk.attname, user.USERNAME_FIELD),
                        (player_id, username))
    return seat


def accounts(*, club_key: str, owners: Sequence[Any], pot_ref: str) -> list[Account]:
    """The club's wallets of ``owners`` and its pot ``pot_ref`` (those that exist)."""
    db = _db()
    qn = db.ops.quote_name
    marks = ", ".join(["%s"] * len(owners)) or "NULL"
    sql = (f"SELECT {_columns(db.vendor, Account, 'a')} FROM {qn(Account._meta.db_table)} a "
           f"WHERE a.club_key = %s AND ((a.kind = %s AND a.owner_id IN ({marks})) "
           f"OR (a.kind = %s AND a.ref = %s))")
    with _cursor(db) as cursor:
        cursor.execute(sql, [club_key, AccountKind.WALLET, *owners, AccountKind.POT, pot_ref])
        return [instances(row, Account)[0] for row in cursor.fetchall()]


def _create_statement(instance: models.Model) -> _Statement:
    """``INSERT`` of a new instance (``Model.objects.create``'s statement, for a model whose
    primary key is not generated by the database)."""
    fields = type(instance)._meta.concrete_fields
    return _insert_statement(type(instance),
                             [{f.attname: f.pre_save(instance, True) for f in fields}])


def insert(model: type[models.Model], rows: Sequence[dict[str, Any]]) -> None:
    """``INSERT … VALUES`` of ``rows`` (each a dict of attnames to values) in one statement."""
    if rows:
        _execute([_insert_statement(model, rows)])


def _insert_statement(model: type[models.Model], rows: Sequence[dict[str, Any]], *,
                      given: str = "", expression: str = "") -> _Statement:
    """``INSERT … VALUES`` of ``rows``; the column ``given`` (an attname), if any, takes the SQL
    ``expression`` in every row instead of its value. A hand's events on PostgreSQL:
    ``_json_rows_statement`` instead, whenever their values are plain JSON."""
    vendor = _vendor()
    if model is HandEvent and vendor == "postgresql":
        statement = _json_rows_statement(vendor, model, rows, given, expression)
        if statement is not None:
            return statement
    sql, prepared = _insert_plan(vendor, model, tuple(rows[0]), len(rows), given,
                                 expression)
    return model, sql, [prep(row[name]) for row in rows for name, prep in prepared]


def _json_rows_statement(vendor: str, model: type[models.Model], rows: Sequence[dict[str, Any]],
                         given: str, expression: str) -> _Statement | None:
    """PostgreSQL: ``INSERT … SELECT … FROM jsonb_to_recordset($1)``, the rows sent as one JSON
    array instead of a parameter per value. A Comet command writes 7.5 events of ten columns:
    psycopg adapted 75 parameters one by one, and each count of rows was a statement of its
    own to prepare; this is one parameter, and one statement for any count
    (bench/api_bench.md, twentieth round). The database converts each value to its column's
    type as it would convert the parameter. ``None`` (the caller writes ``VALUES``) if a value
    is not plain JSON: a datetime, a ``str`` subclass, an integer past 64 bits, a key that is
    not a string… (``_ORJSON_EXACT``), which only the field's own conversion may write."""
    try:
        array = orjson.dumps(rows, default=_not_plain, option=_ORJSON_EXACT)
    except TypeError:  # orjson.JSONEncodeError is one
        return None
    return model, _json_rows_plan(vendor, model, tuple(rows[0]), given, expression), [
        array.decode()]


@functools.lru_cache(maxsize=16)
def _json_rows_plan(vendor: str, model: type[models.Model], names: tuple[str, ...], given: str,
                    expression: str) -> str:
    db = _db()
    qn = db.ops.quote_name
    fields = [model._meta.get_field(name) for name in names]
    values = ", ".join(expression if f.attname == given else f"r.{qn(f.attname)}"
                       for f in fields)
    record = ", ".join(f"{qn(f.attname)} {f.db_type(db)}" for f in fields
                       if f.attname != given)
    return (f"INSERT INTO {qn(model._meta.db_table)} ({', '.join(qn(f.column) for f in fields)})"
            f" SELECT {values} FROM jsonb_to_recordset(%s::jsonb) AS r({record})")


def _update_statement(instance: models.Model, names: Sequence[str]) -> _Statement:
    model = type(instance)
    sql, prepared, pk_name, pk_prep = _update_plan(_vendor(), model, tuple(names))
    params = [prep(getattr(instance, name)) for name, prep in prepared]
    params.append(pk_prep(getattr(instance, pk_name)))
    return model, sql, params


# A statement's text and its values' conversions, found once per model and columns: looking the
# conversions up field by field (a field's hash is computed in Python) cost a tenth of a usual
# move's CPU (bench/api_bench.md, eleventh round).


@functools.lru_cache(maxsize=64)
def _insert_plan(vendor: str, model: type[models.Model], names: tuple[str, ...], n: int,
                 given: str, expression: str) -> tuple[str, tuple[tuple[str, Any], ...]]:
    meta = model._meta
    fields = [meta.get_field(name) for name in names]
    qn = _db().ops.quote_name
    one = "(" + ", ".join(expression if f.attname == given else "%s" for f in fields) + ")"
    sql = (f"INSERT INTO {qn(meta.db_table)} ({', '.join(qn(f.column) for f in fields)}) "
           f"VALUES {', '.join([one] * n)}")
    return sql, tuple((f.attname, _preparer(vendor, f)) for f in fields if f.attname != given)


@functools.lru_cache(maxsize=32)
def _update_plan(vendor: str, model: type[models.Model], names: tuple[str, ...]
                 ) -> tuple[str, tuple[tuple[str, Any], ...], str, Any]:
    meta = model._meta
    fields = [meta.get_field(name) for name in names]
    qn = _db().ops.quote_name
    sql = (f"UPDATE {qn(meta.db_table)} SET {', '.join(f'{qn(f.column)} = %s' for f in fields)}"
           f" WHERE {qn(meta.pk.column)} = %s")
    return (sql, tuple((f.attname, _preparer(vendor, f)) for f in fields), meta.pk.attname,
            _preparer(vendor, meta.pk))


#: The values that ``get_db_prep_save`` gives back as they are on PostgreSQL (psycopg adapts
#: them itself), by the column's field type: an instance of the type for text (a TextChoices
#: member too), the exact type for the others (a bool for an integer column, a naive datetime,
#: take the field's own conversion).
_AS_THEY_ARE = {"UUIDField": uuid.UUID, "DateTimeField": datetime, "AutoField": int,
                "BigAutoField": int, "SmallAutoField": int}
_TEXT = frozenset({"CharField", "TextField"})


@functools.lru_cache(maxsize=256)
def _preparer(vendor: str, field: models.Field) -> Callable[[Any], Any]:
    """``field.get_db_prep_save(value, connection)``, without its layers of calls where the
    result is known: ``None`` is ``None``; on PostgreSQL a value the column takes as it is
    (``_AS_THEY_ARE``; a datetime only if it is aware), an int for an integer column wrapped as
    Django wraps it (``adapt_integerfield_value``), a dict or list for a JSON column wrapped as
    Django wraps it (``adapt_json_value``). Every other value goes through the field. The hot
    path writes a few dozen values per command, and the full conversion was a fifth of a usual
    move's CPU (tests/games/test_store_statements.py checks that both give the same)."""
    db = _db()  # only for the dialect's constants: each conversion takes the thread's own

    def full(value: Any) -> Any:
        return field.get_db_prep_save(value, _db())

    if vendor != "postgresql":
        return full
    target = field.target_field if field.is_relation else field
    kind = target.get_internal_type()
    exact = _AS_THEY_ARE.get(kind)
    if kind in _TEXT:
        def prepare(value: Any) -> Any:
            return value if value is None or isinstance(value, str) else full(value)
    elif exact is datetime:
        def prepare(value: Any) -> Any:
            if value is None or (type(value) is datetime and value.tzinfo is not None):
                return value
            return full(value)
    elif exact is not None:
        def prepare(value: Any) -> Any:
            return value if value is None or type(value) is exact else full(value)
    elif kind in db.ops.integerfield_type_map:
        wrap = db.ops.integerfield_type_map[kind]

        def prepare(value: Any) -> Any:
            if value is None:
                return None
            return wrap(value) if type(value) is int else full(value)
    elif kind == "BinaryField":  # the snapshot, written by every command
        binary = db.Database.Binary

        def prepare(value: Any) -> Any:
            if value is None:
                return None
            return binary(value) if type(value) is bytes else full(value)
    elif kind == "JSONField" and target.encoder is None:
        from psycopg.types.json import Jsonb  # what Django's adapt_json_value wraps in

        def prepare(value: Any) -> Any:
            if value is None:
                return None
            return Jsonb(value, dumps=_json_bytes) if type(value) in (dict, list) else full(value)
    elif kind == "JSONField":
        adapt, encoder = db.ops.adapt_json_value, target.encoder

        def prepare(value: Any) -> Any:
            if value is None:
                return None
            return adapt(value, encoder) if type(value) in (dict, list) else full(value)
    else:
        return full
    return prepare


_ORJSON_EXACT = (orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS
                 | orjson.OPT_PASSTHROUGH_SUBCLASS)


def _not_plain(value: Any) -> NoReturn:
    raise TypeError(type(value).__name__)


def _json_bytes(value: Any) -> bytes | str:
    """A JSON column's value as Django writes it (``json.dumps``, no encoder) when the value
    holds only plain JSON types, written by orjson (several times faster; a jsonb value keeps
    no spacing, so the stored value is the same); anything else (a datetime, a str subclass, an
    integer past 64 bits, a key that is not a string…) goes to ``json.dumps`` itself, which
    writes or refuses it as Django would. Three kinds of value orjson writes where Django
    would not: a ``uuid.UUID`` and a plain ``enum.Enum`` member (their values; ``json.dumps``
    refuses both) and a float NaN or infinity (``null``; PostgreSQL refuses Django's ``NaN``).
    No command writes any of them: a command's JSON is its events' data and its request and
    answer, made of strings, integers, booleans, lists and dicts (the engine's moves, and
    DRF's parser refuses NaN); tests/games/test_store_statements.py pins all of this."""
    try:
        return orjson.dumps(value, default=_not_plain, option=_ORJSON_EXACT)
    except TypeError:  # orjson.JSONEncodeError is one
        return json.dumps(value)


def _execute(statements: Sequence[_Statement]) -> None:
    """Run the statements; an update must change its row. Elsewhere one after another, in
    order; on PostgreSQL as one statement, the first ones as common table expressions of the
    last (a dealt hand's events, row and seed). A command's events and hand update go through
    ``_execute_guarded`` there instead."""
    db = _db()
    runs = [(model, sql, params, sql.startswith("UPDATE")) for model, sql, params in statements]
    if db.vendor == "postgresql" and len(runs) > 1:
        head = ", ".join(f"w{i} AS ({sql})" for i, (_, sql, _, _) in enumerate(runs[:-1]))
        model, sql, _, updates = runs[-1]
        runs = [(model, f"WITH {head} {sql}", [p for _, _, ps, _ in runs for p in ps], updates)]
    with _cursor(db) as cursor:
        for model, sql, params, updates in runs:
            try:
                cursor.execute(sql, params)
            except IntegrityError as exc:
                _refuse(exc, model)
            if updates and cursor.rowcount != 1:
                raise DatabaseError(f"{model._meta.label}: the row to update was not found")


def _execute_guarded(hand: Hand, pending: Sequence[dict[str, Any]],
                     command: dict[str, Any] | None, *, read_seq: int,
                     partie_fields: Collection[str] = (),
                     accounts: Sequence[Account] = (),
                     fields: Sequence[str] = HAND_FIELDS,
                     accounts_of: AccountsOf | None = None) -> bool:
    """PostgreSQL: ``save``'s statement, its update first and guarded: ``WITH u AS (UPDATE the
    hand … WHERE id = … AND last_seq = <read_seq> AND status = 'playing' RETURNING id), w0 AS
    (INSERT the events, their hand_id taken from u), w1 AS (INSERT the command), p AS (UPDATE
    the partie … AND EXISTS (SELECT 1 FROM u) RETURNING its row), a AS (the balances of
    ``accounts``, or the accounts of ``accounts_of``) SELECT … FROM u, p, a``.
    If the hand's row does not match, u is
    empty, the events' hand_id is NULL and the statement fails on that NOT NULL constraint,
    writing nothing. The update, read by the events and by the partie's update, runs before
    both: it takes the hand's row lock before any event key is inserted and before the
    partie's row is locked, the order every writer of a hand's end follows (a command played
    without the locking read, moves._in_guarded, could otherwise lock the partie and wait for
    the hand while a locked writer of the hand waits for the partie). True if the partie was
    updated (and ``hand.partie`` refreshed from its row).

    The accounts of ``accounts_of`` are read as the statement's snapshot has them, taken
    before any wait for the hand's lock: a buy-in committed during such a wait is not in the
    balances read (the books stay right: the ledger locks and reads the accounts again when it
    posts), as a buy-in committed just after the read would not be."""
    db = _db()
    names = sorted(partie_fields)
    reads = ("ids" if accounts else "of" if accounts_of is not None else "") if names else ""
    _, events_sql, events_params = _insert_statement(HandEvent, pending, given="hand_id",
                                                     expression=_hand_of_u())
    sql = _guarded_sql(db.vendor, tuple(fields), events_sql,
                       tuple(command) if command is not None else None, tuple(names), reads)
    params = _update_statement(hand, fields)[2]
    params += [read_seq, Hand.Status.PLAYING.value]
    params += events_params
    if command is not None:
        params += _insert_statement(Command, [command])[2]
    if names:
        params += _update_statement(hand.partie, names)[2]
        if reads == "ids":
            params.append([account.pk for account in accounts])
        elif reads == "of":
            assert accounts_of is not None
            params += [accounts_of.club_key, list(accounts_of.owners), accounts_of.pot_ref]
    with _cursor(db) as cursor:
        try:
            cursor.execute(sql, params)
        except IntegrityError as exc:
            _refuse(exc, HandEvent)
        row = cursor.fetchone()
    if row is None:  # the events' insert fails first if u is empty; p is the partie's own row
        raise DatabaseError(f"{Hand._meta.label}: the row to update was not found")
    if not partie_fields:
        return False
    width = len(Partie._meta.concrete_fields)
    fresh = instances(row[1:1 + width], Partie)[0]
    for field in Partie._meta.concrete_fields:
        setattr(hand.partie, field.attname, getattr(fresh, field.attname))
    if accounts_of is not None and not accounts:
        accounts_of.found.extend(_accounts_from_arrays(row[1 + width:]))
    elif accounts:
        ids, held, posted = row[1 + width:]
        by_id = {account.pk: account for account in accounts}
        for account_id, balance, last_posted_at in zip(ids or [], held or [], posted or [],
                                                       strict=True):
            by_id[account_id].balance = balance
            by_id[account_id].last_posted_at = last_posted_at
    return True


@functools.cache
def _hand_of_u() -> str:
    """The events' hand in ``_execute_guarded``'s statement: the hand its update returned."""
    return f"(SELECT {_db().ops.quote_name(Hand._meta.pk.column)} FROM u)"


@functools.lru_cache(maxsize=128)
def _guarded_sql(vendor: str, fields: tuple[str, ...], events_sql: str,
                 command_names: tuple[str, ...] | None,
                 partie_fields: tuple[str, ...], reads: str) -> str:
    """``_execute_guarded``'s text for one shape of command (the hand's fields written, the
    events' insert, the command's columns, the partie's fields, which accounts are read:
    ``ids``, ``of`` or none), built once: its parameters come in the order
    ``_execute_guarded`` gives them."""
    qn = _db().ops.quote_name
    pk = qn(Hand._meta.pk.column)
    update = _update_plan(vendor, Hand, fields)[0]
    update += f" AND {qn('last_seq')} = %s AND {qn('status')} = %s RETURNING {pk}"
    parts = [f"u AS ({update})"]
    parts.append(f"w0 AS ({events_sql})")
    if command_names is not None:
        parts.append(f"w1 AS ({_insert_plan(vendor, Command, command_names, 1, '', '')[0]})")
    select = f"SELECT u.{pk} FROM u"
    if partie_fields:
        partie_sql = _update_plan(vendor, Partie, partie_fields)[0]
        columns = ", ".join(qn(f.column) for f in Partie._meta.concrete_fields)
        parts.append(f"p AS ({partie_sql} AND EXISTS (SELECT 1 FROM u) RETURNING {columns})")
        columns_read, joined = f"u.{pk}, {_columns(vendor, Partie, 'p')}", "u CROSS JOIN p"
        if reads == "ids":
            parts.append(f"a AS (SELECT array_agg(a.id) AS ids, array_agg(a.balance) AS held, "
                         f"array_agg(a.last_posted_at) AS posted "
                         f"FROM {qn(Account._meta.db_table)} a WHERE a.id = ANY (%s::bigint[]))")
            columns_read += ", a.ids, a.held, a.posted"
            joined += " CROSS JOIN a"
        elif reads == "of":  # the accounts whole, each column as an array
            account_select, account_columns = _accounts_as_arrays("%s", "%s", "%s")
            parts.append(f"a AS ({account_select})")
            columns_read += ", " + account_columns
            joined += " CROSS JOIN a"
        select = f"SELECT {columns_read} FROM {joined}"
    return f"WITH {', '.join(parts)} {select}"


UNIQUE_VIOLATION, NOT_NULL_VIOLATION = "23505", "23502"


def _refuse(exc: IntegrityError, model: type[models.Model]) -> NoReturn:
    # Which table refused the row, and why: PostgreSQL names both (one statement may write
    # several tables). Only a taken key, or the guarded update's missing hand, is a refusal;
    # any other constraint's failure is a bug, raised as it is. SQLite names neither: its
    # statements write one table, and only the keys can refuse these rows.
    cause = exc.__cause__
    diag = getattr(cause, "diag", None)
    table = getattr(diag, "table_name", None) or model._meta.db_table
    state = getattr(cause, "sqlstate", None)
    if table == Command._meta.db_table and state in (None, UNIQUE_VIOLATION):
        raise CommandConflict(COMMAND_REUSED) from None
    if table == HandEvent._meta.db_table and (
            state in (None, UNIQUE_VIOLATION)
            or (state == NOT_NULL_VIOLATION and getattr(diag, "column_name", None) == "hand_id")):
        raise StaleSequence("another move was recorded first; reload the hand") from None
    raise exc


def instances(row: Sequence[Any], *of: type[models.Model]) -> list[Any]:
    """One instance of each model from a row of ``_columns(model_1), _columns(model_2), …``,
    converted as the ORM converts what it reads."""
    db = _db()
    out = []
    start = 0
    for model in of:
        names, converted = _reader(db.vendor, model)
        values = list(row[start:start + len(names)])
        for i, col, converters in converted:
            for convert in converters:
                values[i] = convert(values[i], col, db)
        out.append(built(model, db.alias, names, values))
        start += len(names)
    return out


@functools.lru_cache(maxsize=32)
def _reader(vendor: str, model: type[models.Model]) -> tuple[tuple[str, ...], list[Any]]:
    """A model's attnames in column order, and the columns that need converting (index,
    column, converters): looked up once, not field by field at every row."""
    fields = model._meta.concrete_fields
    converted = []
    for i, field in enumerate(fields):
        col, converters = _converters(vendor, field)
        if converters:
            converted.append((i, col, tuple(converters)))
    return tuple(f.attname for f in fields), converted


def _cursor(db: Any) -> Any:
    """A cursor for these statements. On PostgreSQL one that binds its parameters on the server
    (values sent apart from the text, bytes as bytes), so that the connection prepares each
    statement once and reuses its plan (``prepare_threshold``, config/settings/base.py):
    planning the hand's read cost PostgreSQL four times its execution. Wrapped as Django wraps
    its own (errors converted, queries logged when they are being captured). Elsewhere,
    Django's own cursor."""
    if db.vendor != "postgresql":
        return db.cursor()
    db.ensure_connection()
    db.validate_thread_sharing()
    if getattr(db, "_academie_kept_busy", False):
        # The kept cursor is in use by a statement whose results are still to be read (a
        # nested use): a cursor of its own, closed on exit, so that neither clobbers the other.
        raw = _numbered_cursor()(db.connection)
        return _PreparedDebugCursor(raw, db) if db.queries_logged else db.make_cursor(raw)
    raw = _kept_cursor(db)
    return _KeptDebugCursor(raw, db) if db.queries_logged else _KeptCursorWrapper(raw, db)


def _kept_cursor(db: Any) -> Any:
    """The cursor ``db`` keeps for these statements on its current psycopg connection (a
    ``_numbered_cursor``), made again when that connection changes or the cursor was closed.

    A psycopg cursor's transformer caches the dumper of each value type it has sent and the
    loader of each column type it has read while the same statement runs again (a usual
    move's case); a new cursor (and Django wrapper) per statement set them up anew every time:
    keeping it took a tenth to a fifth off a usual move's CPU (bench/api_bench.md, eleventh
    round). Kept on Django's connection object, which one thread uses at a time: a closed
    connection's cursor is dropped with it, nothing refers to it from anywhere else. While a
    ``with`` block holds it, ``_cursor`` gives any nested use a cursor of its own."""
    raw = db.connection
    cursor = getattr(db, "_academie_kept_cursor", None)
    if cursor is None or cursor.closed or cursor.connection is not raw:
        cursor = _numbered_cursor()(raw)
        db._academie_kept_cursor = cursor
    return cursor


class _Kept:
    """A wrapper of the kept cursor: marks it in use for its ``with`` block, and leaves it open
    on exit."""

    db: Any

    def __enter__(self) -> Any:
        self.db._academie_kept_busy = True
        return self

    def __exit__(self, type: Any, value: Any, traceback: Any) -> None:
        self.db._academie_kept_busy = False


class _KeptCursorWrapper(_Kept, CursorWrapper):
    """Django's wrapper (errors converted) of the kept cursor."""


@functools.cache
def _numbered_cursor() -> type:
    """psycopg's ``RawCursor`` (server-side binding, PostgreSQL's own ``$1, $2…``) for
    statements written with ``%s``: each text is numbered once (``_numbered``). psycopg's own
    cursor parses a text into ``$n`` at every execution unless it caches it, and it caches no
    statement of more than 50 parameters: a deal's, a hand's end, 0.3–0.4 ms each."""
    from psycopg import RawCursor

    class NumberedCursor(RawCursor):  # type: ignore[type-arg]
        def execute(self, query: Any, params: Any = None, **kwargs: Any) -> Any:
            return super().execute(_numbered(query), params, **kwargs)

        def executemany(self, query: Any, params_seq: Any, **kwargs: Any) -> Any:
            return super().executemany(_numbered(query), params_seq, **kwargs)

    return NumberedCursor


@functools.lru_cache(maxsize=512)
def _numbered(sql: str) -> str:
    """``sql``'s ``%s`` placeholders as ``$1, $2…`` (these statements hold no other ``%``)."""
    parts = sql.split("%s")
    if any("%" in part for part in parts):
        raise ValueError(f"a statement with a literal %: {sql[:80]}")
    out = [parts[0]]
    for n, part in enumerate(parts[1:], start=1):
        out.append(f"${n}{part}")
    return "".join(out)


class _PreparedDebugCursor(CursorDebugWrapper):
    """Logs a statement as written (with its ``%s``): Django's log reads the text psycopg
    last sent, which a prepared statement's execution no longer carries (it logged None)."""

    def execute(self, sql: str, params: Any = None) -> Any:
        with self.debug_sql(sql, params):
            return CursorWrapper.execute(self, sql, params)


class _KeptDebugCursor(_Kept, _PreparedDebugCursor):
    """``_PreparedDebugCursor`` of the kept cursor."""


def writes_in_one_statement() -> bool:
    """Whether ``save`` writes a command's rows as one statement (PostgreSQL), which the move
    played without a transaction relies on (moves._in_one_statement)."""
    return _vendor() == "postgresql"


@functools.cache
def _vendor() -> str:
    """The default database's dialect: its engine's, fixed for the life of the process (a
    lookup of the thread's connection costs microseconds, and the move path asks often)."""
    return connections[DEFAULT_DB_ALIAS].vendor


def _db() -> Any:
    # The connection itself rather than the ``connection`` proxy, whose every attribute read is
    # a thread-local lookup: these helpers read many.
    return connections[DEFAULT_DB_ALIAS]


# The statements depend only on the models and the database's dialect: built once.


@functools.lru_cache(maxsize=16)
def _columns(vendor: str, model: type[models.Model], alias: str) -> str:
    qn = _db().ops.quote_name
    return ", ".join(f"{alias}.{qn(f.column)}" for f in model._meta.concrete_fields)


@functools.lru_cache(maxsize=256)
def _converters(vendor: str, field: models.Field) -> tuple[Any, list[Any]]:
    # What the ORM's compiler applies to a column it reads (SQLCompiler.get_converters).
    db = _db()
    col = field.get_col(field.model._meta.db_table)
    return col, db.ops.get_db_converters(col) + field.get_db_converters(db)

