"""Version 3 of the hand record (HAND_RECORD.md, "Version 3"): the keyed deck, sealed fields,
the chain over sealed forms, and receipts checked by the verifier and its command line.

The spec's formulas are written out again here, read literally, so that the engine is checked
against the text and not against itself.
"""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import random
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.engine.base import MOVE_BYS
from games.engine.bots import make_bot
from games.engine.deal import RandomStream, commitment, shuffled
from games.engine.play import play_out
from games.engine.record import build_record, seal_all
from games.engine.registry import get_game
from games.engine.seals import (
    checkpoint_message,
    deck_key_v3,
    hash_v3,
    key_id,
    seals_of,
    shown_hash,
)
from games.engine.shares import SharedDeal, deck_v2, deck_v3, first_dealer_v2, share_event
from games.engine.verify import (
    Discrepancy,
    check_receipts,
    main,
    read_keys,
    read_receipts,
    verify_record,
)
from games.engine.visibility import redact_events

from ..receipts import forged_timeout, rechain

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
hex32 = st.binary(min_size=32, max_size=32).map(bytes.hex)
TEST_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))


def canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def reference_key(seed: str, shares: dict[int, str]) -> bytes:
    message = b"academie.hand/3 deck" + b"".join(
        bytes([s]) + bytes.fromhex(shares[s]) for s in sorted(shares))
    return hmac.new(bytes.fromhex(seed), message, hashlib.sha256).digest()


def reference_seal(seed: str, seq: int, field: str, value: Any) -> str:
    mac = hmac.new(bytes.fromhex(seed), canonical(["academie.hand/3 seal", seq, field, value]),
                   hashlib.sha256)
    return "sealed:" + mac.hexdigest()


def v3_record(game_name: str, seed: str, shares: dict[int, str], n: int,
              bots: str = "heuristic") -> dict[str, Any]:
    """A finished version-3 hand of bots, dealt and chained as the service does it."""
    game = get_game(game_name)
    engine = SharedDeal(game, seed, version=3)
    started = engine.start(
        dealer=first_dealer_v2(seed, n), seats=[{"seat": i, "player": f"p{i}"} for i in range(n)],
        options=game.normalise_options({}), chips_before={str(i): 20 for i in range(n)},
        pot_before=0, commitment=commitment(seed))
    events = [started, *(share_event(s, shares[s]) for s in sorted(shares))]
    state = engine.replay((), events)
    for event in engine.deal(state):
        events.append(event)
        state = engine.apply(state, event)
    players = [make_bot(bots, random.Random(i)) for i in range(n)]
    state, events = play_out(engine, state, events, bots=players)  # type: ignore[arg-type]
    sealed = seal_all(events, commitment=commitment(seed), at="2026-12-06T20:00:00Z", seed=seed)
    return build_record(game=game_name, hand="hand-1", table="t", partie="p", number=1,
                        seed=seed, deck=deck_v3(game_name, seed, shares), events=sealed,
                        version=3)


def receipt(record: dict[str, Any], seq: int, key: Ed25519PrivateKey = TEST_KEY
            ) -> dict[str, Any]:
    public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    h = record["events"][seq - 1]["hash"]
    sig = key.sign(canonical(["academie.checkpoint/1", record["hand"], seq, h]))
    return {"hand": record["hand"], "seq": seq, "hash": h, "key": key_id(public),
            "sig": sig.hex()}


def keys_of(*keys: Ed25519PrivateKey) -> dict[str, Any]:
    out = []
    for key in keys:
        public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        out.append({"id": hashlib.sha256(public).hexdigest()[:16], "public": public.hex(),
                    "since": "2026-12-01T00:00:00Z", "until": None})
    return {"keys": out}


# -- the deck --------------------------------------------------------------------------------

@SETTINGS
@given(seed=hex32, data=st.data())
def test_the_deck_key_is_the_texts(seed: str, data: st.DataObject) -> None:
    shares = data.draw(st.dictionaries(st.integers(0, 7), hex32, max_size=8))
    assert deck_key_v3(seed, shares) == reference_key(seed, shares)
    assert deck_v3("commere", seed, shares) == shuffled(
        "commere", RandomStream(reference_key(seed, shares).hex()))


@SETTINGS
@given(seed=hex32)
def test_with_no_share_no_deck_follows_from_the_commitment(seed: str) -> None:
    """Version 2's flaw: its deck without shares was the shuffle under the commitment."""
    public = commitment(seed)
    for game in ("comet", "commere"):
        v3 = deck_v3(game, seed, {})
        assert v3 != shuffled(game, RandomStream(public))
        assert v3 != deck_v2(game, seed, {})
        assert deck_v2(game, seed, {}) == shuffled(game, RandomStream(public))


# -- seals and the chain ---------------------------------------------------------------------

@SETTINGS
@given(seed=hex32, game_n=st.sampled_from([("comet", 3), ("commere", 4)]))
def test_seals_are_the_texts_and_the_record_verifies(seed: str, game_n: tuple[str, int]
                                                     ) -> None:
    game, n = game_n
    record = v3_record(game, seed, {0: "11" * 32}, n)
    assert record["format"] == "academie.hand/3"
    assert verify_record(record) == record["digest"]
    sealed_seen = 0
    for event in record["events"]:
        seals = seals_of(event, seed)
        for field, value in seals.items():
            assert value == reference_seal(seed, event["seq"], field, event[field])
        expected_fields = set()
        if event["type"] in ("offer", "give_back", "return", "draw"):
            expected_fields.add("card")
        if event["type"] == "keep_comet":
            expected_fields.add("seat")
        if event["by"] in MOVE_BYS:
            expected_fields.add("by")
        assert set(seals) == expected_fields
        sealed_seen += len(seals)
        body = {k: v for k, v in event.items() if k != "hash"}
        body.update(seals)
        assert event["hash"] == hashlib.sha256(canonical(body)).hexdigest()
    assert sealed_seen > 0


@SETTINGS
@given(seed=hex32, data=st.data())
def test_changing_a_sealed_value_changes_its_seal_and_the_chain(seed: str,
                                                                data: st.DataObject) -> None:
    record = v3_record("commere", seed, {}, 6)
    sealed = [e for e in record["events"] if seals_of(e, seed)]
    event = data.draw(st.sampled_from(sealed))
    field = data.draw(st.sampled_from(sorted(seals_of(event, seed))))
    other = {"card": next(c for c in ("AS", "2S") if c != event.get("card")),
             "seat": (event.get("seat") or 0) + 1,
             "by": "forced" if event["by"] != "forced" else "player"}[field]
    forged = copy.deepcopy(record)
    target = forged["events"][event["seq"] - 1]
    target[field] = other
    assert seals_of(target, seed)[field] != seals_of(event, seed)[field]
    assert hash_v3(target, seals_of(target, seed)) != event["hash"]
    with pytest.raises(Discrepancy, match=f"event {event['seq']}: hash"):
        verify_record(forged)


def test_a_shown_event_recomputes_its_hash_from_what_it_carries() -> None:
    seed = "5a" * 32
    record = v3_record("commere", seed, {1: "22" * 32}, 4)
    events = [dict(e, seals=seals_of(e, seed)) for e in record["events"][:-1]]
    for viewer in (None, 0, 1, 2, 3):
        shown = redact_events(events, viewer=viewer, n_seats=4, over=False, chain=True)
        prev = record["commitment"]
        for event in shown:
            assert event["prev"] == prev and shown_hash(event) == event["hash"]
            prev = event["hash"]
            for field, seal in event.get("seals", {}).items():
                assert seal.startswith("sealed:") and event[field] != seal


def test_a_sealed_value_in_place_of_a_clear_one_is_refused() -> None:
    seed = "5b" * 32
    record = v3_record("commere", seed, {}, 4)
    offer = next(e for e in record["events"] if e["type"] == "offer")
    offer["card"] = seals_of(offer, seed)["card"]
    with pytest.raises(Discrepancy, match=f"event {offer['seq']}: its card is a seal"):
        verify_record(record)


# -- receipts --------------------------------------------------------------------------------

def forged_hand(seed_base: int = 0) -> tuple[dict[str, Any], dict[str, Any], int]:
    """A hand and the same hand rewritten by someone who knows the seed (tests/receipts.py's
    forgery: a ``player`` move that was the default move made a ``timeout``). Both verify."""
    for k in range(seed_base, seed_base + 40):
        record = v3_record("comet", hashlib.sha256(f"forge{k}".encode()).hexdigest(), {}, 3)
        found = forged_timeout(record)
        if found is not None:
            return record, *found
    raise AssertionError("no player move equal to the default move in 40 hands")


def test_a_rechained_forgery_passes_the_chain_but_contradicts_a_later_receipt() -> None:
    record, forged, seq = forged_hand()
    assert verify_record(forged) == forged["digest"] != record["digest"]
    keys = read_keys(keys_of(TEST_KEY))
    later = [receipt(record, seq), receipt(record, len(record["events"]))]
    assert check_receipts(record, later, keys) == 2
    with pytest.raises(Discrepancy, match=f"receipt for seq {seq}: .* changed after the "
                                          f"service showed it"):
        check_receipts(forged, later, keys)
    # A receipt taken before the forged move still holds: the chain up to it is unchanged.
    assert check_receipts(forged, [receipt(record, seq - 1)], keys) == 1


def test_receipts_with_a_bad_signature_or_an_unknown_key_are_named() -> None:
    record = v3_record("comet", "77" * 32, {}, 2)
    keys = read_keys(keys_of(TEST_KEY))
    bad = receipt(record, 3)
    bad["sig"] = ("0" if bad["sig"][0] != "0" else "1") + bad["sig"][1:]
    with pytest.raises(Discrepancy, match="receipt for seq 3: its signature does not verify"):
        check_receipts(record, [bad], keys)
    stranger = Ed25519PrivateKey.from_private_bytes(b"\x09" * 32)
    with pytest.raises(Discrepancy, match="receipt for seq 2: signed by key .* not among"):
        check_receipts(record, [receipt(record, 2, stranger)], keys)
    beyond = receipt(record, 2)
    beyond["seq"] = len(record["events"]) + 5
    with pytest.raises(Discrepancy):  # its signature covers seq 2
        check_receipts(record, [beyond], keys)


def test_the_checkpoint_message_is_the_texts() -> None:
    assert checkpoint_message("h", 4, "ab" * 32) == canonical(
        ["academie.checkpoint/1", "h", 4, "ab" * 32])


def write(path: Path, obj: Any) -> str:
    path.write_text(json.dumps(obj))
    return str(path)


def test_the_command_line_checks_receipts(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    record, forged, seq = forged_hand(100)
    receipts = {"receipts": [receipt(record, seq), receipt(record, len(record["events"]))]}
    args = ["--receipts", write(tmp_path / "r.json", receipts),
            "--keys", write(tmp_path / "k.json", keys_of(TEST_KEY))]
    assert main([write(tmp_path / "good.json", record), *args]) == 0
    assert "(2 receipts checked)" in capsys.readouterr().out
    assert main([write(tmp_path / "forged.json", forged), *args]) == 1
    out = capsys.readouterr().out
    assert f"receipt for seq {seq}" in out and "changed after the service showed it" in out


@pytest.mark.parametrize("content, message", [
    ("not json", "is not JSON"),
    ('{"receipts": 3}', "must be a list of receipts"),
    ('[{"hand": "h", "seq": 1, "hash": "zz", "key": "00", "sig": "00"}]', "'hash' must be 64"),
])
def test_a_malformed_receipts_file_is_a_clear_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, message: str) -> None:
    record = v3_record("comet", "78" * 32, {}, 2)
    (tmp_path / "r.json").write_text(content)
    code = main([write(tmp_path / "rec.json", record), "--receipts", str(tmp_path / "r.json"),
                 "--keys", write(tmp_path / "k.json", keys_of(TEST_KEY))])
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_keys_file_whose_id_lies_is_refused() -> None:
    document = keys_of(TEST_KEY)
    document["keys"][0]["id"] = "0" * 16
    with pytest.raises(Exception, match="its id is not"):
        read_keys(document)
    assert read_receipts([]) == []


def test_an_unknown_format_is_refused() -> None:
    record = v3_record("comet", "79" * 32, {}, 2)
    record["format"] = "academie.hand/9"
    with pytest.raises(Discrepancy, match="format is 'academie.hand/9'"):
        verify_record(record)


# -- the verifier holds records to the text where it was laxer ----------------------------------

def test_a_record_missing_an_option_is_refused() -> None:
    record = v3_record("comet", "7a" * 32, {}, 3)
    for holder in (record, record["events"][0]):
        holder["options"].pop("per_card", None)
    with pytest.raises(Discrepancy, match="options must hold every option.*missing: per_card"):
        verify_record(rechain(record))


def test_a_progressive_comet_payment_doubled_more_than_the_earlier_deals_is_refused() -> None:
    from games.engine.verify import _check_comet_due

    options = {"comet_payment": 1, "progressive_comet": True}
    _check_comet_due(options, 1, 1)
    _check_comet_due(options, 4, 3)  # two earlier deals without the Comet
    with pytest.raises(Discrepancy, match="doubled at most 0 time"):
        _check_comet_due(options, 2, 1)
    with pytest.raises(Discrepancy, match="doubled at most 2 time"):
        _check_comet_due(options, 8, 3)
