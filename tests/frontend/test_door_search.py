"""The door's member search (frontend/members.py): the manage page's late-arrival box asks it
for the club's members whose username or name holds what the organiser typed, capitals and
accents aside; the club's organisers (and staff) only, ten at most, a long query refused."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.test import Client

from tournaments.models import Membership, Soiree
from tournaments.services import club_create, membership_add, soiree_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def club(organiser: Any) -> Any:
    return club_create(name="Cercle des Lumières", slug="lumieres", organiser=organiser)


@pytest.fixture
def people(club: Any, django_user_model: Any) -> dict[str, Any]:
    """Members of the club with names; and Héléna Fourneau, of another club only."""
    make = django_user_model.objects.create_user
    found = {
        "Helene": make("Helene", first_name="Hélène", last_name="Fournier"),
        "bruno": make("bruno", first_name="Bruno", last_name="Lefèvre"),
        "zoe": make("zoe", first_name="Zoé", last_name="Ébert"),
        "denis": make("denis"),  # no name: his username is his name
    }
    for user in found.values():
        membership_add(club=club, user=user, role=Membership.Role.PLAYER)
    # An auditor too: one member with two roles is named once.
    membership_add(club=club, user=found["bruno"], role=Membership.Role.AUDITOR)
    elsewhere = club_create(name="Club Voisin", slug="voisin",
                            organiser=make("victor", first_name="Victor"))
    found["helena"] = make("helena", first_name="Héléna", last_name="Fourneau")
    membership_add(club=elsewhere, user=found["helena"], role=Membership.Role.PLAYER)
    return found


@pytest.fixture
def soiree(club: Any) -> Soiree:
    starts = datetime(2031, 1, 16, 18, 30, tzinfo=UTC)
    return soiree_create(club=club, name="Jeudi de la Comète", starts_at=starts,
                         ends_at=starts + timedelta(hours=3), game="comet", buy_in=40)


def _search(client: Client, soiree: Soiree, query: str, **headers: str) -> Any:
    return client.get(f"/soirees/{soiree.pk}/members", {"q": query}, headers=headers)


def _usernames(answer: Any) -> list[str]:
    assert answer.status_code == 200, answer.content
    return [m["username"] for m in answer.json()["members"]]


@pytest.mark.parametrize("query", ["helene", "HELENE", "Hélène", "FOURN", "fournier",
                                   "hélène four", "Fournier Helene", "  hel  "])
def test_a_member_is_found_by_his_username_or_name_capitals_and_accents_aside(
        client: Client, organiser: Any, people: dict[str, Any], soiree: Soiree,
        query: str) -> None:
    client.force_login(organiser)

    answer = _search(client, soiree, query)

    assert answer.status_code == 200
    assert answer["Content-Type"] == "application/json"
    assert answer.json()["members"] == [{"username": "Helene", "name": "Hélène Fournier"}]


def test_letters_with_accents_match_their_plain_letters_and_back(
        client: Client, organiser: Any, people: dict[str, Any], soiree: Soiree) -> None:
    client.force_login(organiser)

    assert _usernames(_search(client, soiree, "lefevre")) == ["bruno"]
    assert _usernames(_search(client, soiree, "LEFÈVRE")) == ["bruno"]
    assert _usernames(_search(client, soiree, "zoe")) == ["zoe"]
    assert _usernames(_search(client, soiree, "EBERT")) == ["zoe"]
    assert _usernames(_search(client, soiree, "zoé ébert")) == ["zoe"]
    assert _usernames(_search(client, soiree, "DEN")) == ["denis"]
    assert _search(client, soiree, "den").json()["members"] == [
        {"username": "denis", "name": "denis"}]
    assert _usernames(_search(client, soiree, "nobody")) == []
    assert _usernames(_search(client, soiree, "")) == []
    assert _usernames(_search(client, soiree, "   ")) == []


def test_a_member_of_another_club_never_appears(
        client: Client, organiser: Any, people: dict[str, Any], soiree: Soiree) -> None:
    client.force_login(organiser)

    for query in ("helena", "Héléna", "fourneau", "fourn", "hél"):
        assert "helena" not in _usernames(_search(client, soiree, query)), query
    assert _usernames(_search(client, soiree, "fourn")) == ["Helene"]
    assert _usernames(_search(client, soiree, "victor")) == []


def test_the_one_member_whose_whole_name_or_username_is_typed_is_named_exactly(
        client: Client, organiser: Any, people: dict[str, Any], soiree: Soiree,
        club: Any, django_user_model: Any) -> None:
    client.force_login(organiser)

    assert _search(client, soiree, "helene fournier").json()["exact"] == "Helene"
    assert _search(client, soiree, "HELENE").json()["exact"] == "Helene"  # his username
    assert _search(client, soiree, "Lefèvre").json()["exact"] is None  # a last name only
    assert _search(client, soiree, "fourn").json()["exact"] is None
    # Two members of the same name: neither is named.
    twin = django_user_model.objects.create_user("helene2", first_name="Hélène",
                                                 last_name="Fournier")
    membership_add(club=club, user=twin, role=Membership.Role.PLAYER)
    answer = _search(client, soiree, "Hélène Fournier").json()
    assert answer["exact"] is None
    assert [m["username"] for m in answer["members"]] == ["Helene", "helene2"]


def test_at_most_ten_members_the_best_matches_first(
        client: Client, organiser: Any, club: Any, soiree: Soiree,
        django_user_model: Any) -> None:
    for i in range(15):
        user = django_user_model.objects.create_user(f"joueur{i:02}", last_name="Martin")
        membership_add(club=club, user=user, role=Membership.Role.PLAYER)
    # A name that holds the query but does not start with it comes after those that do.
    later = django_user_model.objects.create_user("aaa", first_name="Annemartine")
    membership_add(club=club, user=later, role=Membership.Role.PLAYER)
    client.force_login(organiser)

    assert _usernames(_search(client, soiree, "joueur")) == [f"joueur{i:02}" for i in range(10)]
    found = _usernames(_search(client, soiree, "martin"))
    assert len(found) == 10 and "aaa" not in found
    assert _usernames(_search(client, soiree, "martine")) == ["aaa"]


def test_a_query_over_100_characters_is_refused_in_the_readers_language(
        client: Client, organiser: Any, people: dict[str, Any], soiree: Soiree) -> None:
    client.force_login(organiser)

    french = _search(client, soiree, "h" * 300)
    english = _search(client, soiree, "h" * 300, **{"Accept-Language": "en"})

    assert french.status_code == 400
    assert french.json() == {"error": "query_too_long",
                             "detail": "La recherche fait au plus 100 caractères, pas 300."}
    assert english.status_code == 400
    assert english.json()["detail"] == "A search is at most 100 characters long, not 300."
    # 100 is searched.
    assert _search(client, soiree, "h" * 100).status_code == 200


def test_only_the_clubs_organisers_and_staff_may_search(
        client: Client, organiser: Any, outsider: Any, people: dict[str, Any],
        soiree: Soiree, django_user_model: Any) -> None:
    assert _search(client, soiree, "hel").status_code == 302  # signed out: to the sign-in
    victor = django_user_model.objects.get(username="victor")  # the other club's organiser
    for user in (people["bruno"], outsider, victor):
        client.force_login(user)
        refused = _search(client, soiree, "hel")
        assert refused.status_code == 403, user
        assert b'"members"' not in refused.content and b"Fournier" not in refused.content
    # Hélène herself, a player, is refused too (the page's header names her, as every page).
    client.force_login(people["Helene"])
    refused = _search(client, soiree, "hel")
    assert refused.status_code == 403 and b'"members"' not in refused.content
    staff = django_user_model.objects.create_user("staff", is_staff=True)
    client.force_login(staff)
    assert _usernames(_search(client, soiree, "hel")) == ["Helene"]
    client.force_login(organiser)
    assert client.get("/soirees/999999/members?q=hel").status_code == 404
    assert client.post(f"/soirees/{soiree.pk}/members?q=hel").status_code == 405


def test_the_manage_page_offers_the_search_in_the_late_arrival_box(
        client: Client, organiser: Any, soiree: Soiree) -> None:
    client.force_login(organiser)

    page = client.get(f"/soirees/{soiree.pk}/manage").content.decode()

    assert f'data-search="/soirees/{soiree.pk}/members"' in page
    assert 'role="combobox"' in page and 'aria-controls="late-player-list"' in page
    assert 'id="late-player-list"' in page and 'role="listbox"' in page
    assert "Le nom ou le nom d’utilisateur d’un membre" in page
    assert "Membres trouvés : {n}" in page
