"""The organiser's pages: the form that creates a soirée and the page that runs it at the door,
for the club's organisers and staff only; in French unless the reader asks for English."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from tournaments.models import Membership, Soiree
from tournaments.services import (
    checkin,
    club_create,
    membership_add,
    registration_add,
    soiree_close_now,
    soiree_create,
    soiree_open,
)

pytestmark = pytest.mark.django_db

PARIS = ZoneInfo("Europe/Paris")


def _section(html: str, name: str) -> str:
    found = re.search(rf'<section id="{name}".*?</section>', html, re.S)
    assert found is not None, f"no section {name!r}"
    return found.group(0)


@pytest.fixture
def club(organiser: Any) -> Any:
    return club_create(name="Cercle des Lumières", slug="lumieres", organiser=organiser)


@pytest.fixture
def members(club: Any, django_user_model: Any) -> list[Any]:
    people = [django_user_model.objects.create_user(name, password="pw-for-tests")
              for name in ("alice", "bruno", "chloe", "denis")]
    for person in people:
        membership_add(club=club, user=person, role=Membership.Role.PLAYER)
    return people


@pytest.fixture
def soiree(club: Any) -> Soiree:
    # 18:30 UTC on a winter day is 19:30 in Paris.
    starts = datetime(2031, 1, 16, 18, 30, tzinfo=UTC)
    return soiree_create(club=club, name="Jeudi de la Comète", starts_at=starts,
                         ends_at=starts + timedelta(hours=3), game="comet", buy_in=40,
                         move_timeout=timedelta(seconds=45), deals_per_partie=6)


def test_the_new_soiree_form_offers_only_the_clubs_the_user_organises(
        client: Any, organiser: Any, outsider: Any, club: Any) -> None:
    club_create(name="Autre Cercle", slug="autre", organiser=organiser)
    elsewhere = club_create(name="Club Voisin", slug="voisin", organiser=outsider)
    membership_add(club=elsewhere, user=organiser, role=Membership.Role.PLAYER)
    client.force_login(organiser)

    page = client.get("/soirees/new").content.decode()

    assert '<option value="lumieres">Cercle des Lumières</option>' in page
    assert '<option value="autre">Autre Cercle</option>' in page
    # a mere player there
    assert 'value="voisin"' not in page
    assert "Nouvelle soirée" in page and "Créer la soirée" in page
    assert "Europe/Paris" in page
    assert 'data-manage="/soirees/0/manage"' in page


def test_the_new_soiree_form_starts_at_the_next_full_hour_of_the_club(
        client: Any, organiser: Any, club: Any, time_machine: Any) -> None:
    time_machine.move_to(datetime(2031, 7, 1, 17, 20, tzinfo=UTC))  # 19:20 in Paris
    client.force_login(organiser)

    page = client.get("/soirees/new").content.decode()

    assert 'name="starts_at" type="datetime-local" value="2031-07-01T20:00"' in page
    assert 'name="ends_at" type="datetime-local" value="2031-07-01T23:00"' in page


def test_the_time_the_form_sends_without_offset_is_the_club_s(
        client: Any, organiser: Any, club: Any) -> None:
    """The form's contract with the API: a datetime-local value is read in the club's zone."""
    client.force_login(organiser)

    answer = client.post("/api/soirees/", {
        "club": "lumieres", "name": "Mardi", "game": "commere",
        "starts_at": "2031-01-14T20:00", "ends_at": "2031-01-14T23:30",
        "move_timeout": 20, "buy_in": 30, "deals_per_partie": None, "bots_allowed": False,
    }, content_type="application/json")

    assert answer.status_code == 201, answer.content
    made = Soiree.objects.get(pk=answer.json()["id"])
    assert made.starts_at == datetime(2031, 1, 14, 20, 0, tzinfo=PARIS)
    assert made.ends_at.astimezone(UTC) == datetime(2031, 1, 14, 22, 30, tzinfo=UTC)
    assert (made.move_timeout, made.buy_in, made.bots_allowed) == (timedelta(seconds=20), 30,
                                                                    False)


def test_who_may_open_the_new_soiree_form(client: Any, organiser: Any, outsider: Any,
                                          members: list[Any]) -> None:
    assert client.get("/soirees/new")["Location"].startswith("/accounts/login/")
    client.force_login(members[0])
    assert client.get("/soirees/new").status_code == 403
    client.force_login(outsider)
    assert client.get("/soirees/new").status_code == 403
    outsider.is_staff = True
    outsider.save(update_fields=["is_staff"])
    assert client.get("/soirees/new").status_code == 200


def test_the_lobby_links_the_form_for_organisers_only(client: Any, organiser: Any,
                                                     members: list[Any]) -> None:
    client.force_login(organiser)
    assert 'href="/soirees/new"' in _section(client.get("/").content.decode(), "soirees")
    client.force_login(members[0])
    assert "/soirees/new" not in client.get("/").content.decode()


def test_the_manage_page_is_the_organisers_and_staff_s(
        client: Any, organiser: Any, outsider: Any, members: list[Any], soiree: Soiree,
        django_user_model: Any) -> None:
    url = f"/soirees/{soiree.pk}/manage"
    other_organiser = django_user_model.objects.create_user("otto")
    club_create(name="Autre Cercle", slug="autre", organiser=other_organiser)

    anonymous = client.get(url)
    client.force_login(members[0])
    player = client.get(url)
    client.force_login(other_organiser)
    organiser_elsewhere = client.get(url)
    client.force_login(organiser)
    own = client.get(url)
    missing = client.get("/soirees/999999/manage")
    outsider.is_staff = True
    outsider.save(update_fields=["is_staff"])
    client.force_login(outsider)
    staff = client.get(url)

    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    assert (player.status_code, organiser_elsewhere.status_code) == (403, 403)
    assert (own.status_code, staff.status_code, missing.status_code) == (200, 200, 404)


def test_the_soiree_page_links_the_manage_page_for_its_organisers_only(
        client: Any, organiser: Any, members: list[Any], soiree: Soiree) -> None:
    link = f'href="/soirees/{soiree.pk}/manage"'
    client.force_login(organiser)
    assert link in client.get(f"/soirees/{soiree.pk}/").content.decode()
    client.force_login(members[0])
    assert link not in client.get(f"/soirees/{soiree.pk}/").content.decode()


def test_the_manage_page_tells_the_soiree_s_facts_in_the_club_s_time(
        client: Any, organiser: Any, soiree: Soiree) -> None:
    client.force_login(organiser)

    facts = _section(client.get(f"/soirees/{soiree.pk}/manage").content.decode(), "facts")

    assert "16 janvier 2031, 19:30" in facts and "16 janvier 2031, 22:30" in facts
    assert "Comet" in facts and "40 jetons" in facts and "45 s" in facts
    assert "Statut</dt><dd id=\"status\">prévue</dd>" in facts
    assert "Donnes par partie</dt><dd>6</dd>" in facts


def test_the_registration_list_offers_check_in_to_who_is_not_checked_in(
        client: Any, organiser: Any, members: list[Any], soiree: Soiree) -> None:
    alice, bruno, *_ = members
    registration_add(soiree=soiree, user=alice)
    registration_add(soiree=soiree, user=bruno)
    checkin(soiree=soiree, user=bruno, at=datetime(2031, 1, 16, 18, 5, tzinfo=UTC))
    client.force_login(organiser)

    listed = _section(client.get(f"/soirees/{soiree.pk}/manage").content.decode(),
                      "registrations")

    rows = dict(re.findall(r'<li class="person" data-player="(\w+)">(.*?)</li>', listed, re.S))
    assert sorted(rows) == ["alice", "bruno"]
    assert 'data-action="checkin" data-player="alice"' in rows["alice"]
    assert "pas encore pointé" in rows["alice"]
    assert "pointé à 19:05" in rows["bruno"] and 'data-action="checkin"' not in rows["bruno"]
    # A checked-in player is offered a rebuy and a cash-out instead.
    assert 'data-action="rebuy"' in rows["bruno"] and 'data-action="cashout"' in rows["bruno"]
    assert 'data-action="rebuy"' not in rows["alice"]
    assert "2 joueurs inscrits ; pointés : 1." in listed
    assert 'id="late-arrival"' in listed


def test_before_the_opening_there_is_no_seating_and_open_and_cancel_are_offered(
        client: Any, organiser: Any, soiree: Soiree) -> None:
    client.force_login(organiser)

    page = client.get(f"/soirees/{soiree.pk}/manage").content.decode()

    # A soirée not yet open is opened or cancelled; "close now" is for an open one.
    actions = _section(page, "actions")
    assert 'data-action="open"' in actions and 'data-action="cancel"' in actions
    assert 'data-action="close"' not in actions
    assert 'id="seating"' not in page


def test_once_open_the_seating_shows_every_table_and_the_seed_to_print(
        client: Any, organiser: Any, members: list[Any], club: Any) -> None:
    now = timezone.now()
    soiree = soiree_create(club=club, name="Ce soir", starts_at=now,
                           ends_at=now + timedelta(hours=2), game="comet",
                           move_timeout=timedelta(minutes=5))
    for person in members:
        checkin(soiree=soiree, user=person, at=now)
    soiree_open(soiree=soiree, at=now)
    soiree.refresh_from_db()
    client.force_login(organiser)

    page = client.get(f"/soirees/{soiree.pk}/manage").content.decode()

    seating = _section(page, "seating")
    assert len(soiree.seating_seed) > 8
    assert f'<code id="seed">{soiree.seating_seed}</code>' in seating
    assert "Table 1" in seating
    seated = re.findall(r"<li>(\w+)</li>", seating)
    assert sorted(seated) == ["alice", "bruno", "chloe", "denis"]
    assert f'href="/soirees/{soiree.pk}/seating"' in seating  # the seating, printed alone
    # Open already: only Close is offered.
    actions = _section(page, "actions")
    assert 'data-action="open"' not in actions and 'data-action="close"' in actions


def test_a_close_asked_says_the_hands_in_play_finish_and_offers_no_second_close(
        client: Any, organiser: Any, members: list[Any], club: Any) -> None:
    now = timezone.now()
    soiree = soiree_create(club=club, name="Ce soir", starts_at=now,
                           ends_at=now + timedelta(hours=2), game="comet",
                           move_timeout=timedelta(minutes=5))
    for person in members:
        checkin(soiree=soiree, user=person, at=now)
    soiree_open(soiree=soiree, at=now)
    soiree_close_now(soiree=soiree, at=now + timedelta(minutes=1))
    client.force_login(organiser)

    page = client.get(f"/soirees/{soiree.pk}/manage").content.decode()

    assert "clôture en cours" in _section(page, "facts")
    assert "Clôture demandée à" in _section(page, "facts")
    assert 'data-action="close"' not in page


def test_a_closed_soiree_offers_no_action(client: Any, organiser: Any,
                                          soiree: Soiree, members: list[Any]) -> None:
    registration_add(soiree=soiree, user=members[0])
    soiree_close_now(soiree=soiree, at=timezone.now())
    client.force_login(organiser)

    page = client.get(f"/soirees/{soiree.pk}/manage").content.decode()

    assert 'id="actions"' not in page and 'id="late-arrival"' not in page
    assert 'data-action="checkin"' not in page
    assert '<dd id="status">terminée</dd>' in _section(page, "facts")


def test_the_organiser_pages_speak_english_on_request(
        client: Any, organiser: Any, members: list[Any], soiree: Soiree) -> None:
    registration_add(soiree=soiree, user=members[0])
    client.force_login(organiser)

    form = client.get("/soirees/new", headers={"accept-language": "en"}).content.decode()
    manage = client.get(f"/soirees/{soiree.pk}/manage",
                        headers={"accept-language": "en"}).content.decode()

    assert '<html lang="en">' in form and "Create the soirée" in form
    assert "Time to move (seconds)" in form and "Nouvelle soirée" not in form
    assert "16 January 2031, 19:30" in manage and "40 chips" in manage
    assert "Check in" in manage and "not checked in" in manage and "Pointer" not in manage


def test_the_edit_form_shows_the_soiree_s_values_in_the_club_s_time(
        client: Any, organiser: Any, soiree: Soiree) -> None:
    client.force_login(organiser)

    manage = client.get(f"/soirees/{soiree.pk}/manage").content.decode()
    page = client.get(f"/soirees/{soiree.pk}/edit").content.decode()

    assert f'href="/soirees/{soiree.pk}/edit"' in manage
    assert 'value="Jeudi de la Comète"' in page
    assert 'name="starts_at" type="datetime-local" value="2031-01-16T19:30"' in page
    assert 'value="45"' in page and 'value="40"' in page and 'value="6"' in page
    assert f'data-soiree="{soiree.pk}"' in page and "Enregistrer les modifications" in page
    assert 'name="club"' not in page  # a soirée stays in its club


def test_an_organiser_changes_a_soiree_not_yet_open(client: Any, organiser: Any,
                                                    soiree: Soiree) -> None:
    client.force_login(organiser)

    answer = client.patch(f"/api/soirees/{soiree.pk}/", {
        "name": "Jeudi des Lumières", "ends_at": "2031-01-16T23:00", "buy_in": 60,
        "move_timeout": 20, "deals_per_partie": None, "bots_allowed": False,
    }, content_type="application/json")

    assert answer.status_code == 200, answer.content
    soiree.refresh_from_db()
    assert soiree.name == "Jeudi des Lumières"
    assert soiree.ends_at == datetime(2031, 1, 16, 23, 0, tzinfo=PARIS)
    assert soiree.starts_at == datetime(2031, 1, 16, 18, 30, tzinfo=UTC)  # not sent: kept
    assert (soiree.buy_in, soiree.move_timeout, soiree.deals_per_partie,
            soiree.bots_allowed) == (60, timedelta(seconds=20), None, False)


@pytest.mark.parametrize("body, field", [
    ({"ends_at": "2031-01-16T19:00"}, "must end after it starts"),  # before 19:30 Paris
    ({"buy_in": -5}, "buy_in"),
    ({"game": "whist"}, "game"),
    ({"club": "autre", "name": ""}, "name"),
])
def test_a_wrong_change_is_refused_and_changes_nothing(
        client: Any, organiser: Any, soiree: Soiree, body: dict[str, Any], field: str) -> None:
    client.force_login(organiser)
    before = Soiree.objects.filter(pk=soiree.pk).values().get()

    answer = client.patch(f"/api/soirees/{soiree.pk}/", body, content_type="application/json")

    assert answer.status_code == 400, answer.content
    assert field in answer.content.decode()
    assert Soiree.objects.filter(pk=soiree.pk).values().get() == before


def test_an_open_soiree_cannot_be_changed_and_only_organisers_change_one(
        client: Any, organiser: Any, members: list[Any], soiree: Soiree) -> None:
    client.force_login(members[0])
    answer = client.patch(f"/api/soirees/{soiree.pk}/", {"name": "Mine"},
                          content_type="application/json")
    assert answer.status_code == 403
    assert client.get(f"/soirees/{soiree.pk}/edit").status_code == 403

    for member in members[:2]:
        checkin(soiree=soiree, user=member, at=timezone.now())
    soiree_open(soiree=soiree, at=timezone.now())
    client.force_login(organiser)
    answer = client.patch(f"/api/soirees/{soiree.pk}/", {"name": "Trop tard"},
                          content_type="application/json")
    assert answer.status_code == 409, answer.content
    assert "only a soirée not yet open can be changed" in answer.json()["detail"]
    soiree.refresh_from_db()
    assert soiree.name == "Jeudi de la Comète"
    page = client.get(f"/soirees/{soiree.pk}/edit").content.decode()
    assert "<fieldset disabled>" in page
    assert f'href="/soirees/{soiree.pk}/edit"' not in client.get(
        f"/soirees/{soiree.pk}/manage").content.decode()


def test_the_tables_now_offer_each_person_s_seat_changes_and_the_announcements_show(
        client: Any, organiser: Any, members: list[Any], club: Any,
        django_user_model: Any) -> None:
    from tournaments.services import announce, seat_change

    now = timezone.now()
    soiree = soiree_create(club=club, name="Ce soir", starts_at=now,
                           ends_at=now + timedelta(hours=2), game="comet",
                           move_timeout=timedelta(minutes=5), min_tables=2)
    for person in members:
        checkin(soiree=soiree, user=person, at=now)
    soiree_open(soiree=soiree, at=now)
    client.force_login(organiser)
    tables = _section(client.get(f"/soirees/{soiree.pk}/manage").content.decode(), "tables-now")
    for person in members:
        name = person.username
        assert f'data-action="replace" data-player="{name}"' in tables
        assert f'data-action="remove" data-player="{name}"' in tables
        assert f'data-action="move" data-player="{name}"' in tables
    assert "Remplacer par un robot" in tables and "Voltaire" in tables  # a bot, without actions
    assert 'data-player="Voltaire"' not in tables

    seat_change(soiree=soiree, user=members[0], kind="replace", at=now)
    announce(soiree=soiree, text="Pause à 22 h", at=now + timedelta(seconds=1))
    news = _section(client.get(f"/soirees/{soiree.pk}/manage").content.decode(),
                    "announcements")
    assert news.index("Pause à 22 h") < news.index(
        "Après la donne en cours, alice cède sa place à un robot")
    assert 'id="announce"' in news
