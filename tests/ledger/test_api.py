"""The ledger API: a player reads his own chips, an organiser his club's books, nobody else
anything; client mistakes are 4xx, never 500."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from rest_framework.test import APIClient

from config.exceptions import exception_handler
from ledger import permissions, services
from ledger.exceptions import InsufficientChips, InvalidEntry
from ledger.models import Account

pytestmark = pytest.mark.django_db

Key = Callable[[], str]
BASE = "/api/ledger"


def client_for(user: User | None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client


@pytest.fixture
def books(wallet_a: Account, wallet_b: Account, pot: Account, key: Key) -> dict[str, Any]:
    start = timezone.now()
    services.buy_in(wallet=wallet_a, amount=100, source="soiree:1/buy-in", idempotency_key=key())
    services.buy_in(wallet=wallet_b, amount=100, source="soiree:1/buy-in", idempotency_key=key())
    services.transfer(
        payer=wallet_a,
        payee=pot,
        amount=40,
        memo="ante",
        source="soiree:1/hand:1",
        idempotency_key=key(),
    )
    services.transfer(
        payer=pot,
        payee=wallet_b,
        amount=40,
        memo="won",
        source="soiree:1/hand:1",
        idempotency_key=key(),
    )
    return {
        "since": start.isoformat(),
        "until": (timezone.now() + timedelta(seconds=1)).isoformat(),
    }


def test_a_player_reads_his_wallets_balance_and_statement(
    alice: User, books: dict[str, Any]
) -> None:
    client = client_for(alice)
    wallets = client.get(f"{BASE}/me/wallets/").json()
    assert [(w["club_key"], w["balance"], w["owner"]) for w in wallets] == [("club-a", 60, "alice")]
    assert client.get(f"{BASE}/me/wallets/club-a/").json()["balance"] == 60
    statement = client.get(f"{BASE}/me/wallets/club-a/statement/").json()
    assert statement["count"] == 2
    assert [
        (line["amount"], line["balance_after"], line["source"]) for line in statement["results"]
    ] == [
        (100, 100, "soiree:1/buy-in"),
        (-40, 60, "soiree:1/hand:1"),
    ]


def test_a_player_reads_his_balance_as_of_a_past_time(alice: User, books: dict[str, Any]) -> None:
    answer = client_for(alice).get(f"{BASE}/me/wallets/club-a/", {"at": books["since"]})
    assert answer.status_code == 200 and answer.json()["balance"] == 0


def test_a_player_without_a_wallet_in_a_club_gets_404(alice: User, books: dict[str, Any]) -> None:
    assert client_for(alice).get(f"{BASE}/me/wallets/club-z/statement/").status_code == 404


@pytest.mark.parametrize(
    "path",
    ["accounts/", "trial-balance/", "settlement/?since=2026-01-01T00:00Z&until=2027-01-01T00:00Z"],
)
def test_a_player_cannot_read_the_clubs_books(
    alice: User, books: dict[str, Any], path: str
) -> None:
    answer = client_for(alice).get(f"{BASE}/clubs/club-a/{path}")
    assert answer.status_code == 403
    assert "organisers" in answer.json()["detail"]


def test_a_player_cannot_read_another_players_statement(
    alice: User, wallet_b: Account, books: dict[str, Any]
) -> None:
    client = client_for(alice)
    assert client.get(f"{BASE}/clubs/club-a/accounts/{wallet_b.pk}/statement/").status_code == 403


def test_an_outsider_reads_nothing(stranger: User, books: dict[str, Any]) -> None:
    client = client_for(stranger)
    assert client.get(f"{BASE}/me/wallets/").json() == []
    assert client.get(f"{BASE}/clubs/club-a/accounts/").status_code == 403
    assert client_for(None).get(f"{BASE}/me/wallets/").status_code in (401, 403)
    assert client_for(None).get(f"{BASE}/clubs/club-a/trial-balance/").status_code in (401, 403)


def test_an_organiser_reads_his_clubs_accounts_and_statements(
    club_organiser: User, wallet_b: Account, books: dict[str, Any]
) -> None:
    client = client_for(club_organiser)
    accounts = client.get(f"{BASE}/clubs/club-a/accounts/").json()["results"]
    assert {a["name"]: a["balance"] for a in accounts} == {
        "Bank of club-a": -200,
        "Pot partie:1 @ club-a": 0,
        "alice @ club-a": 60,
        "bob @ club-a": 140,
    }
    wallets = client.get(f"{BASE}/clubs/club-a/accounts/", {"kind": "wallet"}).json()["results"]
    assert len(wallets) == 2
    statement = client.get(f"{BASE}/clubs/club-a/accounts/{wallet_b.pk}/statement/").json()
    assert [line["balance_after"] for line in statement["results"]] == [100, 140]
    assert client.get(f"{BASE}/clubs/club-a/accounts/{wallet_b.pk}/").json()["balance"] == 140


def test_an_organiser_reads_the_trial_balance_and_a_settlement(
    club_organiser: User, books: dict[str, Any]
) -> None:
    client = client_for(club_organiser)
    trial = client.get(f"{BASE}/clubs/club-a/trial-balance/").json()
    assert trial["total"] == 0 and len(trial["accounts"]) == 4
    settlement = client.get(
        f"{BASE}/clubs/club-a/settlement/", {**books, "source_prefix": "soiree:1/"}
    ).json()
    assert [(n["account"]["name"], n["net"]) for n in settlement["nets"]] == [
        ("bob @ club-a", 40),
        ("alice @ club-a", -40),
    ]
    assert [
        (t["payer"]["name"], t["payee"]["name"], t["amount"]) for t in settlement["transfers"]
    ] == [("alice @ club-a", "bob @ club-a", 40)]


def test_an_organiser_of_one_club_reads_no_other(
    club_organiser: User, books: dict[str, Any]
) -> None:
    assert client_for(club_organiser).get(f"{BASE}/clubs/club-b/trial-balance/").status_code == 403


def test_staff_organise_every_club(staff: User, books: dict[str, Any]) -> None:
    assert client_for(staff).get(f"{BASE}/clubs/club-a/trial-balance/").status_code == 200


def test_an_account_of_another_club_is_not_found_under_this_one(
    club_organiser: User, books: dict[str, Any], key: Key
) -> None:
    elsewhere = services.bank_get_or_create(club_key="club-b")
    answer = client_for(club_organiser).get(
        f"{BASE}/clubs/club-a/accounts/{elsewhere.pk}/statement/"
    )
    assert answer.status_code == 404


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"since": "yesterday", "until": "2027-01-01T00:00Z"},
        {"since": "2027-01-01T00:00Z", "until": "2026-01-01T00:00Z"},
    ],
)
def test_a_bad_settlement_query_is_a_400(
    club_organiser: User, books: dict[str, Any], params: dict[str, str]
) -> None:
    assert (
        client_for(club_organiser).get(f"{BASE}/clubs/club-a/settlement/", params).status_code
        == 400
    )


def test_bad_query_parameters_are_400s(
    alice: User, club_organiser: User, books: dict[str, Any]
) -> None:
    assert client_for(alice).get(f"{BASE}/me/wallets/club-a/", {"at": "soon"}).status_code == 400
    assert (
        client_for(alice).get(f"{BASE}/me/wallets/club-a/statement/", {"until": "x"}).status_code
        == 400
    )
    vault = client_for(club_organiser).get(f"{BASE}/clubs/club-a/accounts/", {"kind": "vault"})
    assert vault.status_code == 400
    # The project's one answer to a client's mistake, as every other API gives it.
    assert vault.json()["error"] == "invalid" and "kind" in vault.json()["detail"]


def test_domain_errors_become_4xx_answers() -> None:
    refused = exception_handler(
        InsufficientChips("Not enough chips", account_id=1, balance=0, needed=5), {}
    )
    assert refused is not None and refused.status_code == 409
    assert refused.data == {"error": "insufficient_chips", "detail": "Not enough chips"}
    malformed = exception_handler(InvalidEntry("Two postings"), {})
    assert malformed is not None and malformed.status_code == 400


def test_the_schema_documents_the_ledger_api(staff: User) -> None:
    schema = client_for(staff).get("/api/schema/")
    assert schema.status_code == 200
    assert b"/api/ledger/clubs/{club_key}/settlement/" in schema.content


def test_a_registered_rule_can_make_a_member_an_organiser(
    stranger: User, books: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """How tournaments maps club memberships onto the ledger's organiser check."""
    monkeypatch.setattr(permissions, "_extra_checks", [])
    permissions.register_organiser_check(
        lambda user, club: user.pk == stranger.pk and club == "club-a"
    )
    assert client_for(stranger).get(f"{BASE}/clubs/club-a/trial-balance/").status_code == 200
    assert client_for(stranger).get(f"{BASE}/clubs/club-b/trial-balance/").status_code == 403


def test_the_ledger_refuses_a_time_outside_the_range_by_name(club_organiser: User) -> None:
    client = client_for(club_organiser)
    answer = client.get(f"{BASE}/clubs/club-a/trial-balance/?at=0075-03-12T14:18:40Z")
    assert answer.status_code == 400
    assert answer.json()["at"] == ["must be from 1970-01-01T00:00:00Z up to 2999-12-31T23:59:59Z."]
    assert client.get(f"{BASE}/clubs/club-a/trial-balance/?at=2026-12-01T20:00:00Z"
                      ).status_code == 200


def test_the_ledger_refuses_an_empty_time_and_a_bad_page(club_organiser: User) -> None:
    client = client_for(club_organiser)
    empty = client.get(f"{BASE}/clubs/club-a/trial-balance/?at=")
    assert empty.status_code == 400
    assert empty.json()["at"] == ["is empty: give a value, or leave the parameter out"]
    assert client.get(f"{BASE}/clubs/club-a/accounts/?kind=").json()["kind"] == [
        "is empty: give a value, or leave the parameter out"]
    for query, message in (("offset=x", "offset: must be a whole number, not 'x'"),
                           ("offset=-1", "offset: must be 0 or more, not -1"),
                           ("limit=0", "limit: must be from 1 to 1000, not 0"),
                           ("limit=5000", "limit: must be from 1 to 1000, not 5000")):
        answer = client.get(f"{BASE}/clubs/club-a/accounts/?{query}")
        assert answer.status_code == 400, query
        assert answer.json()["detail"] == f"invalid request: {message}"
    assert client.get(f"{BASE}/clubs/club-a/accounts/?limit=2&offset=1").status_code == 200
