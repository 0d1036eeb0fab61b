"""A member's calendar secret: one per member and club whatever his roles, made once, and
replaced (never reused) when he revokes it."""

from __future__ import annotations

from typing import Any

import pytest

from tournaments.calendar import (
    calendar_club,
    calendar_clubs,
    calendar_token_get,
    calendar_token_revoke,
)
from tournaments.errors import NotMember
from tournaments.models import Club, Membership
from tournaments.services import club_create, membership_add

pytestmark = pytest.mark.django_db


def test_the_secret_is_made_on_first_use_and_the_same_afterwards(
        club: Club, organiser: Any) -> None:
    assert not Membership.objects.filter(calendar_token__isnull=False).exists()

    token = calendar_token_get(club=club, user=organiser)

    assert len(token) >= 43
    assert calendar_token_get(club=club, user=organiser) == token
    assert calendar_club(token=token) == club


def test_a_member_with_several_roles_has_one_secret_on_his_first_membership(
        club: Club, organiser: Any) -> None:
    membership_add(club=club, user=organiser, role=Membership.Role.PLAYER)
    membership_add(club=club, user=organiser, role=Membership.Role.AUDITOR)

    token = calendar_token_get(club=club, user=organiser)

    rows = Membership.objects.filter(club=club, user=organiser).order_by("pk")
    assert [row.calendar_token for row in rows] == [token, None, None]


def test_each_club_and_each_member_has_a_secret_of_his_own(
        club: Club, organiser: Any, outsider: Any) -> None:
    other = club_create(name="Les Amis", slug="amis", organiser=organiser)
    membership_add(club=club, user=outsider, role=Membership.Role.PLAYER)

    tokens = {calendar_token_get(club=club, user=organiser),
              calendar_token_get(club=other, user=organiser),
              calendar_token_get(club=club, user=outsider)}

    assert len(tokens) == 3
    assert list(calendar_clubs(user=organiser)) == [club, other]


def test_revoking_makes_a_new_secret_and_the_old_one_opens_nothing(
        club: Club, organiser: Any) -> None:
    old = calendar_token_get(club=club, user=organiser)

    new = calendar_token_revoke(club=club, user=organiser)

    assert new != old
    assert calendar_club(token=old) is None
    assert calendar_club(token=new) == club
    assert calendar_token_get(club=club, user=organiser) == new


def test_one_who_is_not_a_member_has_no_secret_to_get_or_revoke(
        club: Club, outsider: Any) -> None:
    with pytest.raises(NotMember):
        calendar_token_get(club=club, user=outsider)
    with pytest.raises(NotMember):
        calendar_token_revoke(club=club, user=outsider)
    assert list(calendar_clubs(user=outsider)) == []


def test_an_unknown_secret_opens_nothing(club: Club, organiser: Any) -> None:
    calendar_token_get(club=club, user=organiser)

    assert calendar_club(token="not-a-secret") is None
    assert calendar_club(token="") is None


def test_a_deactivated_member_s_secret_opens_nothing(club: Club, organiser: Any) -> None:
    token = calendar_token_get(club=club, user=organiser)

    organiser.is_active = False
    organiser.save(update_fields=["is_active"])

    assert calendar_club(token=token) is None
