"""Ledger test set-up: a club with its bank, three players' wallets, a pot, and personas for
permissions (a player, an organiser of the club, an outsider)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from django.contrib.auth.models import Group, User
from django.db import connection

from ledger import services
from ledger.models import Account
from ledger.permissions import organiser_group_name
from tests.ledger.factories import CLUB, PotFactory, UserFactory, WalletFactory

_keys = itertools.count()


@pytest.fixture
def key() -> Callable[[], str]:
    """A fresh idempotency key each call."""
    return lambda: f"test-key-{next(_keys)}"


@pytest.fixture
def alice() -> User:
    return UserFactory(username="alice")


@pytest.fixture
def bob() -> User:
    return UserFactory(username="bob")


@pytest.fixture
def carol() -> User:
    return UserFactory(username="carol")


@pytest.fixture
def bank() -> Account:
    return services.bank_get_or_create(club_key=CLUB)


@pytest.fixture
def wallet_a(alice: User) -> Account:
    return WalletFactory(owner=alice)


@pytest.fixture
def wallet_b(bob: User) -> Account:
    return WalletFactory(owner=bob)


@pytest.fixture
def wallet_c(carol: User) -> Account:
    return WalletFactory(owner=carol)


@pytest.fixture
def pot() -> Account:
    return PotFactory(ref="partie:1")


@pytest.fixture
def fund(key: Callable[[], str]) -> Callable[[Account, int], Account]:
    """Buy ``amount`` chips into a wallet from its club's bank."""

    def fund(wallet: Account, amount: int) -> Account:
        services.buy_in(wallet=wallet, amount=amount, source="test:fund", idempotency_key=key())
        return wallet

    return fund


@pytest.fixture
def club_organiser() -> User:
    user = UserFactory(username="olivia")
    user.groups.add(Group.objects.get_or_create(name=organiser_group_name(CLUB))[0])
    return user


@pytest.fixture
def staff() -> User:
    return UserFactory(username="stan", is_staff=True)


@pytest.fixture
def stranger() -> User:
    return UserFactory(username="sam")


@contextmanager
def triggers_off(*tables: str) -> Iterator[None]:
    """Suspend the ledger's PostgreSQL triggers inside the test's transaction, to plant broken
    books (the test's rollback would restore them too). SQLite has none to suspend."""
    if connection.vendor != "postgresql":
        yield
        return
    with connection.cursor() as cursor:
        # A table with deferred checks pending cannot be altered: run them first.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")
        for table in tables:
            cursor.execute(f"ALTER TABLE {table} DISABLE TRIGGER USER")
        yield
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute("SET CONSTRAINTS ALL DEFERRED")
        for table in tables:
            cursor.execute(f"ALTER TABLE {table} ENABLE TRIGGER USER")


def check_deferred_constraints() -> None:
    """Fire the checks PostgreSQL defers to commit (the test's transaction never commits)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            cursor.execute("SET CONSTRAINTS ALL DEFERRED")
