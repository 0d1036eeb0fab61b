"""The Comet holder's standing orders and his clicks during a chance (RULES.md §2, house rule):
carried out at the end of the chance, as his click would be, with the payment it brings."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from rest_framework.test import APIClient

from games.engine.base import BY_PLAYER, BY_TIMEOUT, Event
from games.engine.comet import BLOCKED
from games.models import Hand, HandEvent
from games.services import deadline_fire, partie_start, seat_comet_order, store
from tests.seeding import seed_stream

pytestmark = pytest.mark.django_db

T0 = datetime(2030, 5, 4, 20, 0, tzinfo=UTC)
WINDOW = timedelta(seconds=8)  # "ask me" is offered from 8 s


def _alice_holds_the_comet(django_user_model: Any, monkeypatch: pytest.MonkeyPatch,
                           order: str, name: str) -> tuple[Any, Hand]:
    """A table of alice and two bots, dealt until alice holds the Comet at a chance."""
    seeds = seed_stream(f"comet-orders-{name}")
    for attempt in range(200):
        monkeypatch.setattr("games.services.parties.new_seed", seeds)
        alice = django_user_model.objects.create_user(f"alice-{name}-{attempt}")
        partie = partie_start(game="comet", players=[alice], bots=["heuristic"] * 2,
                              buy_in=100, comet_window=WINDOW,
                              forced_move_delay=timedelta(seconds=1), at=T0)
        seat_comet_order(partie_id=partie.pk, user=alice, order=order)
        hand = partie.hands.get()
        if store.load(hand).state.comet_holder == 0:
            return alice, hand
    raise AssertionError("no deal gave alice the Comet")


def _play_until_comet(hand: Hand) -> list[HandEvent]:
    """Every deadline fired at its time until the Comet is played or the hand ends."""
    while hand.status == Hand.Status.PLAYING:
        if HandEvent.objects.filter(hand=hand, type="comet").exists():
            break
        assert deadline_fire(hand_id=hand.pk, seq=hand.last_seq, at=hand.deadline)
        hand.refresh_from_db()
    return list(HandEvent.objects.filter(hand=hand).order_by("seq"))


def test_the_order_blocked_plays_the_comet_at_a_blocked_run_of_her_suit_and_she_is_paid(
        django_user_model, monkeypatch):
    for name in ("a", "b", "c", "d", "e", "f"):
        _alice, hand = _alice_holds_the_comet(django_user_model, monkeypatch, "blocked", name)
        events = _play_until_comet(hand)
        comet = [e for e in events if e.type == "comet"]
        if comet:
            break
    else:
        raise AssertionError("no deal reached a blocked run of alice's")
    played = comet[0]
    assert played.payload["seat"] == 0 and played.by == BY_PLAYER
    # At a block, never in place of a waiting card: the event before it stopped a run short.
    game, state = store.start(hand, 3)  # replayed up to the Comet, to see where it was played
    for row in events:
        if row.seq == played.seq:
            break
        state = game.apply(state, Event.from_dict(store.record_event(row)))
    assert game.comet_window_open(state) and state.phase == BLOCKED
    pays = [e for e in events if e.type == "pay" and e.seq > played.seq
            and e.payload["reason"] == "comet"]
    assert pays and {p.payload["to"] for p in pays} == {0}


def test_never_keeps_it_by_her_choice_and_ask_with_no_click_keeps_it_on_time_out(
        django_user_model, monkeypatch):
    for order, by in (("never", BY_PLAYER), ("ask", BY_TIMEOUT)):
        _alice, hand = _alice_holds_the_comet(django_user_model, monkeypatch, order, order)
        events = _play_until_comet(hand)
        assert not [e for e in events if e.type == "comet"]
        mine = [e for e in events if e.type in ("keep_comet", "play") and e.payload["seat"] == 0
                and e.by != "forced"]
        assert {e.by for e in mine if e.type == "keep_comet"} <= {by}


def test_a_click_during_a_chance_is_played_when_the_chance_ends(django_user_model,
                                                                  monkeypatch):
    alice, hand = _alice_holds_the_comet(django_user_model, monkeypatch, "ask", "click")
    client = APIClient()
    client.force_authenticate(alice)
    while hand.deadline_kind != "comet":
        assert deadline_fire(hand_id=hand.pk, seq=hand.last_seq, at=hand.deadline)
        hand.refresh_from_db()
    seq, deadline = hand.last_seq, hand.deadline
    command = str(uuid.uuid4())
    body = {"seq": seq, "command_id": command, "move": {"type": "comet"}}
    answer = client.post(f"/api/hands/{hand.pk}/moves", body, format="json")
    assert answer.status_code == 202, answer.content
    assert answer.json()["command"]["pending"] == {"type": "comet"}
    hand.refresh_from_db()
    assert hand.last_seq == seq and hand.deadline == deadline  # the chance lasts the same
    again = client.post(f"/api/hands/{hand.pk}/moves", body, format="json")  # a retry
    assert again.status_code == 202 and again.json()["command"] == answer.json()["command"]
    # A move she may not make is refused at once, as ever.
    wrong = client.post(f"/api/hands/{hand.pk}/moves", {
        "seq": seq, "command_id": str(uuid.uuid4()), "move": {"type": "open", "suit": "H"}},
        format="json")
    assert wrong.status_code == 400
    assert deadline_fire(hand_id=hand.pk, seq=seq, at=deadline)
    played = HandEvent.objects.get(hand=hand, seq=seq + 1)
    assert (played.type, played.payload["seat"], played.by) == ("comet", 0, BY_PLAYER)


def test_the_order_is_hers_to_set_and_read_and_a_stranger_has_none(django_user_model,
                                                                    monkeypatch):
    alice, hand = _alice_holds_the_comet(django_user_model, monkeypatch, "ask", "api")
    client = APIClient()
    client.force_authenticate(alice)
    url = f"/api/parties/{hand.partie_id}/comet-order"
    assert client.get(url).json()["order"] == "ask"
    answer = client.post(url, {"order": "out"}, format="json")
    assert answer.status_code == 200 and answer.json()["order"] == "out"
    assert client.get(url).json() == {"partie": str(hand.partie_id), "order": "out",
                                      "window": 8.0}
    bad = client.post(url, {"order": "sometimes"}, format="json")
    assert bad.status_code == 400 and "order" in bad.json()
    stranger = APIClient()
    stranger.force_authenticate(django_user_model.objects.create_user("zoe", is_staff=True))
    assert stranger.get(url).status_code == 403


def test_a_comet_window_longer_than_fifteen_seconds_is_refused(people, api_as):
    answer = api_as(people[0]).post("/api/parties/", {
        "game": "comet", "players": 1, "bots": "heuristic", "comet_window": 20},
        format="json")
    assert answer.status_code == 400 and "comet_window" in answer.json()


def test_ask_me_is_refused_where_the_window_leaves_no_time_to_decide(people, api_as):
    """At a 3 s window "ask me" would rush the holder: refused, in the reader's language,
    and her order stays as it was."""
    partie = partie_start(game="comet", players=[people[0]], bots=["heuristic"] * 2,
                          comet_window=timedelta(seconds=3), at=T0)
    url = f"/api/parties/{partie.pk}/comet-order"
    client = api_as(people[0])

    french = client.post(url, {"order": "ask"}, format="json", HTTP_ACCEPT_LANGUAGE="fr")
    english = client.post(url, {"order": "ask"}, format="json", HTTP_ACCEPT_LANGUAGE="en")

    assert french.status_code == english.status_code == 409
    assert french.json() == {"error": "order_refused", "detail": (
        "« me demander » demande une fenêtre de la Comète d’au moins 8 s pour décider ; celle "
        "de cette table est de 3 s : choisissez une autre consigne, ou jouez la Comète avec "
        "son bouton")}
    assert english.json()["detail"].startswith("“ask me” needs a Comet window of at least 8 s")
    assert client.get(url).json()["order"] == "blocked"
    assert client.post(url, {"order": "never"}, format="json").status_code == 200
