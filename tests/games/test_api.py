"""The hand API (DRF), as a client uses it: parties, hands, moves, events, records, the schema.

People are driven through the API; the seats nobody drives are heuristic bots. Deadlines are not
fired by timers in tests (ACADEMIE_TIMERS=off): a test that lets a deadline pass moves the clock
to it (``clock``) and calls ``deadline_fire`` itself.
"""

from __future__ import annotations

import base64
import hashlib
import uuid
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from games import services
from games.engine.cards import CANONICAL_INDEX, COMET, FULL_DECK
from games.engine.seals import shown_hash
from games.engine.verify import verify_record
from games.models import Command, Hand, HandEvent, Partie
from games.services import chips, store
from ledger.models import JournalEntry

from .factories import PartieFactory, UserFactory

pytestmark = pytest.mark.django_db


# ---------------------------------------------------------------------------------------------
# Helpers


@pytest.fixture
def clock(time_machine: Any) -> Any:
    """The service's clock, moved forward by ``fire`` when a test lets a deadline pass."""
    time_machine.move_to(timezone.now(), tick=True)
    return time_machine


def the_hand(partie: Partie) -> Hand:
    return partie.hands.order_by("-number").first()


def fire(hand: Hand, clock: Any) -> None:
    """Let the pending deadline pass: the service plays its move."""
    hand.refresh_from_db()
    clock.move_to(hand.deadline + timedelta(milliseconds=1), tick=True)
    assert services.deadline_fire(hand_id=hand.id, seq=hand.last_seq, at=timezone.now())


def post_move(client: APIClient, hand: Hand, move: dict[str, Any], *, seq: int | None = None,
              command_id: Any = None) -> Any:
    hand.refresh_from_db()
    body = {"command_id": str(command_id or uuid.uuid4()),
            "seq": hand.last_seq if seq is None else seq, "move": move}
    return client.post(f"/api/hands/{hand.id}/moves", body, format="json")


def book(partie: Partie) -> dict[str, Any]:
    """Everything a refused move must leave as it was."""
    hand = the_hand(partie)
    hand.refresh_from_db()
    seats = list(partie.seats.order_by("number"))
    return {
        "seq": hand.last_seq,
        "events": HandEvent.objects.filter(hand=hand).count(),
        "wallets": chips.wallet_balances(partie=partie, seats=seats),
        "pot": chips.pot_balance(partie=partie),
        "entries": JournalEntry.objects.count(),
        "commands": Command.objects.count(),
    }


def when(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


@pytest.fixture
def duel(organiser: Any, player: Any) -> Partie:
    """A Comet partie of two people (the organiser at seat 0, the player at seat 1)."""
    return PartieFactory(game="comet", players=[organiser, player], buy_in=40)


@pytest.fixture
def opening(duel: Partie, organiser: Any, player: Any, api_as: Any) -> dict[str, Any]:
    """The duel's first decision: one of its two people must open a run."""
    hand = the_hand(duel)
    users = {0: organiser, 1: player}
    loaded = store.load(hand)
    seat = loaded.game.to_act(loaded.state)[0]
    return {"hand": hand, "partie": duel, "seat": seat, "me": api_as(users[seat]),
            "other": api_as(users[1 - seat]), "user": users[seat]}


def a_wrong_opening_card(opening: dict[str, Any]) -> tuple[str, str, str]:
    """A suit of the opener's with two cards or more, its lowest card and a higher one."""
    hand = opening["me"].get(f"/api/hands/{opening['hand'].id}/").json()["view"]["hand"]
    for suit in "CDHS":
        mine = sorted((c for c in hand if c[1] == suit and c != COMET),
                      key=CANONICAL_INDEX.__getitem__)
        if len(mine) >= 2:
            return suit, mine[0], mine[-1]
    raise AssertionError("25 cards and no suit held twice")


# ---------------------------------------------------------------------------------------------
# Parties


def test_a_casual_partie_starts_once_invited_seats_are_accepted_people_first_then_bots(
        organiser: Any, player: Any, api_as: Any) -> None:
    client = api_as(organiser)

    answer = client.post("/api/parties/", {
        "game": "comet", "players": ["pia", "olga"], "bots": ["heuristic"],
        "options": {"per_card": 2}, "buy_in": 30, "move_timeout": 20, "table_label": "table 7",
    }, format="json")
    assert answer.status_code == 201, answer.content
    assert answer.json()["status"] == "inviting"
    accepted = api_as(player).post(f"/api/parties/{answer.json()['id']}/answer",
                                   {"accept": True}, format="json")

    assert accepted.status_code == 200, accepted.content
    partie = accepted.json()
    assert [(s["number"], s["player"], s["bot"]) for s in partie["seats"]][:2] == [
        (0, "pia", ""), (1, "olga", "")]
    assert partie["seats"][2]["bot"] == "heuristic"
    assert partie["options"]["per_card"] == 2 and partie["options"]["ante"] == 1
    assert (partie["game"], partie["status"], partie["table_label"], partie["created_by"]) == (
        "comet", "playing", "table 7", "olga")
    assert [h["number"] for h in partie["hands"]] == [1]
    created = Partie.objects.get(pk=partie["id"])
    assert created.created_by == organiser
    assert created.move_timeout == timedelta(seconds=20)
    # People play from their casual wallets (the welcome chips); the bot is staked the buy-in.
    started = HandEvent.objects.get(hand=the_hand(created), seq=1)
    assert started.payload["chips_before"] == {"0": 1000, "1": 1000, "2": 30}


def test_parties_are_listed_newest_first_and_read_one_by_one(
        organiser: Any, outsider: Any, api_as: Any) -> None:
    older = PartieFactory(game="comet")
    newer = PartieFactory(game="commere", players=[UserFactory() for _ in range(2)],
                          bots=["heuristic", "heuristic"])
    # A casual partie is seen by its players and by staff (games/permissions.py).
    outsider.is_staff = True
    outsider.save(update_fields=["is_staff"])
    client = api_as(outsider)

    listed = client.get("/api/parties/")
    one = client.get(f"/api/parties/{older.pk}/")

    assert listed.status_code == 200
    assert [p["id"] for p in listed.json()["results"]][:2] == [str(newer.pk), str(older.pk)]
    # A list names how many hands each partie dealt; the detail has the hands.
    assert "hands" not in listed.json()["results"][1]
    assert listed.json()["results"][1]["hands_dealt"] == 1
    assert one.status_code == 200
    assert one.json()["id"] == str(older.pk)
    assert one.json()["hands"][0]["id"] == str(the_hand(older).pk)
    assert one.json()["hands"][0]["commitment"] == the_hand(older).commitment
    assert the_hand(older).secret.seed not in one.content.decode()


def test_parties_are_listed_a_page_at_a_time(outsider: Any, api_as: Any) -> None:
    parties = [PartieFactory(game="comet") for _ in range(3)]
    outsider.is_staff = True  # staff see every casual partie (games.permissions)
    outsider.save()
    client = api_as(outsider)

    first = client.get("/api/parties/", {"limit": 2}).json()
    second = client.get(first["next"]).json()

    assert first["count"] == 3 and len(first["results"]) == 2
    assert [p["id"] for p in first["results"] + second["results"]] == [
        str(p.pk) for p in reversed(parties)]
    assert second["next"] is None
    assert len(client.get("/api/parties/").json()["results"]) == 3  # at most 50 a page


@pytest.mark.parametrize(("body", "field", "words"), [
    ({"game": "comet", "players": ["pia"]}, "detail", "2 to 6 players, not 1"),
    ({"game": "commere", "players": ["pia", "olga"], "bots": ["heuristic"]}, "detail",
     "4 to 12 players, not 3"),
    ({"game": "comet", "players": ["pia", "nobody"]}, "players", "no such player: nobody"),
    ({"game": "comet", "players": ["pia", "pia"]}, "detail", "only one seat"),
    ({"game": "poker", "players": ["pia", "olga"]}, "game", "not a valid choice"),
    ({"game": "comet", "players": ["pia"], "bots": ["genius"]}, "bots",
     "unknown bot level 'genius'"),
    ({"game": "comet", "players": ["pia", "olga"], "options": {"ante": "x"}}, "detail", "ante"),
    ({"game": "comet", "players": ["pia", "olga"], "options": {"bluff": 1}}, "detail", "bluff"),
    ({"game": "comet", "players": ["pia", "olga"], "options": [1]}, "options", "dictionary"),
    ({"game": "comet", "players": "pia"}, "players", "list"),
    ({"game": "comet", "players": ["pia", "olga"], "buy_in": -5}, "buy_in", "greater than"),
    ({"game": "comet", "players": ["pia", "olga"], "move_timeout": "soon"}, "move_timeout",
     "number"),
    ({"players": ["pia", "olga"]}, "game", "required"),
])
def test_a_bad_partie_is_refused_with_400_naming_what_is_wrong(
        organiser: Any, player: Any, api_as: Any, body: dict[str, Any], field: str,
        words: str) -> None:
    answer = api_as(organiser).post("/api/parties/", body, format="json")

    assert answer.status_code == 400
    assert words in str(answer.json()[field])
    assert not Partie.objects.exists()


def test_an_unknown_bot_level_is_refused_in_the_readers_language(
        organiser: Any, player: Any, api_as: Any) -> None:
    body = {"game": "comet", "players": ["pia"], "bots": ["génie"]}
    answer = api_as(organiser).post("/api/parties/", body, format="json",
                                    HTTP_ACCEPT_LANGUAGE="fr")

    assert answer.status_code == 400
    assert "niveau de bot inconnu « génie » : choisissez parmi debutant" in str(
        answer.json()["bots"])
    assert not Partie.objects.exists()


def test_an_unknown_partie_or_hand_is_404(outsider: Any, api_as: Any) -> None:
    client = api_as(outsider)
    nobody = uuid.uuid4()

    for url in (f"/api/parties/{nobody}/", f"/api/hands/{nobody}/", f"/api/hands/{nobody}/events",
                f"/api/hands/{nobody}/record", f"/api/hands/{nobody}/verify"):
        answer = client.get(url)
        assert answer.status_code == 404, url
        assert answer.json()["error"] == "not_found"
    moved = client.post(f"/api/hands/{nobody}/moves", {
        "command_id": str(uuid.uuid4()), "seq": 1, "move": {"type": "announce"}}, format="json")
    assert moved.status_code == 404


# ---------------------------------------------------------------------------------------------
# Reading a hand


def test_a_seated_player_reads_his_hand_his_legal_moves_whose_turn_and_until_when(
        opening: dict[str, Any]) -> None:
    hand, seat = opening["hand"], opening["seat"]
    loaded = store.load(hand)

    answer = opening["me"].get(f"/api/hands/{hand.id}/")

    assert answer.status_code == 200
    view = answer.json()
    assert (view["hand"], view["game"], view["status"]) == (str(hand.id), "comet", "playing")
    assert (view["your_seat"], view["to_act"], view["seq"]) == (seat, [seat], hand.last_seq)
    assert view["legal_moves"] == [m.to_dict() for m in loaded.game.legal_moves(loaded.state)[seat]]
    assert {m["type"] for m in view["legal_moves"]} == {"open"}
    assert when(view["deadline"]) == hand.deadline
    assert view["deadline_kind"] == "timeout"
    assert hand.deadline - timezone.now() > timedelta(seconds=20)  # the partie's 30 s
    mine = [c for c in FULL_DECK if loaded.state.hands[seat] >> CANONICAL_INDEX[c] & 1]
    assert view["view"]["hand"] == mine
    assert view["seed"] is None and view["commitment"] == hand.commitment


def test_the_other_player_sees_whose_turn_it_is_but_has_no_move(opening: dict[str, Any]) -> None:
    view = opening["other"].get(f"/api/hands/{opening['hand'].id}/").json()

    assert view["your_seat"] == 1 - opening["seat"]
    assert view["to_act"] == [opening["seat"]]
    assert view["legal_moves"] == []
    assert sorted(view["view"]["cards_in_hand"].values()) == [25, 26]  # 51 cards dealt


def test_a_spectator_sees_the_table_but_no_hand_and_no_move(
        opening: dict[str, Any], outsider: Any, api_as: Any) -> None:
    # A casual partie is seen by its players and by staff (games/permissions.py).
    outsider.is_staff = True
    outsider.save(update_fields=["is_staff"])
    view = api_as(outsider).get(f"/api/hands/{opening['hand'].id}/").json()

    assert view["your_seat"] is None
    assert view["legal_moves"] == []
    assert "hand" not in view["view"]
    assert view["to_act"] == [opening["seat"]]


# ---------------------------------------------------------------------------------------------
# Moves


def test_a_legal_move_is_applied_and_the_seq_moves_on(opening: dict[str, Any]) -> None:
    hand = opening["hand"]
    before = hand.last_seq
    suit = opening["me"].get(f"/api/hands/{hand.id}/").json()["legal_moves"][0]["suit"]

    answer = post_move(opening["me"], hand, {"type": "open", "suit": suit})

    assert answer.status_code == 201, answer.content
    assert answer.json()["seq"] > before
    assert answer.json()["command"] == {"hand": str(hand.id), "seq": answer.json()["seq"],
                                        "applied_from_seq": before + 1, "next_hand": None}
    opened = HandEvent.objects.get(hand=hand, seq=before + 1)
    assert (opened.type, opened.by, opened.payload["seat"], opened.payload["suit"]) == (
        "open", "player", opening["seat"], suit)
    assert opened.actor == opening["user"]
    hand.refresh_from_db()
    assert hand.last_seq == answer.json()["seq"]


def test_a_move_is_read_by_the_serializer_which_trims_its_fields(
        opening: dict[str, Any]) -> None:
    hand = opening["hand"]
    suit = opening["me"].get(f"/api/hands/{hand.id}/").json()["legal_moves"][0]["suit"]

    before = hand.last_seq
    played = post_move(opening["me"], hand, {"type": "open", "suit": suit})
    odd = post_move(opening["me"], hand, {"type": "open", "suit": " " + suit}, seq=before)

    assert played.status_code == 201, played.content
    assert odd.status_code == 409, odd.content  # mended by the serializer (the space), then stale
    assert odd.json()["error"] == "stale_sequence"


def test_an_opening_above_the_lowest_card_is_refused_by_its_rule_and_changes_nothing(
        opening: dict[str, Any]) -> None:
    suit, lowest, higher = a_wrong_opening_card(opening)
    before = book(opening["partie"])

    answer = post_move(opening["me"], opening["hand"], {"type": "open", "suit": suit,
                                                       "card": higher})

    assert answer.status_code == 400
    assert answer.json()["error"] == "illegal_move"
    assert answer.json()["rule"] == "open"
    assert answer.json()["detail"].startswith("you must open with your lowest ")
    assert answer.json()["detail"].endswith(lowest)
    assert book(opening["partie"]) == before


def test_a_move_out_of_turn_is_refused_by_the_turn_rule(opening: dict[str, Any]) -> None:
    before = book(opening["partie"])

    answer = post_move(opening["other"], opening["hand"], {"type": "open", "suit": "H"})

    assert answer.status_code == 400
    assert answer.json()["rule"] == "turn"
    assert f"seat {opening['seat']} must open" in answer.json()["detail"]
    assert book(opening["partie"]) == before


def test_someone_without_a_seat_at_the_table_cannot_move(
        opening: dict[str, Any], outsider: Any, api_as: Any) -> None:
    before = book(opening["partie"])

    answer = post_move(api_as(outsider), opening["hand"], {"type": "open", "suit": "H"})

    assert answer.status_code == 403
    assert answer.json()["error"] == "not_seated"
    assert book(opening["partie"]) == before


def test_someone_without_a_seat_is_refused_as_such_even_at_a_stale_seq(
        opening: dict[str, Any], outsider: Any, api_as: Any) -> None:
    before = book(opening["partie"])
    assert before["seq"] > 0

    answer = post_move(api_as(outsider), opening["hand"], {"type": "open", "suit": "H"},
                       seq=before["seq"] - 1)

    # Who may move is checked before the seq: a 403, not the 409 of a lost race.
    assert answer.status_code == 403
    assert answer.json()["error"] == "not_seated"
    assert book(opening["partie"]) == before


def test_a_move_answering_an_old_seq_is_refused_as_stale(opening: dict[str, Any]) -> None:
    hand = opening["hand"]
    suit = opening["me"].get(f"/api/hands/{hand.id}/").json()["legal_moves"][0]["suit"]
    before = book(opening["partie"])

    answer = post_move(opening["me"], hand, {"type": "open", "suit": suit},
                       seq=hand.last_seq - 1)

    assert answer.status_code == 409
    assert answer.json()["error"] == "stale_sequence"
    assert f"at seq {hand.last_seq}" in answer.json()["detail"]
    assert book(opening["partie"]) == before


def test_a_retried_command_gets_the_first_answer_and_appends_nothing(
        opening: dict[str, Any]) -> None:
    hand = opening["hand"]
    suit = opening["me"].get(f"/api/hands/{hand.id}/").json()["legal_moves"][0]["suit"]
    command_id, seq = uuid.uuid4(), hand.last_seq
    first = post_move(opening["me"], hand, {"type": "open", "suit": suit}, seq=seq,
                      command_id=command_id)
    after_first = book(opening["partie"])

    again = post_move(opening["me"], hand, {"type": "open", "suit": suit}, seq=seq,
                      command_id=command_id)

    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert book(opening["partie"]) == after_first


def test_a_retry_after_the_hand_moved_on_still_gets_the_first_answer(
        opening: dict[str, Any], clock: Any) -> None:
    hand = opening["hand"]
    suit = opening["me"].get(f"/api/hands/{hand.id}/").json()["legal_moves"][0]["suit"]
    command_id, seq = uuid.uuid4(), hand.last_seq
    first = post_move(opening["me"], hand, {"type": "open", "suit": suit}, seq=seq,
                      command_id=command_id)
    fire(hand, clock)  # the next decision is played for its seat
    moved_on = book(opening["partie"])

    again = post_move(opening["me"], hand, {"type": "open", "suit": suit}, seq=seq,
                      command_id=command_id)

    assert again.status_code == 201
    assert again.json()["command"] == first.json()["command"]
    assert again.json()["seq"] == moved_on["seq"] > first.json()["seq"]
    assert book(opening["partie"]) == moved_on


def test_a_command_id_used_again_for_another_move_or_by_someone_else_is_a_conflict(
        opening: dict[str, Any]) -> None:
    hand = opening["hand"]
    legal = opening["me"].get(f"/api/hands/{hand.id}/").json()["legal_moves"]
    command_id, seq = uuid.uuid4(), hand.last_seq
    post_move(opening["me"], hand, legal[0], seq=seq, command_id=command_id)
    after = book(opening["partie"])

    other_move = post_move(opening["me"], hand, {"type": "keep_comet"}, seq=seq,
                           command_id=command_id)
    other_player = post_move(opening["other"], hand, legal[0], seq=seq, command_id=command_id)

    for answer in (other_move, other_player):
        assert answer.status_code == 409
        assert answer.json()["error"] == "command_conflict"
    assert book(opening["partie"]) == after


@pytest.mark.parametrize("who", ["me", "other"])
def test_a_command_id_used_again_at_the_current_seq_is_a_conflict_even_for_an_illegal_move(
        opening: dict[str, Any], who: str) -> None:
    hand = opening["hand"]
    legal = opening["me"].get(f"/api/hands/{hand.id}/").json()["legal_moves"]
    command_id = uuid.uuid4()
    assert post_move(opening["me"], hand, legal[0], command_id=command_id).status_code == 201
    after = book(opening["partie"])

    # The hand's current seq, a move the rules forbid now (or a move out of turn).
    answer = post_move(opening[who], hand, {"type": "open", "suit": "H", "card": "2C"},
                       command_id=command_id)

    assert answer.status_code == 409, answer.json()
    assert answer.json()["error"] == "command_conflict"
    assert answer.json()["detail"] == "this command_id was already used for another move"
    assert book(opening["partie"]) == after


@pytest.mark.parametrize(("body", "field"), [
    ({"seq": 0, "move": {"type": "open", "suit": "H"}}, "command_id"),
    ({"command_id": "C", "seq": 0, "move": {"type": "open", "suit": "H"}}, "command_id"),
    ({"command_id": ["C"], "seq": 0, "move": {"type": "open", "suit": "H"}}, "command_id"),
    ({"command_id": "U", "move": {"type": "open", "suit": "H"}}, "seq"),
    ({"command_id": "U", "seq": "seven", "move": {"type": "open", "suit": "H"}}, "seq"),
    ({"command_id": "U", "seq": 1.5, "move": {"type": "open", "suit": "H"}}, "seq"),
    ({"command_id": "U", "seq": -1, "move": {"type": "open", "suit": "H"}}, "seq"),
    ({"command_id": "U", "seq": [3], "move": {"type": "open", "suit": "H"}}, "seq"),
    ({"command_id": "U", "seq": 0}, "move"),
    ({"command_id": "U", "seq": 0, "move": None}, "move"),
    ({"command_id": "U", "seq": 0, "move": "open H"}, "move"),
    ({"command_id": "U", "seq": 0, "move": {"suit": "H"}}, "move.type"),
    ({"command_id": "U", "seq": 0, "move": {"type": "fold"}}, "move.type"),
    ({"command_id": "U", "seq": 0, "move": {"type": 3}}, "move.type"),
    ({"command_id": "U", "seq": 0, "move": {"type": "play", "card": "ZZ"}}, "move.card"),
    ({"command_id": "U", "seq": 0, "move": {"type": "play", "card": "9d"}}, "move.card"),
    ({"command_id": "U", "seq": 0, "move": {"type": "play", "card": ["9D"]}}, "move.card"),
    ({"command_id": "U", "seq": 0, "move": {"type": "play", "card": "10D"}}, "move.card"),
    ({"command_id": "U", "seq": 0, "move": {"type": "open", "suit": "X"}}, "move.suit"),
    ({"command_id": "U", "seq": 0, "move": {"type": "open", "suit": "HH"}}, "move.suit"),
    ({"command_id": "U", "seq": 0, "move": {"type": "open", "suit": 2}}, "move.suit"),
    ([{"command_id": "U"}], "non_field_errors"),
])
def test_a_malformed_move_is_refused_with_400_naming_the_field(
        opening: dict[str, Any], body: Any, field: str) -> None:
    if isinstance(body, dict) and body.get("command_id") == "U":
        body = {**body, "command_id": str(uuid.uuid4())}
    before = book(opening["partie"])

    answer = opening["me"].post(f"/api/hands/{opening['hand'].id}/moves", body, format="json")

    assert answer.status_code == 400, answer.content
    errors: Any = answer.json()
    for part in field.split("."):
        assert part in errors, (field, errors)
        errors = errors[part]
    assert book(opening["partie"]) == before


def test_a_body_that_is_not_json_is_refused_with_400(opening: dict[str, Any]) -> None:
    answer = opening["me"].post(f"/api/hands/{opening['hand'].id}/moves", "{seq: 1",
                                content_type="application/json")

    assert answer.status_code == 400
    assert answer.json()["error"] == "parse_error"


def test_a_move_of_the_other_game_is_an_illegal_move(opening: dict[str, Any]) -> None:
    answer = post_move(opening["me"], opening["hand"], {"type": "offer", "card": "2C"})

    assert answer.status_code == 400
    assert answer.json()["error"] == "illegal_move"
    assert "no 'offer' move in Comet" in answer.json()["detail"]


def test_a_player_who_lets_his_time_run_out_gets_the_default_move(
        opening: dict[str, Any], clock: Any) -> None:
    hand = opening["hand"]
    seq = hand.last_seq
    assert not services.deadline_fire(hand_id=hand.id, seq=seq, at=timezone.now())

    fire(hand, clock)

    view = opening["me"].get(f"/api/hands/{hand.id}/").json()
    assert view["seq"] > seq
    opened = HandEvent.objects.get(hand=hand, seq=seq + 1)
    assert (opened.type, opened.by, opened.payload["seat"]) == ("open", "timeout", opening["seat"])


# ---------------------------------------------------------------------------------------------
# Signing in


ENDPOINTS = ["/api/parties/", "/api/parties/{partie}/", "/api/hands/{hand}/",
             "/api/hands/{hand}/events", "/api/hands/{hand}/record", "/api/hands/{hand}/verify"]


@pytest.mark.parametrize("url", ENDPOINTS + ["/api/hands/{hand}/moves"])
def test_nobody_signed_in_is_refused_everywhere(opening: dict[str, Any], url: str) -> None:
    hand, partie = opening["hand"], opening["partie"]
    url = url.format(hand=hand.id, partie=partie.pk)
    anonymous = APIClient()
    before = book(partie)

    answer = (anonymous.post(url, {"command_id": str(uuid.uuid4()), "seq": hand.last_seq,
                                   "move": {"type": "open", "suit": "H"}}, format="json")
              if url.endswith("moves") else anonymous.get(url))

    # SessionAuthentication comes first in the settings: DRF then answers 403 (a session has
    # no challenge to offer); with Basic first it would be 401 with a WWW-Authenticate header.
    assert answer.status_code in (401, 403)
    assert answer.json()["error"] == "not_authenticated"
    if answer.status_code == 401:
        assert answer.headers["WWW-Authenticate"].startswith("Basic")
    assert book(partie) == before


def test_a_wrong_password_is_refused_and_the_right_one_lets_in(organiser: Any) -> None:
    client = APIClient()

    def basic(password: str) -> str:
        return "Basic " + base64.b64encode(f"olga:{password}".encode()).decode()

    wrong = client.get("/api/parties/", HTTP_AUTHORIZATION=basic("guess"))
    right = client.get("/api/parties/", HTTP_AUTHORIZATION=basic("pw-olga-123"))

    assert wrong.status_code in (401, 403)
    assert wrong.json()["error"] == "authentication_failed"
    assert right.status_code == 200


def test_a_signed_in_session_plays_like_any_client(opening: dict[str, Any]) -> None:
    client = APIClient()
    user = opening["user"]
    user.set_password("pw-session-1")
    user.save()
    assert client.login(username=user.username, password="pw-session-1")

    view = client.get(f"/api/hands/{opening['hand'].id}/").json()

    assert view["your_seat"] == opening["seat"]
    assert view["legal_moves"]


# ---------------------------------------------------------------------------------------------
# Events, record, verification


@pytest.fixture
def commere(organiser: Any, player: Any, outsider: Any, api_as: Any) -> dict[str, Any]:
    """A Ma commère round of four people, after its first speaker offered a card."""
    # A casual partie is seen by its players and by staff (games/permissions.py).
    outsider.is_staff = True
    outsider.save(update_fields=["is_staff"])
    people = [player, organiser, UserFactory(username="paul"), UserFactory(username="rita")]
    partie = PartieFactory(game="commere", players=people,
                           options={"compulsory_announce": False, "max_turns": 3})
    hand = the_hand(partie)
    speaker = store.load(hand).game.to_act(store.load(hand).state)[0]
    clients = {seat: api_as(user) for seat, user in enumerate(people)}
    card = clients[speaker].get(f"/api/hands/{hand.id}/").json()["view"]["hand"][0]
    answer = post_move(clients[speaker], hand, {"type": "offer", "card": card})
    assert answer.status_code == 201, answer.content
    return {"partie": partie, "hand": hand, "clients": clients, "speaker": speaker, "card": card,
            "spectator": api_as(outsider)}


def test_events_while_the_round_runs_show_the_chain_and_seals_not_other_players_cards(
        commere: dict[str, Any]) -> None:
    hand, speaker, card = commere["hand"], commere["speaker"], commere["card"]
    asked = (speaker + 1) % 4
    hand.refresh_from_db()
    readers = {**commere["clients"], None: commere["spectator"]}

    for seat, client in readers.items():
        answer = client.get(f"/api/hands/{hand.id}/events")
        assert answer.status_code == 200
        assert answer.json()["over"] is False
        events = answer.json()["events"]
        assert [e["seq"] for e in events] == list(range(1, hand.last_seq + 1))
        # Every hash recomputes from what this reader is shown, and chains to the receipt.
        prev = hand.commitment
        for e in events:
            assert e["prev"] == prev and shown_hash(e) == e["hash"]
            prev = e["hash"]
        assert answer.json()["receipt"]["hash"] == prev == hand.last_hash
        offer = next(e for e in events if e["type"] == "offer")
        assert offer["seat"] == speaker
        assert offer["card"] == (card if seat in (speaker, asked) else None), seat
        assert offer["seals"]["card"].startswith("sealed:") and card not in str(offer["seals"])


def play_out(hand: Hand, clock: Any) -> None:
    hand.refresh_from_db()
    while hand.status != Hand.Status.OVER:
        fire(hand, clock)
        hand.refresh_from_db()


def test_the_record_is_withheld_until_the_end_then_verifies(
        commere: dict[str, Any], clock: Any) -> None:
    hand, client = commere["hand"], commere["spectator"]
    for url in ("record", "verify"):
        answer = client.get(f"/api/hands/{hand.id}/{url}")
        assert answer.status_code == 409
        assert answer.json()["error"] == "hand_not_over"

    play_out(hand, clock)

    record = client.get(f"/api/hands/{hand.id}/record")
    assert record.status_code == 200
    doc = record.json()
    assert (doc["format"], doc["game"], doc["hand"], doc["number"]) == (
        "academie.hand/3", "commere", str(hand.id), 1)
    assert doc["seats"][0] == {"seat": 0, "player": "pia"}
    assert hashlib.sha256(bytes.fromhex(doc["seed"])).hexdigest() == doc["commitment"]
    assert doc["commitment"] == hand.commitment
    assert len(doc["deck"]) == 52
    assert doc["events"][-1]["type"] == "hand_over"
    assert doc["result"] == doc["events"][-1]["result"]
    assert verify_record(doc) == doc["digest"] == doc["events"][-1]["hash"]
    verified = client.get(f"/api/hands/{hand.id}/verify")
    assert verified.status_code == 200
    assert verified.json() == {"ok": True, "digest": doc["digest"], "discrepancy": None}


def test_after_the_round_every_reader_gets_the_complete_events(
        commere: dict[str, Any], clock: Any) -> None:
    hand = commere["hand"]
    play_out(hand, clock)
    record = commere["spectator"].get(f"/api/hands/{hand.id}/record").json()

    for client in [*commere["clients"].values(), commere["spectator"]]:
        answer = client.get(f"/api/hands/{hand.id}/events").json()
        assert answer["over"] is True
        assert [{k: v for k, v in e.items() if k != "seals"}
                for e in answer["events"]] == record["events"]
        view = client.get(f"/api/hands/{hand.id}/").json()
        assert view["seed"] == record["seed"]
        assert view["legal_moves"] == []


def test_a_move_on_a_finished_hand_is_refused(commere: dict[str, Any], clock: Any) -> None:
    hand = commere["hand"]
    play_out(hand, clock)
    before = book(commere["partie"])

    answer = post_move(commere["clients"][0], hand, {"type": "announce"})

    assert answer.status_code == 409
    assert answer.json()["error"] == "hand_over"
    assert book(commere["partie"]) == before


def test_a_comet_hand_against_a_bot_played_through_the_api_ends_and_verifies(
        player: Any, api_as: Any) -> None:
    client = api_as(player)
    created = client.post("/api/parties/", {
        "game": "comet", "players": ["pia"], "bots": ["heuristic"], "buy_in": 60,
        "forced_move_delay": 0, "comet_window": 0}, format="json").json()
    hand_id = created["hands"][0]["id"]
    moves = 0

    view = client.get(f"/api/hands/{hand_id}/").json()
    while view["status"] != "over":
        # Without delays the service plays every only move at once: pia has a real choice.
        assert view["to_act"] == [0], view
        legal = view["legal_moves"]
        move = next((m for m in legal if m["type"] != "comet"), legal[0])
        answer = client.post(f"/api/hands/{hand_id}/moves", {
            "command_id": str(uuid.uuid4()), "seq": view["seq"], "move": move}, format="json")
        assert answer.status_code == 201, answer.content
        view = answer.json()
        moves += 1
        assert moves < 60

    assert view["view"]["result"]["winner"] in (0, 1)
    assert client.get(f"/api/hands/{hand_id}/verify").json()["ok"] is True
    partie = client.get(f"/api/parties/{created['id']}/").json()
    assert partie["hands"][0]["status"] == "over"


# ---------------------------------------------------------------------------------------------
# Schema and documentation


def test_the_openapi_schema_describes_the_hand_api(outsider: Any, api_as: Any) -> None:
    answer = api_as(outsider).get("/api/schema/", {"format": "json"})

    assert answer.status_code == 200
    paths = answer.json()["paths"]
    assert "/api/hands/{hand_id}/moves" in paths
    assert "post" in paths["/api/hands/{hand_id}/moves"]
    assert "/api/parties/" in paths
    assert "406" not in paths["/api/hands/{hand_id}/moves"]["post"]["responses"]


def test_the_openapi_schema_is_generated_without_a_warning(tmp_path: Any) -> None:
    """Other tools read the schema: every choice set has one name, every view a described
    answer (drf-spectacular's warnings, as errors)."""
    from django.core.management import call_command

    call_command("spectacular", "--validate", "--fail-on-warn", "--file",
                 str(tmp_path / "schema.yml"))

    assert "PlayStatusEnum:" in (tmp_path / "schema.yml").read_text()


def test_the_swagger_page_is_served(outsider: Any, api_as: Any) -> None:
    answer = api_as(outsider).get("/api/docs/")

    assert answer.status_code == 200
    assert answer["Content-Type"].startswith("text/html")
    assert b"swagger" in answer.content.lower()


def test_a_casual_partie_is_refused_to_who_does_not_sit_at_it(
        player: Any, outsider: Any, api_as: Any) -> None:
    partie = PartieFactory(game="comet", players=[player], bots=["heuristic"])
    hand = partie.hands.get()
    client = api_as(outsider)

    listed = client.get("/api/parties/").json()
    answers = [client.get(url) for url in (
        f"/api/parties/{partie.pk}/", f"/api/hands/{hand.pk}/", f"/api/hands/{hand.pk}/events",
        f"/api/hands/{hand.pk}/record", f"/api/hands/{hand.pk}/verify")]

    assert str(partie.pk) not in [p["id"] for p in listed["results"]]
    assert [(a.status_code, a.json()["error"]) for a in answers] == [(403, "not_viewer")] * 5
    assert api_as(player).get(f"/api/hands/{hand.pk}/").status_code == 200
