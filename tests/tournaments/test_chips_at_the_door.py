"""Rebuys (recave) and cash-outs at a soirée: each through the ledger, once per request, and a
clear refusal that changes nothing."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from ledger.models import Account, JournalEntry
from tournaments import services
from tournaments.models import Soiree

pytestmark = pytest.mark.django_db


@pytest.fixture
def evening(club: Any, members: Any, organiser: Any) -> dict[str, Any]:
    now = timezone.now()
    soiree = services.soiree_create(club=club, name="Jeudi", starts_at=now + timedelta(hours=1),
                                    ends_at=now + timedelta(hours=3), game="comet", buy_in=50)
    alice, bruno = members(2)
    services.checkin(soiree=soiree, user=alice, at=now)
    client = APIClient()
    client.force_authenticate(organiser)
    return {"soiree": soiree, "alice": alice, "bruno": bruno, "client": client}


def _post(evening: dict[str, Any], what: str, **body: Any) -> Any:
    body.setdefault("request_id", str(uuid.uuid4()))
    return evening["client"].post(f"/api/soirees/{evening['soiree'].pk}/{what}", body,
                                  format="json")


def _chips(user: Any) -> int:
    # His stack at the test's soirée (the only one): its chips are that soirée's alone.
    return Account.objects.get(club_key="cercle", kind="wallet", owner=user,
                               ref__startswith="soiree:").balance


def test_a_rebuy_issues_the_buy_in_once_however_often_it_is_clicked(evening: Any) -> None:
    request_id = str(uuid.uuid4())

    first = _post(evening, "rebuy", player="member1", request_id=request_id)
    again = _post(evening, "rebuy", player="member1", request_id=request_id)
    more = _post(evening, "rebuy", player="member1", amount=20)

    assert first.status_code == again.status_code == 201
    assert (first.json()["chips"], again.json()["chips"], more.json()["chips"]) == (100, 100, 120)
    assert JournalEntry.objects.filter(source__endswith="/rebuy").count() == 2


def test_a_cash_out_returns_the_chips_to_the_bank(evening: Any) -> None:
    part = _post(evening, "cashout", player="member1", amount=20)
    rest = _post(evening, "cashout", player="member1")

    assert (part.json()["chips"], rest.json()["chips"]) == (30, 0)
    assert _chips(evening["alice"]) == 0


@pytest.mark.parametrize(("what", "body", "status", "words"), [
    ("rebuy", {"player": "member2"}, 400, "member2 is not checked in"),
    ("cashout", {"player": "member1", "amount": 51}, 400, "holds 50 chips, fewer than 51"),
    ("rebuy", {"player": "nobody"}, 400, "no such player"),
    ("rebuy", {"player": "member1", "amount": 0}, 400, "greater than or equal to 1"),
    ("cashout", {"player": "member1", "request_id": "x"}, 400, "UUID"),
])
def test_a_wrong_request_is_refused_and_changes_nothing(
        evening: Any, what: str, body: dict[str, Any], status: int, words: str) -> None:
    before = JournalEntry.objects.count()

    answer = _post(evening, what, **body)

    assert answer.status_code == status, answer.content
    assert words in str(answer.json())
    assert JournalEntry.objects.count() == before and _chips(evening["alice"]) == 50


def test_no_rebuy_once_the_soiree_is_closed(evening: Any) -> None:
    soiree = evening["soiree"]
    Soiree.objects.filter(pk=soiree.pk).update(status=Soiree.Status.CLOSED)

    answer = _post(evening, "rebuy", player="member1")

    assert (answer.status_code, answer.json()["error"]) == (409, "soiree_state")
    assert _chips(evening["alice"]) == 50


def test_no_cash_out_while_seated_at_a_table_in_play(evening: Any, club: Any) -> None:
    soiree = evening["soiree"]
    services.soiree_open(soiree=soiree, at=timezone.now())

    answer = _post(evening, "cashout", player="member1")

    assert (answer.status_code, answer.json()["error"]) == (409, "soiree_state")
    assert "seated at a table in play" in answer.json()["detail"]


def test_the_tables_show_each_seat_s_chips_as_the_ledger_holds_them(evening: Any) -> None:
    soiree = evening["soiree"]
    services.soiree_open(soiree=soiree, at=timezone.now())

    tables = evening["client"].get(f"/api/soirees/{soiree.pk}/tables").json()["tables"]

    shown = [(t["partie"], s["player"], s["bot"], s["chips"]) for t in tables
             for s in t["seats"]]
    assert shown and any(bot for _, _, bot, _ in shown) and any(not b for _, _, b, _ in shown)
    for partie, player, bot, chips in shown:
        wallet = Account.objects.get(club_key="cercle", kind="wallet", owner__username=player,
                                     ref=f"partie:{partie}" if bot else f"soiree:{soiree.pk}")
        assert chips == wallet.balance
