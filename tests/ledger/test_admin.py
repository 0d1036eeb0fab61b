"""The ledger admin is read-only; chips are granted or withdrawn only through an entry."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client

from ledger.models import Account, JournalEntry
from tests.ledger.factories import UserFactory

pytestmark = pytest.mark.django_db

ACCOUNTS = "/admin/ledger/account/"
ENTRIES = "/admin/ledger/journalentry/"


@pytest.fixture
def admin_client_for() -> object:
    def make(user: User) -> Client:
        client = Client()
        client.force_login(user)
        return client

    return make


@pytest.fixture
def cashier() -> User:
    """Staff who may view the ledger and grant chips."""
    user = UserFactory(username="cass", is_staff=True)
    codenames = ["view_account", "view_journalentry", "view_posting", "grant_chips"]
    user.user_permissions.set(
        Permission.objects.filter(content_type__app_label="ledger", codename__in=codenames)
    )
    return user


@pytest.fixture
def viewer() -> User:
    """Staff who may only view the ledger."""
    user = UserFactory(username="vic", is_staff=True)
    user.user_permissions.set(
        Permission.objects.filter(
            content_type__app_label="ledger", codename__in=["view_account", "view_journalentry"]
        )
    )
    return user


def test_accounts_are_listed_with_balances_and_cannot_be_edited(
    admin_client_for, cashier: User, wallet_a: Account, fund
) -> None:
    fund(wallet_a, 120)
    client = admin_client_for(cashier)
    listing = client.get(ACCOUNTS)
    assert (
        listing.status_code == 200
        and b"alice @ club-a" in listing.content
        and b"120" in listing.content
    )
    page = client.get(f"{ACCOUNTS}{wallet_a.pk}/change/")
    assert page.status_code == 200 and b'name="balance"' not in page.content
    client.post(f"{ACCOUNTS}{wallet_a.pk}/change/", {"name": "x", "balance": "999999"})
    assert Account.objects.get(pk=wallet_a.pk).balance == 120
    assert client.get(f"{ACCOUNTS}add/").status_code == 403
    assert client.post(f"{ACCOUNTS}{wallet_a.pk}/delete/", {"post": "yes"}).status_code == 403


def test_the_grant_action_posts_a_bank_to_wallet_entry_with_reason_and_staff_name(
    admin_client_for, cashier: User, wallet_a: Account, wallet_b: Account
) -> None:
    client = admin_client_for(cashier)
    form = client.post(
        ACCOUNTS,
        {"action": "grant_or_withdraw_chips", "_selected_action": [wallet_a.pk, wallet_b.pk]},
    )
    assert form.status_code == 200 and "Accorder ou retirer des jetons" in form.content.decode()
    token = form.context["form"].initial["token"]
    data = {
        "action": "grant_or_withdraw_chips",
        "_selected_action": [wallet_a.pk, wallet_b.pk],
        "apply": "1",
        "direction": "grant",
        "amount": "150",
        "reason": "season prize",
        "token": token,
    }
    assert client.post(ACCOUNTS, data).status_code == 302
    assert client.post(ACCOUNTS, data).status_code == 302  # a double submit posts once
    assert [Account.objects.get(pk=w.pk).balance for w in (wallet_a, wallet_b)] == [150, 150]
    memos = set(JournalEntry.objects.values_list("memo", flat=True))
    assert memos == {"Grant of 150 chips by cass: season prize"}


def test_withdrawing_more_than_a_player_holds_is_refused_with_a_message(
    admin_client_for, cashier: User, wallet_a: Account, fund
) -> None:
    fund(wallet_a, 10)
    client = admin_client_for(cashier)
    data = {
        "action": "grant_or_withdraw_chips",
        "_selected_action": [wallet_a.pk],
        "apply": "1",
        "direction": "withdraw",
        "amount": "11",
        "reason": "mistake",
        "token": "t1",
    }
    answer = client.post(ACCOUNTS, data, follow=True)
    # The admin speaks French by default.
    assert "pas assez de jetons : il en a 10, cette écriture en prend 11" in answer.content.decode()
    assert Account.objects.get(pk=wallet_a.pk).balance == 10


def test_chips_can_be_granted_to_a_player_without_a_wallet_yet(
    admin_client_for, cashier: User, carol: User
) -> None:
    client = admin_client_for(cashier)
    assert client.get(f"{ACCOUNTS}grant/").status_code == 200
    answer = client.post(
        f"{ACCOUNTS}grant/",
        {
            "player": carol.pk,
            "club_key": "casual",
            "direction": "grant",
            "amount": "75",
            "reason": "welcome",
            "token": "t2",
        },
    )
    assert answer.status_code == 302
    assert Account.objects.get(owner=carol, club_key="casual").balance == 75


def test_staff_without_the_grant_permission_cannot_grant(
    admin_client_for, viewer: User, wallet_a: Account
) -> None:
    client = admin_client_for(viewer)
    assert client.get(f"{ACCOUNTS}grant/").status_code == 403
    data = {
        "action": "grant_or_withdraw_chips",
        "_selected_action": [wallet_a.pk],
        "apply": "1",
        "direction": "grant",
        "amount": "5",
        "reason": "r",
        "token": "t3",
    }
    client.post(ACCOUNTS, data)
    assert Account.objects.get(pk=wallet_a.pk).balance == 0


def test_entries_are_read_only_and_searchable_by_player_source_and_key(
    admin_client_for, cashier: User, wallet_a: Account, wallet_b: Account, key
) -> None:
    from ledger import services

    services.buy_in(
        wallet=wallet_a, amount=10, source="soiree:3/buy-in", idempotency_key="key-alice"
    )
    services.buy_in(wallet=wallet_b, amount=20, source="soiree:4/buy-in", idempotency_key="key-bob")
    client = admin_client_for(cashier)

    def found(query: str) -> set[str]:
        page = client.get(ENTRIES, {"q": query})
        return {e.idempotency_key for e in page.context["cl"].result_list}

    assert found("alice") == {"key-alice"}
    assert found("soiree:4") == {"key-bob"}
    assert found("key-bob") == {"key-bob"}
    entry = JournalEntry.objects.get(idempotency_key="key-alice")
    page = client.get(f"{ENTRIES}{entry.pk}/change/")
    assert page.status_code == 200 and b"alice @ club-a" in page.content
    assert client.post(f"{ENTRIES}{entry.pk}/delete/", {"post": "yes"}).status_code == 403
    by_account = client.get(ENTRIES, {"postings__account__id__exact": wallet_b.pk})
    assert {e.idempotency_key for e in by_account.context["cl"].result_list} == {"key-bob"}
