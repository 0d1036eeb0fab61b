"""Club staff at the door, in the admin: registrations with their check-in action, and a
player's page with his wallets."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone

from ledger.models import Account
from tournaments import services
from tournaments.models import Registration

pytestmark = pytest.mark.django_db


@pytest.fixture
def soiree(club: Any) -> Any:
    now = timezone.now()
    return services.soiree_create(club=club, name="Jeudi", starts_at=now + timedelta(hours=1),
                                  ends_at=now + timedelta(hours=3), game="comet", buy_in=40)


def test_staff_check_in_the_selected_registrations(admin_client: Any, soiree: Any,
                                                   members: Any) -> None:
    alice, bruno = members(2)
    for user in (alice, bruno):
        services.registration_add(soiree=soiree, user=user)
    chosen = Registration.objects.get(user=alice)

    answer = admin_client.post(reverse("admin:tournaments_registration_changelist"),
                               {"action": "check_in", "_selected_action": [chosen.pk]})

    assert answer.status_code == 302
    assert Registration.objects.get(user=alice).checked_in_at is not None
    assert Registration.objects.get(user=bruno).checked_in_at is None
    assert Account.objects.get(club_key="cercle", owner=alice).balance == 40


def test_a_soiree_checks_in_everyone_registered_at_once(admin_client: Any, soiree: Any,
                                                       members: Any) -> None:
    for user in members(3):
        services.registration_add(soiree=soiree, user=user)

    admin_client.post(reverse("admin:tournaments_soiree_changelist"),
                      {"action": "check_in_everyone", "_selected_action": [soiree.pk]})

    assert not Registration.objects.filter(soiree=soiree, checked_in_at__isnull=True).exists()


def test_a_player_s_page_shows_his_wallets(admin_client: Any, soiree: Any,
                                           members: Any) -> None:
    (alice,) = members(1)
    services.checkin(soiree=soiree, user=alice, at=timezone.now())
    wallet = Account.objects.get(club_key="cercle", owner=alice)

    page = admin_client.get(reverse("admin:auth_user_change", args=[alice.pk])).content.decode()

    assert "cercle" in page and ">40<" in page.replace(" ", "")
    assert f"postings__account__id__exact={wallet.pk}" in page
