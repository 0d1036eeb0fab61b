"""Verify hand records without a database (HAND_RECORD.md, "Verifying").

    python -m games.engine.verify RECORD.json [...] [--receipts R.json --keys K.json]

prints ``OK <digest>`` per record or its first discrepancy, and exits non-zero if any fails.
It checks the commitment, the deck, the first dealer, the hash chain (over the sealed forms in
version 3), every move's legality, every ``forced`` move (the only legal move) and ``timeout``
move (the default move), every derived event (payments and their order, stops, draws,
showdown) and the result.

With ``--receipts`` (a player's receipts, as the audit page downloads them) and ``--keys`` (the
service's published keys), each receipt of a record's hand is checked too: its signature under
the key it names, and that the record's event at its seq has exactly the hash the service
signed when it showed that event. Checking signatures needs the ``cryptography`` package,
imported only then.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from .base import (
    BY_FORCED,
    BY_PLAYER,
    BY_SERVICE,
    BY_TIMEOUT,
    ENVELOPE,
    MOVE_BYS,
    Event,
    RuleError,
    event_hash,
)
from .deal import deal_from_seed
from .record import FORMAT
from .registry import GAME_NAMES, get_game
from .seals import FORMAT_V3, checkpoint_message, hash_v3, is_seal, key_id, seals_of
from .shares import DEAL, FORMAT_V2, SHARE, first_dealer_v2, is_share, shared_deck

FORMATS = (FORMAT, FORMAT_V2, FORMAT_V3)
#: The formats whose hands are dealt from the players' shares, and their version numbers.
SHARED_VERSIONS = {FORMAT_V2: 2, FORMAT_V3: 3}

_HEX64 = re.compile(r"[0-9a-f]{64}")
_AT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z")
HEADER_FIELDS = ("dealer", "seats", "options", "chips_before", "pot_before", "commitment")


class Discrepancy(Exception):
    """The first thing in a record that does not hold."""


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_header(record: Mapping[str, Any]) -> None:
    if record.get("format") not in FORMATS:
        raise Discrepancy(f"format is {record.get('format')!r}, expected one of "
                          f"{', '.join(FORMATS)}")
    if record.get("game") not in GAME_NAMES:
        raise Discrepancy(f"unknown game {record.get('game')!r}")
    for key in ("number", "dealer", "pot_before"):
        if not _int(record.get(key)):
            raise Discrepancy(f"{key} must be an integer")
    if record["number"] < 1:
        raise Discrepancy("number must be 1 or more")
    seats = record.get("seats")
    if not isinstance(seats, list) or not seats:
        raise Discrepancy("seats must be a non-empty list")
    for i, entry in enumerate(seats):
        if not isinstance(entry, dict) or entry.get("seat") != i or not _int(entry.get("seat")):
            raise Discrepancy(f"seats[{i}] must be {{'seat': {i}, 'player': …}}")
    n = len(seats)
    game = get_game(record["game"])
    if not game.MIN_SEATS <= n <= game.MAX_SEATS:
        raise Discrepancy(f"{n} seats: {record['game']} is for {game.MIN_SEATS}–{game.MAX_SEATS}")
    if not 0 <= record["dealer"] < n:
        raise Discrepancy(f"dealer {record['dealer']} is not a seat")
    keys = {str(s) for s in range(n)}
    chips = record.get("chips_before")
    if not isinstance(chips, dict) or set(chips) != keys:
        raise Discrepancy("chips_before must name every seat")
    if not all(_int(v) and v >= 0 for v in chips.values()):
        raise Discrepancy("chips_before must hold non-negative integers")
    if record["pot_before"] < 0:
        raise Discrepancy("pot_before is negative")
    if not isinstance(record.get("options"), dict):
        raise Discrepancy("options must be an object")
    expected = set(game.normalise_options({}))
    if set(record["options"]) != expected:
        missing = sorted(expected - set(record["options"]))
        unknown = sorted(set(record["options"]) - expected)
        raise Discrepancy("options must hold every option of the game, and only those"
                          + (f"; missing: {', '.join(missing)}" if missing else "")
                          + (f"; unknown: {', '.join(unknown)}" if unknown else ""))
    for key in ("commitment", "seed", "digest"):
        if not isinstance(record.get(key), str) or not _HEX64.fullmatch(record[key]):
            raise Discrepancy(f"{key} must be 64 lowercase hex digits")
    if record["format"] in SHARED_VERSIONS:
        _check_shares_header(record.get("shares"), n)
    elif "shares" in record:
        raise Discrepancy(f"a {FORMAT} record has no shares")


def _check_shares_header(shares: Any, n: int) -> None:
    if not isinstance(shares, list):
        raise Discrepancy("shares must be a list")
    last = -1
    for i, entry in enumerate(shares):
        if not isinstance(entry, dict) or set(entry) != {"seat", "share"}:
            raise Discrepancy(f"shares[{i}] must be {{'seat': …, 'share': …}}")
        seat = entry["seat"]
        if not _int(seat) or not 0 <= seat < n:
            raise Discrepancy(f"shares[{i}]: seat {seat!r} is not a seat")
        if seat <= last:
            raise Discrepancy("shares must be in ascending seat order, one per seat")
        last = seat
        if not is_share(entry["share"]):
            raise Discrepancy(f"shares[{i}]: a share is 64 lowercase hex digits")


def _shares_of(record: Mapping[str, Any]) -> dict[int, str]:
    return {int(e["seat"]): str(e["share"]) for e in record.get("shares", [])}


def _check_deal(record: Mapping[str, Any]) -> None:
    seed = record["seed"]
    if hashlib.sha256(bytes.fromhex(seed)).hexdigest() != record["commitment"]:
        raise Discrepancy("the seed does not match the commitment")
    if record["format"] in SHARED_VERSIONS:
        deck = shared_deck(SHARED_VERSIONS[record["format"]], record["game"], seed,
                           _shares_of(record))
        first_dealer = first_dealer_v2(seed, len(record["seats"]))
        derived_from = "the key of the seed and the shares"
    else:
        deck, first_dealer = deal_from_seed(record["game"], seed, len(record["seats"]))
        derived_from = "the seed"
    if record.get("deck") != deck:
        raise Discrepancy(f"deck is not the deck derived from {derived_from}")
    if record["number"] == 1 and record["dealer"] != first_dealer:
        raise Discrepancy(f"first hand: the seed draws seat {first_dealer} to deal, "
                          f"the record says {record['dealer']}")


def _check_chain(record: Mapping[str, Any]) -> None:
    events = record.get("events")
    if not isinstance(events, list) or not events:
        raise Discrepancy("events must be a non-empty list")
    prev = record["commitment"]
    last_at = ""
    v3 = record["format"] == FORMAT_V3
    for i, ev in enumerate(events, start=1):
        if not isinstance(ev, dict):
            raise Discrepancy(f"event {i} is not an object")
        if ev.get("seq") != i or not _int(ev.get("seq")):
            raise Discrepancy(f"event {i}: seq is {ev.get('seq')!r}, expected {i}")
        at = ev.get("at")
        if not isinstance(at, str) or not _AT.fullmatch(at):
            raise Discrepancy(f"event {i}: 'at' must be UTC ISO-8601 ending in Z")
        if _normal_at(at) < last_at:
            raise Discrepancy(f"event {i}: time goes backwards")
        last_at = _normal_at(at)
        if ev.get("prev") != prev:
            raise Discrepancy(f"event {i}: prev does not link to the previous event's hash")
        if v3:
            _check_clear(ev, i)
        expected = hash_v3(ev, seals_of(ev, record["seed"])) if v3 else event_hash(ev)
        if ev.get("hash") != expected:
            raise Discrepancy(f"event {i}: hash does not match its content")
        prev = ev["hash"]
    if record["digest"] != prev:
        raise Discrepancy("digest is not the last event's hash")


def _check_clear(ev: Mapping[str, Any], i: int) -> None:
    """A version-3 record lists its events in clear: a seal where a value belongs hides what
    the verifier must see."""
    for key, value in ev.items():
        if key not in ("prev", "hash") and is_seal(value):
            raise Discrepancy(f"event {i}: its {key} is a seal, not its value: a record "
                              f"lists its events in clear")
    if "seals" in ev:
        raise Discrepancy(f"event {i}: 'seals' is not a field of a record's event (a record's "
                          f"verifier derives the seals from the seed)")


def _normal_at(at: str) -> str:
    """Comparable form of a timestamp of any precision."""
    main, _, frac = at[:-1].partition(".")
    return main + "." + frac.ljust(9, "0")


def _same(expected: Event, got: Mapping[str, Any], index: int) -> None:
    got_event = Event.from_dict(dict(got))
    if (expected.type, expected.by) != (got_event.type, got_event.by) or \
            json.dumps(expected.data, sort_keys=True) != json.dumps(got_event.data, sort_keys=True):
        raise Discrepancy(
            f"event {index}: expected {json.dumps(expected.to_dict(), sort_keys=True)}, "
            f"got {json.dumps(got_event.to_dict(), sort_keys=True)}"
        )


def _check_shares(record: Mapping[str, Any]) -> int:
    """The ``share`` events after ``hand_started`` and the ``deal`` that closes them; return
    the index of the first event after ``deal``."""
    events = record["events"]
    n = len(record["seats"])
    sent: dict[int, str] = {}
    i = 1
    while i < len(events) and events[i].get("type") == SHARE:
        ev = events[i]
        seat = ev.get("seat")
        if ev.get("by") != BY_PLAYER or set(ev) != {*ENVELOPE, "seat", "share"}:
            raise Discrepancy(f"event {i + 1}: a share is {{seat, share}}, by player")
        if not _int(seat) or not 0 <= seat < n:
            raise Discrepancy(f"event {i + 1}: share from {seat!r}, which is not a seat")
        if seat in sent:
            raise Discrepancy(f"event {i + 1}: a second share from seat {seat}")
        if not is_share(ev.get("share")):
            raise Discrepancy(f"event {i + 1}: a share is 64 lowercase hex digits")
        sent[seat] = ev["share"]
        i += 1
    if i >= len(events) or events[i].get("type") != DEAL:
        raise Discrepancy(f"event {i + 1}: expected the deal after the shares")
    deal = events[i]
    if deal.get("by") != BY_SERVICE or set(deal) != {*ENVELOPE, "contributors"}:
        raise Discrepancy(f"event {i + 1}: the deal is {{contributors}}, by service")
    if deal.get("contributors") != sorted(sent):
        raise Discrepancy(f"event {i + 1}: the contributors are not the seats that sent a share "
                          f"({sorted(sent)})")
    if _shares_of(record) != sent:
        raise Discrepancy("the record's shares are not its share events")
    return i + 1


def _check_play(record: Mapping[str, Any]) -> None:
    game = get_game(record["game"])
    events = record["events"]
    # Event numbers as the record counts them: a version-2 hand's shares and deal are checked
    # first, and the game's play is checked from hand_started on, without them.
    numbers = list(range(1, len(events) + 1))
    if record["format"] in SHARED_VERSIONS:
        after = _check_shares(record)
        events = [events[0], *events[after:]]
        numbers = [1, *numbers[after:]]
    started = events[0]
    if started.get("type") != "hand_started" or started.get("by") != "service":
        raise Discrepancy("event 1 must be hand_started by service")
    for key in HEADER_FIELDS:
        if started.get(key) != record.get(key):
            raise Discrepancy(f"event 1: hand_started {key} differs from the record's")
    if record["game"] == "comet":
        due = record.get("comet_payment_due")
        if started.get("comet_payment_due") != due or not _int(due):
            raise Discrepancy("comet_payment_due missing or differs from hand_started")
        _check_comet_due(record["options"], due, record["number"])
    try:
        opening = game.begin(
            deck=record["deck"], dealer=record["dealer"], seats=record["seats"],
            options=record["options"], chips_before=record["chips_before"],
            pot_before=record["pot_before"], commitment=record["commitment"],
            **({"comet_payment_due": record["comet_payment_due"]}
               if record["game"] == "comet" else {}),
        )
    except (ValueError, TypeError, KeyError) as exc:
        raise Discrepancy(f"the hand cannot start: {exc}") from None
    if len(events) < len(opening):
        raise Discrepancy("the record ends before the antes are paid")
    for i, expected in enumerate(opening):
        _same(expected, events[i], numbers[i])
    state = game.replay(record["deck"], opening)
    i = len(opening)
    while i < len(events):
        if game.is_over(state):
            raise Discrepancy(f"event {numbers[i]}: the hand was already over")
        got = Event.from_dict(events[i])
        if got.by not in MOVE_BYS:
            raise Discrepancy(f"event {numbers[i]} ({got.type}): expected a player's move here, "
                              f"not an event by {got.by!r}")
        parsed = game.move_of(got)
        if parsed is None:
            raise Discrepancy(f"event {numbers[i]}: {got.type!r} is not a move")
        seat, move = parsed
        legal = game.legal_moves(state).get(seat, [])
        if got.by == BY_FORCED and legal != [move]:
            raise Discrepancy(f"event {numbers[i]}: forced {move}, but it is not seat "
                              f"{seat}'s only legal move")
        if got.by == BY_TIMEOUT:
            if seat not in game.to_act(state):
                raise Discrepancy(f"event {numbers[i]}: time-out for seat {seat}, who was not "
                                  f"awaited")
            default = game.default_move(state, seat)
            if default != move:
                raise Discrepancy(f"event {numbers[i]}: time-out move {move}, but the default move "
                                  f"is {default}")
        try:
            produced = game.decide(state, seat, move, got.by)
        except RuleError as exc:
            raise Discrepancy(f"event {numbers[i]}: illegal move {move} by seat {seat}: "
                              f"{exc.message}") from None
        if i + len(produced) > len(events):
            raise Discrepancy(f"event {numbers[i]}: the record stops before the events this move "
                              f"causes")
        for k, expected in enumerate(produced):
            _same(expected, events[i + k], numbers[i + k])
            state = game.apply(state, expected)
        i += len(produced)
    if not game.is_over(state):
        raise Discrepancy("the hand is not over at the last event")
    if events[-1].get("type") != "hand_over":
        raise Discrepancy("the last event must be hand_over")
    if events[-1].get("result") != record.get("result"):
        raise Discrepancy("result differs from hand_over's")
    if game.result(state) != record["result"]:
        raise Discrepancy("result is not what the moves give")


def _check_comet_due(options: Mapping[str, Any], due: int, number: int) -> None:
    base = options.get("comet_payment", 1)
    if not options.get("progressive_comet", False):
        if due != base:
            raise Discrepancy(f"comet_payment_due {due} must equal comet_payment {base}")
        return
    # Doubled once per consecutive earlier deal without the Comet: at most number - 1 times.
    value, doublings = base, 0
    while value < due and value > 0 and doublings < number - 1:
        value *= 2
        doublings += 1
    if value != due:
        raise Discrepancy(f"comet_payment_due {due} is not comet_payment {base} doubled at "
                          f"most {number - 1} time(s), once per earlier deal of the partie")


def verify_record(record: Mapping[str, Any]) -> str:
    """Return the record's digest, or raise ``Discrepancy`` naming the first one."""
    if not isinstance(record, Mapping):
        raise Discrepancy("a record is a JSON object")
    _check_header(record)
    _check_deal(record)
    _check_chain(record)
    try:
        _check_play(record)
    except Discrepancy:
        raise
    except Exception as exc:  # a tampered record may hold anything: never crash on it
        raise Discrepancy(f"the events cannot be replayed: {type(exc).__name__}: {exc}") from None
    return str(record["digest"])


# -- receipts ---------------------------------------------------------------------------------

_HEX16 = re.compile(r"[0-9a-f]{16}")
_HEX128 = re.compile(r"[0-9a-f]{128}")


class ReceiptsError(Exception):
    """A receipts or keys file that cannot be read as the spec writes them."""


def read_keys(document: Any) -> dict[str, bytes]:
    """The published keys (``{"keys": [{"id", "public", "since", "until"}]}``) by id, each
    id checked against its key."""
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        raise ReceiptsError('the keys file must be {"keys": [{"id": …, "public": …}, …]}')
    keys = {}
    for i, entry in enumerate(document["keys"]):
        public = entry.get("public") if isinstance(entry, dict) else None
        if not isinstance(public, str) or not _HEX64.fullmatch(public):
            raise ReceiptsError(f"keys[{i}]: 'public' must be 64 lowercase hex digits")
        raw = bytes.fromhex(public)
        if entry.get("id") != key_id(raw):
            raise ReceiptsError(f"keys[{i}]: its id is not the first 16 hex digits of the "
                                f"sha256 of its public key ({key_id(raw)})")
        keys[key_id(raw)] = raw
    return keys


def read_receipts(document: Any) -> list[dict[str, Any]]:
    """Receipts as a list, or as ``{"receipts": [...]}`` (the audit page's download); each
    must have the spec's shape."""
    receipts = document.get("receipts") if isinstance(document, dict) else document
    if not isinstance(receipts, list):
        raise ReceiptsError('the receipts file must be a list of receipts or '
                            '{"receipts": [...]}')
    for i, r in enumerate(receipts):
        if not isinstance(r, dict):
            raise ReceiptsError(f"receipt {i + 1} is not an object")
        if not isinstance(r.get("hand"), str) or not _int(r.get("seq")) or r["seq"] < 1:
            raise ReceiptsError(f"receipt {i + 1}: 'hand' must be a string and 'seq' a "
                                f"positive integer")
        for key, pattern, digits in (("hash", _HEX64, 64), ("key", _HEX16, 16),
                                     ("sig", _HEX128, 128)):
            if not isinstance(r.get(key), str) or not pattern.fullmatch(r[key]):
                raise ReceiptsError(f"receipt {i + 1} (seq {r['seq']}): '{key}' must be "
                                    f"{digits} lowercase hex digits")
    return receipts


def _signature_ok(public: bytes, signature: bytes, message: bytes) -> bool:
    try:
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    except ImportError:  # the rest of the verifier needs nothing outside the standard library
        raise ReceiptsError("checking receipts needs the 'cryptography' package "
                            "(pip install cryptography)") from None
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(signature, message)
    except (InvalidSignature, ValueError):
        return False
    return True


def check_receipts(record: Mapping[str, Any], receipts: Sequence[Mapping[str, Any]],
                   keys: Mapping[str, bytes]) -> int:
    """Check the receipts of ``record``'s hand against it; return how many were checked, or
    raise ``Discrepancy`` naming the first receipt that fails and why."""
    events = record["events"]
    checked = 0
    for r in receipts:
        if r["hand"] != record.get("hand"):
            continue
        seq, name = r["seq"], f"receipt for seq {r['seq']}"
        public = keys.get(r["key"])
        if public is None:
            raise Discrepancy(f"{name}: signed by key {r['key']}, which is not among the "
                              f"published keys")
        message = checkpoint_message(r["hand"], seq, r["hash"])
        if not _signature_ok(public, bytes.fromhex(r["sig"]), message):
            raise Discrepancy(f"{name}: its signature does not verify under key {r['key']}")
        if seq > len(events):
            raise Discrepancy(f"{name}: the service showed event {seq}, which the record does "
                              f"not have: the record was changed after the service showed it")
        if events[seq - 1].get("hash") != r["hash"]:
            raise Discrepancy(f"{name}: the record's event {seq} has hash "
                              f"{events[seq - 1].get('hash')}, but the service signed "
                              f"{r['hash']} when it showed it: the record was changed after "
                              f"the service showed it")
        checked += 1
    return checked


def _load_json(path: str, what: str) -> Any:
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except OSError as exc:
        raise ReceiptsError(f"cannot read the {what} file {path}: {exc.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ReceiptsError(f"the {what} file {path} is not JSON: {exc}") from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m games.engine.verify",
        description="Verify hand records (HAND_RECORD.md), and a player's receipts.")
    parser.add_argument("records", nargs="+", metavar="RECORD.json")
    parser.add_argument("--receipts", metavar="R.json",
                        help="receipts kept by a player's browser (needs --keys)")
    parser.add_argument("--keys", metavar="K.json", help="the service's published keys")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if (args.receipts is None) != (args.keys is None):
        parser.error("--receipts and --keys go together")
    receipts: list[dict[str, Any]] = []
    keys: dict[str, bytes] = {}
    if args.receipts is not None:
        try:
            receipts = read_receipts(_load_json(args.receipts, "receipts"))
            keys = read_keys(_load_json(args.keys, "keys"))
        except ReceiptsError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    failures = 0
    for path in args.records:
        try:
            with open(path, encoding="utf-8") as fh:
                record = json.load(fh)
            digest = verify_record(record)
            note = ""
            if args.receipts is not None:
                n = check_receipts(record, receipts, keys)
                note = f" ({n} receipt{'s' if n != 1 else ''} checked)"
            print(f"OK {digest}{note}")
        except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            failures += 1
            print(f"FAIL {path}: cannot read the record: {exc}")
        except Discrepancy as exc:
            failures += 1
            print(f"FAIL {path}: {exc}")
        except ReceiptsError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
