"""Version 2 of the hand record: the players' seed shares (HAND_RECORD.md, "Version 2").

The deck key and the deal are checked against the text read literally; records dealt through
``SharedDeal`` (the service's path) verify, and changing, dropping or adding a share is caught.
"""

from __future__ import annotations

import copy
import hashlib
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.engine.base import Event, Move
from games.engine.bots import make_bot
from games.engine.deal import RandomStream, commitment, deal_from_seed, shuffled
from games.engine.play import play_out
from games.engine.record import build_record, seal_all
from games.engine.registry import get_game
from games.engine.shares import (
    NotDealt,
    SharedDeal,
    deck_key,
    deck_v2,
    first_dealer_v2,
    share_event,
)
from games.engine.simulate import run
from games.engine.verify import Discrepancy, verify_record
from tests.engine.test_deal import reference_deal
from tests.engine.test_properties import rehash

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
hex32 = st.binary(min_size=32, max_size=32).map(bytes.hex)
GAMES = [("comet", 3), ("commere", 4)]


def share_sets(n: int) -> st.SearchStrategy[dict[int, str]]:
    return st.dictionaries(st.integers(min_value=0, max_value=n - 1), hex32, max_size=n)


def reference_key(seed: str, shares: dict[int, str]) -> bytes:
    """HAND_RECORD.md's K read literally: seed bytes, then per contributor in ascending seat
    order its seat as one byte and its 32 bytes."""
    material = bytes.fromhex(seed) + b"".join(
        bytes([seat]) + bytes.fromhex(shares[seat]) for seat in sorted(shares))
    return hashlib.sha256(material).digest()


def v2_record(game_name: str, seed: str, shares: dict[int, str], n: int,
              order: list[int] | None = None) -> dict[str, Any]:
    """A finished version-2 hand of heuristic bots, dealt as the service deals it."""
    game = get_game(game_name)
    engine = SharedDeal(game, seed)
    started = engine.start(
        dealer=first_dealer_v2(seed, n), seats=[{"seat": i, "player": f"p{i}"} for i in range(n)],
        options=game.normalise_options({}), chips_before={str(i): 20 for i in range(n)},
        pot_before=0, commitment=commitment(seed))
    events = [started, *(share_event(s, shares[s]) for s in (order or sorted(shares)))]
    state = engine.replay((), events)
    for event in engine.deal(state):
        events.append(event)
        state = engine.apply(state, event)
    bots = [make_bot("heuristic", random.Random(i)) for i in range(n)]
    played = events[:]
    state, events = play_out(engine, state, played, bots=bots)  # type: ignore[arg-type]
    sealed = seal_all(events, commitment=commitment(seed), at="2026-12-04T20:00:00Z")
    return build_record(game=game_name, hand="h", table="t", partie="p", number=1, seed=seed,
                        deck=deck_v2(game_name, seed, shares), events=sealed)


@SETTINGS
@given(seed=hex32, data=st.data())
def test_the_deck_key_is_the_texts(seed: str, data: st.DataObject) -> None:
    shares = data.draw(share_sets(8))
    assert deck_key(seed, shares) == reference_key(seed, shares)
    expected, _ = reference_deal("commere", reference_key(seed, shares).hex(), 4)
    assert deck_v2("commere", seed, shares) == expected


def test_without_contributors_the_key_is_the_seeds_hash() -> None:
    seed = "ab" * 32
    assert deck_key(seed, {}) == hashlib.sha256(bytes.fromhex(seed)).digest()


@SETTINGS
@given(seed=hex32, data=st.data())
def test_the_deck_under_k_differs_from_the_version_1_deck(seed: str, data: st.DataObject) -> None:
    shares = data.draw(share_sets(5))
    for game_name in ("comet", "commere"):
        assert deck_v2(game_name, seed, shares) != deal_from_seed(game_name, seed, 5)[0]


@SETTINGS
@given(seed=hex32, n=st.integers(min_value=2, max_value=8), data=st.data())
def test_the_first_dealer_is_the_seeds_own_first_draw(seed: str, n: int,
                                                      data: st.DataObject) -> None:
    shares = data.draw(share_sets(n))
    assert first_dealer_v2(seed, n) == RandomStream(seed).uniform(n)
    # ... before any other draw, whatever the shares: it is public at hand_started.
    assert first_dealer_v2(seed, n) != -1
    stream = RandomStream(seed)
    stream.uniform(n)
    assert deck_v2("comet", seed, shares) == shuffled("comet", RandomStream(
        deck_key(seed, shares).hex()))


@pytest.mark.parametrize(("game_name", "n"), GAMES)
@SETTINGS
@given(seed=hex32, data=st.data())
def test_a_version_2_record_verifies(game_name: str, n: int, seed: str,
                                     data: st.DataObject) -> None:
    shares = data.draw(share_sets(n))
    order = data.draw(st.permutations(sorted(shares)))
    record = v2_record(game_name, seed, shares, n, order=list(order))
    assert record["format"] == "academie.hand/2"
    assert record["shares"] == [{"seat": s, "share": shares[s]} for s in sorted(shares)]
    assert verify_record(record) == record["digest"]


def _share_events(record: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in record["events"] if e["type"] == "share"]


CHANGES = ["change", "drop", "add", "drop_from_list", "contributor"]


@pytest.mark.parametrize("change", CHANGES)
@pytest.mark.parametrize(("game_name", "n"), GAMES)
@SETTINGS
@given(seed=hex32, data=st.data(), extra=hex32)
def test_changing_dropping_or_adding_a_share_is_rejected(
        game_name: str, n: int, change: str, seed: str, data: st.DataObject, extra: str) -> None:
    shares = data.draw(share_sets(n).filter(lambda s: 0 < len(s) < n))
    record = v2_record(game_name, seed, shares, n)
    r = copy.deepcopy(record)
    events = r["events"]
    seat = sorted(shares)[0]
    if change == "change":  # in the event and in the list alike, the chain re-sealed
        flipped = format(int(shares[seat], 16) ^ 1, "064x")
        next(e for e in _share_events(r) if e["seat"] == seat)["share"] = flipped
        next(e for e in r["shares"] if e["seat"] == seat)["share"] = flipped
    elif change == "drop":  # the event, the list entry and the contributor all removed
        events.remove(next(e for e in _share_events(r) if e["seat"] == seat))
        r["shares"] = [e for e in r["shares"] if e["seat"] != seat]
        deal = next(e for e in events if e["type"] == "deal")
        deal["contributors"].remove(seat)
    elif change == "add":  # a share from a seat that sent none, everywhere consistent
        newcomer = next(s for s in range(n) if s not in shares)
        at = events.index(next(e for e in events if e["type"] == "deal"))
        events.insert(at, {"seq": 0, "type": "share", "at": events[0]["at"], "by": "player",
                           "seat": newcomer, "share": extra, "prev": "", "hash": ""})
        r["shares"] = sorted([*r["shares"], {"seat": newcomer, "share": extra}],
                             key=lambda e: e["seat"])
        next(e for e in events if e["type"] == "deal")["contributors"] = sorted(
            [*shares, newcomer])
    elif change == "drop_from_list":
        r["shares"] = [e for e in r["shares"] if e["seat"] != seat]
    elif change == "contributor":
        next(e for e in events if e["type"] == "deal")["contributors"].remove(seat)
    with pytest.raises(Discrepancy):
        verify_record(rehash(r))


def test_a_share_after_the_deal_or_twice_or_malformed_is_rejected() -> None:
    seed = "11" * 32
    record = v2_record("comet", seed, {0: "ab" * 32, 2: "c3" * 32}, 3)
    twice = copy.deepcopy(record)
    twice["events"].insert(2, copy.deepcopy(twice["events"][1]))
    with pytest.raises(Discrepancy, match="second share"):
        verify_record(rehash(twice))
    upper = copy.deepcopy(record)
    upper["events"][1]["share"] = upper["events"][1]["share"].upper()
    with pytest.raises(Discrepancy, match="64 lowercase hex"):
        verify_record(rehash(upper))
    late = copy.deepcopy(record)
    share = late["events"].pop(2)
    late["events"].insert(6, share)
    with pytest.raises(Discrepancy):
        verify_record(rehash(late))


def test_version_1_records_still_verify_and_have_no_shares(tmp_path: Any) -> None:
    run(game_name="comet", players=3, hands=2, seed="v1", bots=["heuristic"], options=None,
        chips=50, export=tmp_path, version=1)
    import json
    record = json.loads((tmp_path / "1.json").read_text())
    assert record["format"] == "academie.hand/1" and "shares" not in record
    assert verify_record(record) == record["digest"]
    record["shares"] = []
    with pytest.raises(Discrepancy, match="no shares"):
        verify_record(record)


@pytest.mark.parametrize("mode", ["none", "all", "random"])
def test_the_simulator_writes_version_2_records_that_repeat(tmp_path: Any, mode: str) -> None:
    import json
    for run_dir in ("a", "b"):
        run(game_name="commere", players=4, hands=3, seed="s", bots=["heuristic"],
            options=None, chips=50, export=tmp_path / run_dir, shares=mode, version=2)
    for number in (1, 2, 3):
        a = json.loads((tmp_path / "a" / f"{number}.json").read_text())
        b = json.loads((tmp_path / "b" / f"{number}.json").read_text())
        assert a["format"] == "academie.hand/2"
        assert (a["shares"], a["deck"]) == (b["shares"], b["deck"])
        assert verify_record(a) == a["digest"]
        counts = {"none": {0}, "all": {4}, "random": set(range(5))}[mode]
        assert len(a["shares"]) in counts


def test_before_the_deal_nobody_holds_a_card_or_may_move() -> None:
    seed = "44" * 32
    engine = SharedDeal(get_game("comet"), seed)
    started = engine.start(dealer=1, seats=[{"seat": i, "player": f"p{i}"} for i in range(3)],
                           options={}, chips_before={"0": 5, "1": 5, "2": 5}, pot_before=0,
                           commitment=commitment(seed))
    state = engine.replay((), [started, share_event(0, "55" * 32)])
    assert engine.legal_moves(state) == {} and engine.to_act(state) == []
    assert not engine.is_over(state)
    for seat in (None, 0, 1, 2):
        view = engine.view(state, seat)
        assert view["phase"] == "shuffling" and view["shares"] == [0]
        assert not view.get("hand")
    with pytest.raises(NotDealt):
        engine.decide(state, 2, Move("open", suit="C"))
    dealt = engine.replay((), [started, share_event(0, "55" * 32),
                               Event("deal", "service", {"contributors": [0]})])
    assert sorted(c for s in range(3) for c in engine.view(dealt, s)["hand"]) == sorted(
        deck_v2("comet", seed, {0: "55" * 32}))
