"""A member registers and unregisters himself from the soirée's page and from the lobby (the
button, the page's script posting to the API); and the pages' own 403 and 404, in French unless
the reader asks for English, with a way back to the lobby."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser
from django.contrib.staticfiles import finders
from django.core.exceptions import PermissionDenied
from django.test import Client, RequestFactory, override_settings
from django.utils import timezone, translation
from django.views import defaults

from tournaments.models import Membership, Registration, Soiree
from tournaments.services import (
    checkin,
    club_create,
    membership_add,
    registration_add,
    soiree_cancel,
    soiree_create,
)

pytestmark = pytest.mark.django_db

REGISTER = 'data-action="register"'
UNREGISTER = 'data-action="unregister"'


@pytest.fixture
def club(organiser: Any) -> Any:
    return club_create(name="Cercle des Lumières", slug="lumieres", organiser=organiser)


@pytest.fixture
def alice(club: Any, django_user_model: Any) -> Any:
    user = django_user_model.objects.create_user("alice", password="pw-for-tests")
    membership_add(club=club, user=user, role=Membership.Role.PLAYER)
    return user


@pytest.fixture
def soiree(club: Any) -> Soiree:
    # 18:30 UTC on a winter day is 19:30 in Paris, the club's time zone.
    starts = datetime(2031, 1, 16, 18, 30, tzinfo=UTC)
    return soiree_create(club=club, name="Jeudi de la Comète", starts_at=starts,
                         ends_at=starts + timedelta(hours=3), game="comet", buy_in=40)


@pytest.fixture
def tonight(club: Any) -> Soiree:
    """A soirée of today: the lobby lists it among the day's."""
    now = timezone.now()
    return soiree_create(club=club, name="Ce soir", starts_at=now + timedelta(minutes=30),
                         ends_at=now + timedelta(minutes=90), game="comet", buy_in=40)


def _box(html: str, soiree: Soiree) -> str | None:
    """The viewer's registration box for ``soiree`` (registration_state.html), or None."""
    found = re.search(rf'<div class="my-registration" data-soiree="{soiree.pk}">(.*?)</div>',
                      html, re.S)
    return found.group(1) if found else None


def _soiree_box(client: Client, soiree: Soiree, **headers: str) -> str | None:
    answer = client.get(f"/soirees/{soiree.pk}/", headers=headers)
    assert answer.status_code == 200
    return _box(answer.content.decode(), soiree)


def _lobby_box(client: Client, soiree: Soiree) -> str | None:
    answer = client.get("/")
    assert answer.status_code == 200
    return _box(answer.content.decode(), soiree)


# -- the soirée's page -------------------------------------------------------------------------


def test_a_member_not_registered_is_offered_to_register_while_the_soiree_is_scheduled(
        client: Client, alice: Any, soiree: Soiree) -> None:
    client.force_login(alice)

    box = _soiree_box(client, soiree)
    english = _soiree_box(client, soiree, **{"Accept-Language": "en"})

    assert box is not None and REGISTER in box and "S’inscrire" in box
    assert UNREGISTER not in box
    assert english is not None and ">Register</button>" in english


def test_a_registered_member_not_checked_in_is_offered_to_unregister(
        client: Client, alice: Any, soiree: Soiree) -> None:
    registration_add(soiree=soiree, user=alice)
    client.force_login(alice)

    box = _soiree_box(client, soiree)
    english = _soiree_box(client, soiree, **{"Accept-Language": "en"})

    assert box is not None and UNREGISTER in box and "Se désinscrire" in box
    assert "Inscrit, pas encore pointé" in box and REGISTER not in box
    assert english is not None and ">Unregister</button>" in english
    assert "Registered, not checked in yet" in english


def test_a_checked_in_member_is_told_when_in_the_clubs_time_and_has_no_button(
        client: Client, alice: Any, soiree: Soiree) -> None:
    checkin(soiree=soiree, user=alice, at=datetime(2031, 1, 16, 19, 5, tzinfo=UTC))
    client.force_login(alice)

    box = _soiree_box(client, soiree)
    english = _soiree_box(client, soiree, **{"Accept-Language": "en"})

    assert box is not None and "Inscrit, pointé à 20:05" in box  # Paris, UTC+1
    assert "<button" not in box
    assert english is not None and "Registered, checked in at 20:05" in english


def test_once_the_soiree_is_no_longer_scheduled_the_page_only_says_where_one_stands(
        client: Client, alice: Any, soiree: Soiree, django_user_model: Any,
        club: Any) -> None:
    bruno = django_user_model.objects.create_user("bruno")
    membership_add(club=club, user=bruno, role=Membership.Role.PLAYER)
    registration_add(soiree=soiree, user=bruno)
    soiree_cancel(soiree=soiree, at=timezone.now())

    client.force_login(alice)
    box = _soiree_box(client, soiree)
    assert box is not None and "Pas inscrit" in box and "<button" not in box
    client.force_login(bruno)
    box = _soiree_box(client, soiree)
    assert box is not None and "Inscrit, pas encore pointé" in box and "<button" not in box

    Soiree.objects.filter(pk=soiree.pk).update(status=Soiree.Status.OPEN)
    client.force_login(alice)
    box = _soiree_box(client, soiree)
    assert box is not None and "Pas inscrit" in box and "<button" not in box


def test_staff_who_are_not_members_see_no_registration(
        client: Client, soiree: Soiree, django_user_model: Any) -> None:
    client.force_login(django_user_model.objects.create_user("staff", is_staff=True))

    assert _soiree_box(client, soiree) is None


def test_a_registration_through_the_api_then_the_page_offers_to_unregister_and_back(
        client: Client, alice: Any, soiree: Soiree) -> None:
    client.force_login(alice)
    page = client.get(f"/soirees/{soiree.pk}/").content.decode()
    # The page's script (a static file) posts the button's action to the API, for the
    # page's soirée, with the page's words.
    assert "/api/soirees/{{ soiree.pk }}" not in page
    assert "frontend/soiree.js" in page and f'data-soiree="{soiree.pk}"' in page
    script = Path(finders.find("frontend/soiree.js")).read_text(encoding="utf-8")
    assert "`/api/soirees/${words.soiree}/${button.dataset.action}`" in script
    assert 'data-refused="Refusé : {detail}"' in page

    registered = client.post(f"/api/soirees/{soiree.pk}/register",
                             content_type="application/json")
    assert registered.status_code == 201
    box = _soiree_box(client, soiree)
    assert box is not None and "Se désinscrire" in box and REGISTER not in box

    unregistered = client.post(f"/api/soirees/{soiree.pk}/unregister",
                               content_type="application/json")
    assert unregistered.status_code == 200
    assert not Registration.objects.filter(soiree=soiree, user=alice).exists()
    box = _soiree_box(client, soiree)
    assert box is not None and "S’inscrire" in box and UNREGISTER not in box


# -- the lobby ---------------------------------------------------------------------------------


def test_the_lobby_shows_the_right_button_for_each_soiree(
        client: Client, alice: Any, soiree: Soiree, tonight: Soiree, club: Any) -> None:
    later = soiree_create(club=club, name="Vendredi", starts_at=soiree.starts_at
                          + timedelta(days=1), ends_at=soiree.ends_at + timedelta(days=1),
                          game="comet")
    registration_add(soiree=soiree, user=alice)
    checkin(soiree=later, user=alice, at=datetime(2031, 1, 17, 19, 5, tzinfo=UTC))
    client.force_login(alice)

    html = client.get("/").content.decode()
    today = re.search(r'<section id="soirees".*?</section>', html, re.S)
    assert today is not None

    box = _box(today.group(0), tonight)  # today's, not registered
    assert box is not None and REGISTER in box and "S’inscrire" in box
    box = _box(html, soiree)  # another day, registered
    assert box is not None and UNREGISTER in box and "Se désinscrire" in box
    box = _box(html, later)  # checked in
    assert box is not None and "Inscrit, pointé à 20:05" in box and "<button" not in box
    # The lobby's script posts the actions, with the lobby's words for a refusal.
    assert 'data-refused="Refusé : {detail}"' in html
    assert "frontend/lobby.js" in html


def test_a_registration_through_the_api_then_the_lobby_offers_to_unregister(
        client: Client, alice: Any, tonight: Soiree) -> None:
    client.force_login(alice)
    assert client.post(f"/api/soirees/{tonight.pk}/register",
                       content_type="application/json").status_code == 201

    box = _lobby_box(client, tonight)

    assert box is not None and "Se désinscrire" in box and REGISTER not in box


def test_past_soirees_in_the_lobby_carry_no_registration(
        client: Client, alice: Any, soiree: Soiree) -> None:
    soiree_cancel(soiree=soiree, at=timezone.now())
    client.force_login(alice)

    assert _lobby_box(client, soiree) is None  # among the other soirées, not scheduled


# -- 403 and 404 -------------------------------------------------------------------------------


@override_settings(DEBUG=False)
def test_a_refused_page_says_so_in_french_with_the_way_back_to_the_lobby(
        client: Client, soiree: Soiree, outsider: Any, alice: Any) -> None:
    client.force_login(outsider)  # a member of no club

    answer = client.get(f"/soirees/{soiree.pk}/")
    english = client.get(f"/soirees/{soiree.pk}/", headers={"Accept-Language": "en"})

    assert answer.status_code == 403
    page = answer.content.decode()
    assert '<html lang="fr">' in page
    assert "Cette page ne vous est pas ouverte" in page
    assert "demandez à l’organisateur du club" in page
    assert '<a id="lobby-link" href="/">Retour à l’accueil</a>' in page
    assert 'id="sign-in-link"' not in page  # he is signed in
    assert "403 Forbidden" not in page
    assert english.status_code == 403
    assert "This page is not open to you" in english.content.decode()
    assert "Back to the lobby" in english.content.decode()
    # A player at the organiser's page: the same page.
    client.force_login(alice)
    refused = client.get(f"/soirees/{soiree.pk}/manage")
    assert refused.status_code == 403
    assert "Cette page ne vous est pas ouverte" in refused.content.decode()


def test_a_refused_page_offers_a_signed_out_reader_to_sign_in() -> None:
    request = RequestFactory().get("/clubs/1/members")
    request.user = AnonymousUser()
    with translation.override("fr"):
        answer = defaults.permission_denied(request, PermissionDenied("no"))

    page = answer.content.decode()
    assert answer.status_code == 403
    assert '<a id="sign-in-link" href="/accounts/login/?next=/clubs/1/members">' in page
    assert "Se connecter" in page and 'href="/"' in page


@override_settings(DEBUG=False)
def test_a_page_not_found_says_so_in_french_with_the_way_back_to_the_lobby(
        client: Client, alice: Any) -> None:
    client.force_login(alice)

    answer = client.get("/soirees/999999/")
    english = client.get("/soirees/999999/", headers={"Accept-Language": "en"})

    assert answer.status_code == 404
    page = answer.content.decode()
    assert '<html lang="fr">' in page and "Page introuvable" in page
    assert "Il n’y a rien à cette adresse" in page
    assert '<a id="lobby-link" href="/">Retour à l’accueil</a>' in page
    assert 'id="sign-in-link"' not in page
    assert english.status_code == 404
    assert "Page not found" in english.content.decode()
    assert "Back to the lobby" in english.content.decode()


@override_settings(DEBUG=False)
def test_a_signed_out_reader_of_a_missing_page_is_offered_to_sign_in(client: Client) -> None:
    answer = client.get("/nowhere/at/all")

    assert answer.status_code == 404
    page = answer.content.decode()
    assert "Page introuvable" in page and "<code>/nowhere/at/all</code>" in page
    assert '<a id="sign-in-link" href="/accounts/login/">Se connecter</a>' in page
    assert '<a id="lobby-link" href="/">' in page


@override_settings(DEBUG=False)
def test_the_api_still_answers_its_404_and_403_in_json(
        client: Client, soiree: Soiree, outsider: Any) -> None:
    client.force_login(outsider)

    missing = client.get("/api/nowhere")
    refused = client.get(f"/api/soirees/{soiree.pk}/")

    assert missing.status_code == 404 and missing.json()["error"] == "not_found"
    assert refused.status_code == 403 and "detail" in refused.json()
