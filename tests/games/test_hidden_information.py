"""RULES.md §3, hidden information, checked exhaustively through the API.

Every seat of these parties is a person, so that the test can ask as each seat. The test plays the
hands itself (each seat's move chosen at random among the legal moves its own API answer lists;
forced moves and some time-outs played by ``deadline_fire``), and after every step asks every
endpoint as every seat and as a spectator. It works out from the engine's state what each of them
may not see (the cards in other hands but those passed to or by him, the talon, the seed, the
hashes of the events) and searches the answers for it. Once the hand is over everything is
public, and the record must verify.
"""

from __future__ import annotations

import json
import random
import re
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from games import services
from games.engine import comet
from games.engine.cards import FULL_DECK
from games.engine.seals import shown_hash
from games.engine.verify import verify_record
from games.models import Hand, HandEvent, Partie
from games.services import store

from .factories import PartieFactory, UserFactory

pytestmark = pytest.mark.django_db

#: Card NAMES the rules make public without saying where the card is: the card a Comet run
#: needs next, and the card a played Comet stood for (RULES.md §2; the view's run and table).
PUBLIC_NAME_FIELDS = frozenset({"next_card", "stands_for", "last_stands_for"})
_QUOTED_CARD = re.compile(r'"([A2-9TJQK][CDHS])"')
_BARE_CARD = re.compile(r"(?<![A-Za-z0-9])([A2-9TJQK][CDHS])(?![A-Za-z0-9])")


def without_public_names(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: without_public_names(v) for k, v in obj.items() if k not in PUBLIC_NAME_FIELDS}
    if isinstance(obj, list):
        return [without_public_names(v) for v in obj]
    return obj


def cards_named(answer: Any) -> set[str]:
    """The card tokens of a JSON answer, public card names left out."""
    return set(_QUOTED_CARD.findall(json.dumps(without_public_names(answer))))


# ---------------------------------------------------------------------------------------------
# What a seat may not see, from the engine's state


def _mask_cards(mask: int) -> set[str]:
    return {comet._CARD[i] for i in range(len(comet._CARD)) if mask >> i & 1}


def comet_hidden_from(state: comet.CometState, viewer: int | None) -> set[str]:
    """Every card in another seat's hand (a played card has left every hand)."""
    if state.phase == comet.OVER:
        return set()
    hidden: set[str] = set()
    for seat, mask in enumerate(state.hands):
        if seat != viewer:
            hidden |= _mask_cards(mask)
    return hidden


def comet_holder(state: comet.CometState) -> int | None:
    for seat, mask in enumerate(state.hands):
        if mask & comet._COMET_BIT:
            return seat
    return None


def commere_hidden_from(state: Any, viewer: int | None) -> set[str]:
    """The talon and the other hands, less the cards passed to or by ``viewer`` (and the card
    offered to him or by him, not yet given back)."""
    if state.phase == "over":
        return set()
    hidden = set(state.talon)
    for seat, hand in enumerate(state.hands):
        if seat != viewer:
            hidden |= set(hand)
    known: set[str] = set()
    node = state.history
    while node is not None:
        if viewer is not None and viewer in (node.giver, node.taker):
            known.add(node.card)
        node = node.earlier
    if state.offer is not None and viewer in (state.table.order[state.step], state.actor):
        known.add(state.offer)
    return hidden - known


def public_card_names(state: Any) -> set[str]:
    """Card names an error message may say although they lie in a hand: the card the Comet
    run waits for (the view's ``run.next_card``)."""
    if isinstance(state, comet.CometState) and state.phase == comet.RUN:
        return {comet._CARD[state.need]}
    return set()


# ---------------------------------------------------------------------------------------------
# The table: a client per seat and a spectator


@dataclass
class Table:
    partie: Partie
    clients: dict[int | None, APIClient]
    rng: random.Random
    views: dict[int | None, dict[str, Any]] = field(default_factory=dict)
    checks: int = 0
    looks: dict[Any, int] = field(default_factory=dict)
    #: How often a seat that may play the Comet out of turn does so.
    optional_comet: float = 0.2

    @property
    def hand(self) -> Hand:
        return self.partie.hands.order_by("-number").first()


def seat_everyone(game: str, n: int, **kwargs: Any) -> Table:
    people = [UserFactory() for _ in range(n)]
    # Tiny delays: every forced move waits for its deadline, so that the test sees the table
    # between any two moves, and fires it a moment later.
    partie = PartieFactory(game=game, players=people, move_timeout=timedelta(milliseconds=1),
                           forced_move_delay=timedelta(milliseconds=1),
                           comet_window=timedelta(milliseconds=1), **kwargs)
    clients: dict[int | None, APIClient] = {}
    for seat, user in enumerate(people):
        clients[seat] = APIClient()
        clients[seat].force_authenticate(user)
    clients[None] = APIClient()
    clients[None].force_authenticate(UserFactory(username=f"spectator-{partie.pk.hex[:6]}",
                                                   is_staff=True))
    return Table(partie=partie, clients=clients, rng=random.Random(f"{game}-{n}"))


def illegal_move_for(table: Table, viewer: int) -> dict[str, Any]:
    """A move the viewer may not make now, built from what he sees (his own cards only)."""
    view = table.views[viewer]
    legal = view["legal_moves"]
    own = view["view"].get("hand") or []
    if table.partie.game == "comet":
        candidates = [{"type": "keep_comet"}, {"type": "comet"}]
        candidates += [{"type": "open", "suit": s} for s in "CDHS"]
        candidates += [{"type": "play", "card": c} for c in own]
    else:
        candidates = [{"type": "announce"}]
        candidates += [{"type": t, "card": c}
                       for t in ("offer", "give_back", "return") for c in own]
    candidates = [m for m in candidates if m not in legal]
    return table.rng.choice(candidates)


#: Answers that do not depend on who asks (their views never read the requester).
SHARED = ("record", "verify", "partie", "parties")


def _body(answer: Any) -> tuple[Any, str]:
    """An answer's JSON and text (the live frames are checked in test_live.py)."""
    return answer.json(), answer.content.decode()


def assert_chain_holds(body: dict[str, Any], commitment: str, who: str) -> None:
    """Every hash a reader is shown recomputes from what he is shown, and chains from the
    commitment; its last event's receipt names that hash."""
    prev = commitment
    for event in body["events"]:
        assert event["prev"] == prev and shown_hash(event) == event["hash"], (who, event)
        for name, seal in event.get("seals", {}).items():
            assert seal.startswith("sealed:") and event[name] != seal, (who, event)
        prev = event["hash"]
    assert body["receipt"]["hash"] == prev and body["receipt"]["seq"] == body["events"][-1]["seq"]


def check_everything_as_everyone(table: Table) -> None:
    hand = table.hand
    loaded = store.load(hand)
    recorded = len(store.events(hand))
    state = loaded.state
    over = hand.status == Hand.Status.OVER
    hashes = HandEvent.objects.filter(hand=hand).values_list("hash", flat=True)
    # A version-3 hand shows its chain (its hashes cover seals, not hidden values); an older
    # hand's hashes would let a reader find a hidden card by hashing the candidates.
    secrets = {hand.secret.seed} if hand.record_format == 3 else {hand.secret.seed, *hashes}
    holder = comet_holder(state) if table.partie.game == "comet" else None
    hidden_of = comet_hidden_from if table.partie.game == "comet" else commere_hidden_from
    hidden_from_all = hidden_of(state, None)  # every hand and the talon
    base = f"/api/hands/{hand.id}"
    shared_urls = {"record": f"{base}/record", "verify": f"{base}/verify",
                   "partie": f"/api/parties/{table.partie.pk}/", "parties": "/api/parties/"}
    first_look = table.looks.get(hand.pk, 0) == 0
    shared_seen: dict[str, Any] = {}
    for turn, (viewer, client) in enumerate(table.clients.items()):
        hidden = hidden_of(state, viewer)
        who = f"seat {viewer}" if viewer is not None else "the spectator"
        # While a hand runs someone else always holds a card (or the talon does): never vacuous.
        assert over or hidden
        urls = {"hand": f"{base}/", "events": f"{base}/events"}
        # The answers shared by everyone are read by everyone at the first look at a hand (and
        # must be the same), later by one reader in turn; they are searched for anything hidden
        # from anybody.
        if first_look or turn == table.looks[hand.pk] % len(table.clients):
            urls.update(shared_urls)
        for name, url in urls.items():
            answer = client.get(url)
            expected = 409 if name in ("record", "verify") and not over else 200
            assert answer.status_code == expected, (name, who, answer)
            body, text = _body(answer)
            if name in SHARED:
                assert shared_seen.setdefault(name, body) == body, name
            if name == "hand":
                table.views[viewer] = body
            if name == "events" and not over and holder is not None and holder != viewer:
                kept = [e for e in body["events"] if e["type"] == "keep_comet"]
                assert all(e["seat"] is None for e in kept), f"events tell {who} who kept the Comet"
            if over:
                continue
            if name == "events" and hand.record_format == 3:
                assert_chain_holds(body, hand.commitment, who)
            leaked = cards_named(body) & (hidden_from_all if name in SHARED else hidden)
            assert not leaked, f"{name} shows {who} the hidden cards {sorted(leaked)}"
            assert not [s for s in secrets if s in text], f"{name} shows {who} the seed or a hash"
        view = table.views[viewer]
        assert view["your_seat"] == viewer
        if not over and holder is not None and holder != viewer:
            # Who holds the Comet is hidden: a blocked run waits for him without saying so.
            assert holder not in view["to_act"] or view["view"]["phase"] != "blocked"
        if not over:
            move = illegal_move_for(table, viewer) if viewer is not None else {"type": "announce"}
            refused = client.post(f"{base}/moves", {"command_id": str(uuid.uuid4()),
                                                    "seq": hand.last_seq, "move": move},
                                  format="json")
            assert refused.status_code == (403 if viewer is None else 400), refused.content
            said = set(_BARE_CARD.findall(refused.json()["detail"])) - public_card_names(state)
            assert not said & hidden, f"refusing {move}, the service tells {who} {said & hidden}"
        table.checks += 1
    table.looks[hand.pk] = table.looks.get(hand.pk, 0) + 1
    hand.refresh_from_db()
    assert hand.last_seq == recorded, "a refused move changed the hand"


def look_as_everyone(table: Table) -> None:
    """Only each seat's view of the hand (what the next move is chosen from)."""
    for viewer, client in table.clients.items():
        table.views[viewer] = client.get(f"/api/hands/{table.hand.id}/").json()


def check_own_cards_are_shown(table: Table) -> None:
    """The check above is not vacuous: each seat does see its own hand."""
    state = store.load(table.hand).state
    for viewer, view in table.views.items():
        if viewer is None or view["status"] == "over":
            continue
        own = (sorted(_mask_cards(state.hands[viewer]), key=FULL_DECK.index)
               if table.partie.game == "comet" else list(state.hands[viewer]))
        assert view["view"]["hand"] == own


def play_one_step(table: Table) -> None:
    """One decision: a seat's move through the API, or the deadline's move."""
    hand = table.hand
    loaded = store.load(hand)
    awaited = loaded.game.to_act(loaded.state)
    optional = [(seat, [m for m in v["legal_moves"] if m["type"] == "comet"])
                for seat, v in table.views.items() if seat is not None and seat not in awaited]
    optional = [(seat, moves) for seat, moves in optional if moves]
    rng = table.rng
    if optional and rng.random() < table.optional_comet:
        seat, moves = optional[0]
        move = moves[0]
    elif hand.deadline_kind == "forced" or rng.random() < 0.15:
        at = max(timezone.now(), hand.deadline)
        fired = services.deadline_fire(hand_id=hand.id, seq=hand.last_seq, at=at)
        assert fired
        return
    else:
        seat = awaited[0]
        legal = table.views[seat]["legal_moves"]
        if rng.random() >= table.optional_comet:  # the Comet no more often than elsewhere
            legal = [m for m in legal if m["type"] != "comet"] or legal
        move = rng.choice(legal)
    answer = table.clients[seat].post(f"/api/hands/{hand.id}/moves", {
        "command_id": str(uuid.uuid4()), "seq": hand.last_seq, "move": move}, format="json")
    assert answer.status_code == 201, (seat, move, answer.content)


def check_the_end(table: Table) -> None:
    hand = table.hand
    seed = hand.secret.seed
    n = table.partie.seats.count()
    for client in table.clients.values():
        view = client.get(f"/api/hands/{hand.id}/").json()
        assert view["seed"] == seed
        assert set(view["view"]["hands"]) == {str(s) for s in range(n)}
        events = client.get(f"/api/hands/{hand.id}/events").json()
        record = client.get(f"/api/hands/{hand.id}/record").json()
        assert events["over"] is True
        # Once over, the events are the record's, each shown with its seals (version 3).
        assert [{k: v for k, v in e.items() if k != "seals"}
                for e in events["events"]] == record["events"]
        assert all(shown_hash(e) == e["hash"] for e in events["events"])
        assert record["seed"] == seed
        assert verify_record(record) == record["digest"]
        assert client.get(f"/api/hands/{hand.id}/verify").json()["ok"] is True


def play_and_watch(table: Table, hands: int) -> None:
    for number in range(1, hands + 1):
        if number > 1:
            services.hand_deal(partie=table.partie, at=timezone.now())
        steps = 0
        while True:
            check_everything_as_everyone(table)
            check_own_cards_are_shown(table)
            if table.hand.status == Hand.Status.OVER:
                break
            play_one_step(table)
            steps += 1
            assert steps < 1000
        check_the_end(table)


# ---------------------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def repeatable_deals(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Seeds drawn from a generator named after the test instead of the OS, so that a failure
    replays and the test takes the same time on every run (the deal itself is the service's)."""
    rng = random.Random(request.node.name)
    monkeypatch.setattr("games.services.parties.new_seed", lambda: rng.randbytes(32).hex())


def test_the_leak_search_finds_a_card_another_seat_holds() -> None:
    answer = {"view": {"hand": ["2C", "TD"], "run": {"next_card": "9H"}},
              "detail": "x", "played": [{"card": "9D", "stands_for": "QS"}]}
    assert cards_named(answer) == {"2C", "TD", "9D"}
    assert cards_named(answer) & {"TD", "QS", "9H"} == {"TD"}
    said = "you must open with your lowest heart, 3H (commitment a59bb9e5ad, 2026-11-29T12:24Z)"
    assert _BARE_CARD.findall(said) == ["3H"]


def test_comet_hides_the_other_hands_and_the_comet_holder_from_every_seat() -> None:
    table = seat_everyone("comet", 3)
    play_and_watch(table, hands=1)
    assert table.checks > 4 * 20


def test_comet_between_two_people_hides_each_hand_from_the_other() -> None:
    table = seat_everyone("comet", 2, options={"per_card": 2})
    play_and_watch(table, hands=1)


def test_commere_shows_a_seat_only_the_cards_passed_to_or_by_him() -> None:
    table = seat_everyone("commere", 4, options={"max_turns": 3})
    play_and_watch(table, hands=2)


def test_commere_with_optional_announcing_and_a_short_round_hides_the_talon() -> None:
    table = seat_everyone("commere", 4, options={"compulsory_announce": False, "max_turns": 2})
    play_and_watch(table, hands=1)


def test_a_comet_holder_who_keeps_it_at_a_blocked_run_stays_unknown() -> None:
    # Nobody plays the Comet of his own accord here, so that a blocked run asks its holder; he
    # keeps it, and every seat then reads the hand with the keep_comet event in it.
    for attempt in range(5):
        table = seat_everyone("comet", 3)
        table.rng = random.Random(attempt)
        table.optional_comet = 0.0
        kept = 0
        just_kept = False
        while table.hand.status != Hand.Status.OVER:
            state = store.load(table.hand).state
            blocked = state.phase == comet.BLOCKED
            if (blocked and kept < 2) or just_kept:
                check_everything_as_everyone(table)
            else:
                look_as_everyone(table)
            if blocked:
                holder = comet_holder(state)
                keep = {"type": "keep_comet"}
                assert keep in table.views[holder]["legal_moves"]
                assert [s for s, v in table.views.items() if keep in v["legal_moves"]] == [holder]
                answer = table.clients[holder].post(f"/api/hands/{table.hand.id}/moves", {
                    "command_id": str(uuid.uuid4()), "seq": table.hand.last_seq, "move": keep},
                    format="json")
                assert answer.status_code == 201
                kept += 1
                just_kept = kept <= 2
                continue
            just_kept = False
            play_one_step(table)
        if kept:
            check_the_end(table)
            return
        services.partie_close(partie=table.partie, at=timezone.now())
    pytest.fail("no Comet hand came to a blocked run with the Comet in a hand")
