"""Properties of both engines over random seeds and bot mixes (hypothesis).

Cards and chips are conserved at every step, every hand ends, replaying the events gives the same
state, a seat's view never holds another seat's hidden card, every exported record verifies, and
any single change to a record is rejected by the verifier.
"""

from __future__ import annotations

import copy
import random
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.engine import comet
from games.engine.base import BY_FORCED, Event, event_hash
from games.engine.bots import IsmctsBot, make_bot
from games.engine.deal import commitment, deal_from_seed
from games.engine.record import build_record, seal_all
from games.engine.registry import get_game
from games.engine.verify import Discrepancy, verify_record

SETTINGS = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
seeds = st.binary(min_size=32, max_size=32).map(bytes.hex)
bot_names = st.sampled_from(["random", "heuristic", "ismcts", "timeout"])
#: The ISMCTS bot searches little here: these properties are about its moves, not its strength.
PROPERTY_PLAYOUTS = 6


def _bot(name: str, rng: random.Random) -> Any:
    return IsmctsBot(rng, PROPERTY_PLAYOUTS) if name == "ismcts" else make_bot(name, rng)


def comet_cards(state: Any) -> list[str]:
    """Every card of a Comet hand: in a hand or played (the 51-card deck, once each)."""
    masks = list(state.hands) + [state.played]
    cards = [c for m in masks for i, c in enumerate(comet._CARD) if m >> i & 1]
    return cards + (["9D"] if comet.comet_played(state) else [])


def commere_cards(state: Any) -> list[str]:
    return [c for hand in state.hands for c in hand] + list(state.talon)


CARDS = {"comet": comet_cards, "commere": commere_cards}
DECK_SIZE = {"comet": 51, "commere": 52}


def play(game_name: str, seed: str, players: int, bots: list[str], chips: int,
         options: dict[str, Any] | None = None, pot_before: int = 0,
         check: bool = True) -> tuple[dict[str, Any], list[Event], Any]:
    """Play a hand step by step, checking the invariants after every event."""
    game = get_game(game_name)
    deck, dealer = deal_from_seed(game_name, seed, players)
    rng = random.Random(seed)
    seat_bots = [_bot(bots[i % len(bots)], random.Random(rng.random()))
                 for i in range(players)]
    chips_before = {str(s): chips + s for s in range(players)}
    opts = game.normalise_options(options or ({"comet_payment": 2} if game_name == "comet" else {}))
    extra = {"comet_payment_due": opts["comet_payment"]} if game_name == "comet" else {}
    setup = dict(deck=deck, dealer=dealer, seats=[{"seat": i, "player": f"p{i}"}
                                                   for i in range(players)],
                 options=opts, chips_before=chips_before, pot_before=pot_before,
                 commitment=commitment(seed), **extra)
    events = game.begin(**setup)
    state = game.replay(deck, events)
    total = sum(chips_before.values()) + pot_before
    steps = 0
    while not game.is_over(state):
        steps += 1
        assert steps < 5000, "the hand does not end"
        legal = game.legal_moves(state)
        awaited = game.to_act(state)
        assert awaited and all(legal[s] for s in awaited)
        chosen = None
        for s, moves in legal.items():
            if s not in awaited:
                m = seat_bots[s].choose(game, state, s, moves, False, events)
                if m is not None:
                    chosen = (s, m, seat_bots[s].by)
                    break
        if chosen is None:
            s = awaited[0]
            m = seat_bots[s].choose(game, state, s, legal[s], True, events)
            chosen = (s, m, BY_FORCED if len(legal[s]) == 1 else seat_bots[s].by)
        for event in game.decide(state, *chosen):
            state = game.apply(state, event)
            events.append(event)
            if check:
                cards = CARDS[game_name](state)
                assert sorted(cards) == sorted(deck) and len(cards) == DECK_SIZE[game_name]
                assert sum(state.chips) + state.pot == total
                assert min(state.chips) >= 0 and state.pot >= 0
    return setup, events, state


def hidden_cards(game_name: str, state: Any, seat: int) -> set[str]:
    """The cards that ``seat`` may not see: those in the other players' hands (and the talon)."""
    cards = CARDS[game_name](state)
    if game_name == "comet":
        own = {c for i, c in enumerate(comet._CARD) if state.hands[seat] >> i & 1}
        return set(cards) - own - set(_played(game_name, state))
    return set(cards) - set(state.hands[seat])


@pytest.mark.parametrize(("game_name", "players"), [("comet", 2), ("comet", 4), ("comet", 6),
                                                   ("commere", 4), ("commere", 7),
                                                   ("commere", 12)])
@SETTINGS
@given(seed=seeds, bots=st.lists(bot_names, min_size=1, max_size=4),
       chips=st.integers(min_value=0, max_value=30))
def test_cards_and_chips_are_conserved_and_every_hand_ends(
    game_name: str, players: int, seed: str, bots: list[str], chips: int
) -> None:
    _, events, state = play(game_name, seed, players, bots, chips)
    assert events[-1].type == "hand_over"
    result = get_game(game_name).result(state)
    assert result is not None and sum(result["net"].values()) == 0 - state.pot


@pytest.mark.parametrize("game_name", ["comet", "commere"])
@SETTINGS
@given(seed=seeds, bots=st.lists(bot_names, min_size=1, max_size=3))
def test_replaying_the_events_gives_the_same_state(game_name: str, seed: str,
                                                    bots: list[str]) -> None:
    game = get_game(game_name)
    players = 4 if game_name == "comet" else 7
    setup, events, state = play(game_name, seed, players, bots, 20, check=False)
    assert game.replay(setup["deck"], events) == state
    # and at every prefix: replay of a prefix equals folding event by event
    folded = game.initial_state(setup["deck"])
    for i, event in enumerate(events):
        folded = game.apply(folded, event)
        if i % 7 == 0:
            assert game.replay(setup["deck"], events[: i + 1]) == folded


@pytest.mark.parametrize("game_name", ["comet", "commere"])
@SETTINGS
@given(seed=seeds, bots=st.lists(bot_names, min_size=1, max_size=3))
def test_a_seats_view_never_holds_another_seats_hidden_card(game_name: str, seed: str,
                                                            bots: list[str]) -> None:
    game = get_game(game_name)
    players = 4 if game_name == "comet" else 7
    setup, events, _ = play(game_name, seed, players, bots, 20, check=False)
    state = game.initial_state(setup["deck"])
    for event in events:
        state = game.apply(state, event)
        if game.is_over(state) or event.type in ("showdown", "void"):
            break  # "When someone announces, every hand is shown."
        for seat in [*range(players), None]:
            shown = game.view(state, seat)
            if game_name == "comet" and shown.get("run"):
                # The next card of a run is named at the table (rank after the last card);
                # naming it is public, and its holder must play it out of turn.
                # A card the Comet stood for is named too, while it stays in its holder's hand.
                shown["run"] = {k: v for k, v in shown["run"].items()
                                if k not in ("next_card", "last_stands_for")}
            if game_name == "comet":
                shown["played"] = [p["card"] for p in shown["played"]]
            text = repr(shown)
            hidden = (set(CARDS[game_name](state)) - set(_played(game_name, state))
                      if seat is None else hidden_cards(game_name, state, seat))
            if game_name == "commere" and seat is not None:
                hidden -= _passed_to_or_by(state, seat)
            leaked = {c for c in hidden if f"'{c}'" in text}
            assert not leaked, f"seat {seat} sees {leaked} in {text}"


def _played(game_name: str, state: Any) -> list[str]:
    if game_name == "comet":
        played = [c for i, c in enumerate(comet._CARD) if state.played >> i & 1]
        return played + (["9D"] if comet.comet_played(state) else [])
    return []


def _passed_to_or_by(state: Any, seat: int) -> set[str]:
    """Ma commère: cards this seat gave or received (he saw them; they may be elsewhere now)."""
    seen: set[str] = set()
    p = state.history
    while p is not None:
        if seat in (p.giver, p.taker):
            seen.add(p.card)
        p = p.earlier
    if state.offer is not None and seat in (state.actor, (state.actor - 1) % state.table.n):
        seen.add(state.offer)
    return seen


def record_of(game_name: str, seed: str, bots: list[str], players: int) -> dict[str, Any]:
    setup, events, _ = play(game_name, seed, players, bots, 5, check=False)
    sealed = seal_all(events, commitment=setup["commitment"], at="2026-11-29T20:00:00.000000Z")
    return build_record(game=game_name, hand="h1", table="t1", partie="p1", number=1,
                        seed=seed, deck=setup["deck"], events=sealed)


@pytest.mark.parametrize("game_name", ["comet", "commere"])
@SETTINGS
@given(seed=seeds, bots=st.lists(bot_names, min_size=1, max_size=3))
def test_every_exported_record_verifies(game_name: str, seed: str, bots: list[str]) -> None:
    record = record_of(game_name, seed, bots, 3 if game_name == "comet" else 5)
    assert verify_record(record) == record["digest"]


def rehash(record: dict[str, Any]) -> dict[str, Any]:
    """Re-seal the chain after a change, as a forger would, so only the rules can catch it."""
    prev = record["commitment"]
    for i, event in enumerate(record["events"], start=1):
        event["seq"] = i
        event["prev"] = prev
        event["hash"] = event_hash(event)
        prev = event["hash"]
    record["digest"] = prev
    return record


MUTATIONS = ["card", "seat", "amount", "drop", "swap", "seed"]


def mutate(record: dict[str, Any], kind: str, rng: random.Random) -> dict[str, Any]:
    r = copy.deepcopy(record)
    events = r["events"]
    if kind == "card":
        idx = [i for i, e in enumerate(events) if "card" in e or "hands" in e]
        e = events[rng.choice(idx)]
        deck = r["deck"]
        if "card" in e:
            e["card"] = rng.choice([c for c in deck if c != e["card"]])
        else:  # a card of a hand shown at the showdown
            cards = e["hands"][rng.choice(sorted(e["hands"]))]
            shown = {c for h in e["hands"].values() for c in h}
            cards[rng.randrange(3)] = rng.choice([c for c in deck if c not in shown])
    elif kind == "seat":
        idx = [i for i, e in enumerate(events) if "seat" in e]
        e = events[rng.choice(idx)]
        e["seat"] = (e["seat"] + rng.randrange(1, len(r["seats"]))) % len(r["seats"])
    elif kind == "amount":
        idx = [i for i, e in enumerate(events) if e["type"] == "pay"]
        e = events[rng.choice(idx)]
        e["amount"] += rng.choice([-1, 1]) if e["amount"] > 0 else 1
    elif kind == "drop":
        del events[rng.randrange(len(events))]
    elif kind == "swap":
        envelope = ("seq", "at", "prev", "hash")

        def body(e: dict[str, Any]) -> dict[str, Any]:
            return {k: v for k, v in e.items() if k not in envelope}

        candidates = [i for i in range(len(events) - 1) if body(events[i]) != body(events[i + 1])]
        i = rng.choice(candidates)
        events[i], events[i + 1] = events[i + 1], events[i]
    elif kind == "seed":
        r["seed"] = format(int(r["seed"], 16) ^ (1 << rng.randrange(256)), "064x")
    return r


@pytest.mark.parametrize("kind", MUTATIONS)
@pytest.mark.parametrize("game_name", ["comet", "commere"])
@SETTINGS
@given(seed=seeds, pick=st.integers(min_value=0, max_value=2**32))
def test_any_single_change_to_a_record_is_rejected(game_name: str, kind: str, seed: str,
                                                   pick: int) -> None:
    record = record_of(game_name, seed, ["random", "heuristic"], 3 if game_name == "comet" else 5)
    rng = random.Random(pick)
    changed = mutate(record, kind, rng)
    with pytest.raises(Discrepancy):
        verify_record(changed)  # the chain is broken
    if kind == "seed":
        changed["commitment"] = commitment(changed["seed"])
        changed["events"][0]["commitment"] = changed["commitment"]
        with pytest.raises(Discrepancy):
            verify_record(rehash(changed))  # a new seed deals another deck
        return
    resealed = rehash(changed)
    try:
        verify_record(resealed)  # the chain re-sealed: the rules still catch it ...
    except Discrepancy:
        return
    # ... except for the one change that is another legal game: in Ma commère an offer the
    # asked player answered by announcing was withdrawn, so offering another card he held
    # changes nothing that follows. Only the hash chain (checked above) tells them apart.
    assert withdrawn_offer_changed(record, resealed)


def withdrawn_offer_changed(record: dict[str, Any], changed: dict[str, Any]) -> bool:
    """The first changed event is an offer that the asked seat answered by announcing."""
    n = len(record["seats"])

    def body(e: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in e.items() if k not in ("prev", "hash")}

    for before, after in zip(record["events"], changed["events"], strict=True):
        if body(before) != body(after):
            follow = record["events"][before["seq"]]
            return (before["type"] == "offer" and follow["type"] == "announce"
                    and follow["seat"] == (before["seat"] + 1) % n)
    return False


# hypothesis takes naive bounds and gives aware datetimes in the time zones asked
@given(st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 30),  # noqa: DTZ001
                    timezones=st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30)),
                                               timezone(timedelta(hours=-11))])))
def test_iso_z_writes_what_strftime_writes(at: datetime) -> None:
    # record.iso_z takes isoformat's faster text from year 1000 on: the record's `at` is the
    # same text as before, for every instant.
    from games.engine.record import iso_z

    assert iso_z(at) == at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
