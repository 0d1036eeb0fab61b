"""Casual tables: nobody is seated, nor charged, without accepting an invitation, and a casual
buy-in comes from the player's own casual wallet, within the club's limit, never minted."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from games import services
from games.models import HandEvent, Invitation, Partie, Seat
from ledger.models import Account, JournalEntry

from .factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def friends(people: list[Any]) -> list[Any]:
    return people  # alice, bruno, chloe, denis


def _make(client: Any, **body: Any) -> Any:
    return client.post("/api/parties/", {"game": "comet", **body}, format="json")


def _answer(client: Any, partie_id: str, accept: Any) -> Any:
    return client.post(f"/api/parties/{partie_id}/answer", {"accept": accept}, format="json")


def _casual_accounts(user: Any) -> int:
    return Account.objects.filter(club_key="casual", owner=user).count()


def test_a_stranger_who_names_others_seats_nobody_and_mints_nothing(
        friends: list[Any], api_as: Any) -> None:
    """The probe's request: three people who were not asked are named at a table."""
    visitor = UserFactory(username="visitor")
    alice, bruno, chloe, _ = friends

    answer = _make(api_as(visitor), game="commere",
                   players=["visitor", "alice", "bruno", "chloe"], buy_in=100,
                   options={"rounds": 1}, move_timeout=3600)

    assert answer.status_code == 201, answer.content
    partie = answer.json()
    assert partie["status"] == "inviting"
    assert partie["seats"] == [] and partie["hands"] == []
    assert [(i["player"], i["answer"]) for i in partie["invitations"]] == [
        ("visitor", "accepted"), ("alice", "pending"), ("bruno", "pending"),
        ("chloe", "pending")]
    assert not Seat.objects.filter(player__in=[alice, bruno, chloe]).exists()
    assert [_casual_accounts(u) for u in (alice, bruno, chloe)] == [0, 0, 0]
    # The creator's own wallet opened with the welcome chips, and nothing more was issued.
    assert [e.memo for e in JournalEntry.objects.all()] == ["Welcome chips of the casual tables"]


def test_the_buy_in_is_within_the_club_limit(friends: list[Any], api_as: Any,
                                            settings: Any) -> None:
    settings.ACADEMIE_CASUAL_MAX_BUY_IN = 200

    answer = _make(api_as(friends[0]), players=["alice", "bruno"], buy_in=201)

    assert answer.status_code == 400
    assert "at most 200 chips, not 201" in answer.json()["detail"]
    assert not Partie.objects.exists() and not JournalEntry.objects.exists()


def test_the_table_starts_when_the_last_invited_player_accepts(
        friends: list[Any], api_as: Any) -> None:
    alice, bruno, chloe, _ = friends
    made = _make(api_as(alice), players=["alice", "bruno", "chloe"], buy_in=40).json()

    first = _answer(api_as(bruno), made["id"], True)
    assert first.status_code == 200 and first.json()["status"] == "inviting"
    assert first.json()["seats"] == []
    last = _answer(api_as(chloe), made["id"], True)

    assert last.status_code == 200, last.content
    partie = last.json()
    assert partie["status"] == "playing"
    assert [s["player"] for s in partie["seats"]] == ["alice", "bruno", "chloe"]
    assert len(partie["hands"]) == 1
    # Nothing was issued at the table: each person's chips are his welcome chips.
    assert JournalEntry.objects.filter(source__contains="buy-in").count() == 0
    assert JournalEntry.objects.filter(memo="Welcome chips of the casual tables").count() == 3


def test_a_decline_cancels_the_table_and_seats_nobody(friends: list[Any],
                                                      api_as: Any) -> None:
    alice, bruno, chloe, _ = friends
    made = _make(api_as(alice), players=["alice", "bruno", "chloe"]).json()
    _answer(api_as(bruno), made["id"], True)

    declined = _answer(api_as(chloe), made["id"], False)
    late = _answer(api_as(chloe), made["id"], True)

    assert declined.status_code == 200
    assert declined.json()["status"] == "cancelled"
    assert [(i["player"], i["answer"]) for i in declined.json()["invitations"]] == [
        ("alice", "accepted"), ("bruno", "accepted"), ("chloe", "declined")]
    assert not Seat.objects.exists()
    assert late.status_code == 409 and late.json()["error"] == "invitation_closed"


def test_who_lacks_the_buy_in_cannot_accept_and_nothing_changes(
        friends: list[Any], api_as: Any, settings: Any) -> None:
    settings.ACADEMIE_CASUAL_WELCOME_CHIPS = 30
    alice, bruno, *_ = friends
    made = _make(api_as(alice), players=["alice", "bruno"], buy_in=30).json()
    settings.ACADEMIE_CASUAL_WELCOME_CHIPS = 20  # bruno's wallet opens with 20

    refused = _answer(api_as(bruno), made["id"], True)

    assert refused.status_code == 409
    assert refused.json() == {
        "error": "not_enough_chips",
        "detail": "bruno holds 20 chips in his casual wallet; this table's buy-in is 30"}
    assert Invitation.objects.get(player=bruno).answer == "pending"
    assert Partie.objects.get().status == "inviting"


def test_one_accepted_casual_table_at_a_time(friends: list[Any], api_as: Any) -> None:
    alice, bruno, chloe, denis = friends
    one = _make(api_as(alice), players=["alice", "bruno", "chloe"]).json()
    other = _make(api_as(denis), players=["denis", "bruno"]).json()
    _answer(api_as(bruno), one["id"], True)

    refused = _answer(api_as(bruno), other["id"], True)

    assert refused.status_code == 409 and refused.json()["error"] == "player_busy"
    assert Invitation.objects.get(partie_id=other["id"], player=bruno).answer == "pending"


def test_only_the_invited_answer(friends: list[Any], api_as: Any, django_user_model: Any) -> None:
    alice, bruno, chloe, _ = friends
    made = _make(api_as(alice), players=["alice", "bruno"]).json()
    staff = django_user_model.objects.create_user("staff", is_staff=True)

    stranger = _answer(api_as(chloe), made["id"], True)
    not_invited = _answer(api_as(staff), made["id"], True)
    twice = _answer(api_as(alice), made["id"], True)
    no_body = api_as(bruno).post(f"/api/parties/{made['id']}/answer", {}, format="json")

    assert (stranger.status_code, stranger.json()["error"]) == (403, "not_viewer")
    assert (not_invited.status_code, not_invited.json()["error"]) == (403, "not_invited")
    assert (twice.status_code, twice.json()["error"]) == (409, "invitation_closed")
    assert no_body.status_code == 400 and "accept" in no_body.json()
    assert Partie.objects.get().status == "inviting"


def test_the_invited_see_their_invitations_until_they_answer(
        friends: list[Any], api_as: Any) -> None:
    alice, bruno, chloe, _ = friends
    made = _make(api_as(alice), players=["alice", "bruno", "chloe"]).json()

    before = api_as(bruno).get("/api/invitations/").json()
    _answer(api_as(bruno), made["id"], True)
    after = api_as(bruno).get("/api/invitations/").json()

    assert [p["id"] for p in before["results"]] == [made["id"]]
    assert before["results"][0]["created_by"] == "alice"
    assert after["results"] == []
    assert api_as(chloe).get(f"/api/parties/{made['id']}/").status_code == 200


def test_a_table_of_one_person_and_bots_starts_at_once_and_stakes_only_the_bots(
        friends: list[Any], api_as: Any) -> None:
    alice = friends[0]

    made = _make(api_as(alice), players=["alice"], bots=["heuristic"], buy_in=25)

    assert made.status_code == 201 and made.json()["status"] == "playing"
    stakes = JournalEntry.objects.filter(source__endswith="/buy-in")
    assert [e.memo for e in stakes] == ["Buy-in at free table"]
    opening = HandEvent.objects.get(hand__partie_id=made.json()["id"], seq=1)
    assert opening.payload["chips_before"] == {"0": 1000, "1": 25}


def test_the_welcome_chips_come_once(friends: list[Any]) -> None:
    alice, bruno, *_ = friends
    now = timezone.now()
    for _ in range(2):
        partie = services.casual_table_create(creator=alice, game="comet",
                                              players=[alice, bruno], at=now)
        services.invitation_answer(partie_id=partie.pk, user=bruno, accept=False, at=now)

    # Alice's wallet opened at her first table; bruno, who declined, has none.
    assert JournalEntry.objects.filter(memo="Welcome chips of the casual tables").count() == 1
    assert chips_of(alice) == 1000
    assert _casual_accounts(bruno) == 0


def test_the_creator_closes_his_table_and_nobody_else(friends: list[Any], api_as: Any) -> None:
    alice, bruno, *_ = friends
    inviting = _make(api_as(alice), players=["alice", "bruno"]).json()
    playing = services.casual_table_create(creator=bruno, game="comet", players=[bruno],
                                           bots=["heuristic"], at=timezone.now())

    refused = api_as(bruno).post(f"/api/parties/{inviting['id']}/close")
    cancelled = api_as(alice).post(f"/api/parties/{inviting['id']}/close")
    stopped = api_as(bruno).post(f"/api/parties/{playing.pk}/close")

    assert (refused.status_code, refused.json()["error"]) == (403, "not_table_owner")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert stopped.status_code == 200
    playing.refresh_from_db()
    # The hand in play finishes; no hand is dealt after it.
    assert playing.deal_until is not None and playing.deal_until <= timezone.now()
    assert playing.hands.count() == 1


def test_a_club_table_is_not_closed_by_its_creator(friends: list[Any], api_as: Any) -> None:
    alice = friends[0]
    partie = services.partie_start(game="comet", players=[alice], bots=["heuristic"],
                                   club_key="les-amis", created_by=alice, at=timezone.now(),
                                   move_timeout=timedelta(hours=1))
    client = api_as(alice)

    answer = client.post(f"/api/parties/{partie.pk}/close")

    assert (answer.status_code, answer.json()["error"]) == (403, "not_table_owner")
    partie.refresh_from_db()
    assert partie.deal_until is None


def chips_of(user: Any) -> int:
    return Account.objects.get(club_key="casual", owner=user).balance
