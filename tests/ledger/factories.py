"""Factories for the ledger tests. Accounts start empty; chips arrive only through services
(a buy-in), so that every test's books balance from the first line."""

from __future__ import annotations

import factory
from django.contrib.auth.models import User

from ledger.models import Account, AccountKind

CLUB = "club-a"


class UserFactory(factory.django.DjangoModelFactory):  # type: ignore[misc]
    class Meta:
        model = User
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"player{n}")
    password = factory.django.Password("pw-player-123")


class WalletFactory(factory.django.DjangoModelFactory):  # type: ignore[misc]
    class Meta:
        model = Account

    kind = AccountKind.WALLET
    club_key = CLUB
    owner = factory.SubFactory(UserFactory)
    name = factory.LazyAttribute(lambda a: f"{a.owner.username} @ {a.club_key}")


class PotFactory(factory.django.DjangoModelFactory):  # type: ignore[misc]
    class Meta:
        model = Account

    kind = AccountKind.POT
    club_key = CLUB
    ref = factory.Sequence(lambda n: f"partie:{n}")
    name = factory.LazyAttribute(lambda a: f"Pot {a.ref} @ {a.club_key}")
