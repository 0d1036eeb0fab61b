"""The club calendar as a member and his calendar app see it: the feed at his private address
(no sign-in), its times in the club's time zone on both sides of a daylight-saving change, the
lobby's links, and the revoke button that makes the old address answer as any unknown page."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from icalendar import Calendar

from tournaments.calendar import calendar_token_get
from tournaments.models import Club, Membership
from tournaments.services import club_create, membership_add, soiree_create

pytestmark = pytest.mark.django_db

PARIS = ZoneInfo("Europe/Paris")


@pytest.fixture
def club(organiser: Any) -> Club:
    return club_create(name="Cercle des Lumières", slug="lumieres", organiser=organiser)


def _soiree(club: Club, name: str, starts_at: datetime, game: str = "comet") -> Any:
    return soiree_create(club=club, name=name, starts_at=starts_at,
                         ends_at=starts_at + timedelta(hours=3), game=game)


def _feed(client: Any, token: str) -> Calendar:
    answer = client.get(f"/calendar/{token}.ics")
    assert answer.status_code == 200
    assert answer["Content-Type"] == "text/calendar; charset=utf-8"
    return Calendar.from_ical(answer.content)


def _section(html: str, name: str) -> str:
    found = re.search(rf'<section id="{name}".*?</section>', html, re.S)
    assert found is not None, f"no section {name!r}"
    return found.group(0)


def test_the_feed_holds_the_club_s_soirees_and_no_other_club_s(
        client: Any, club: Club, organiser: Any) -> None:
    other = club_create(name="Les Amis", slug="amis", organiser=organiser)
    mardi = _soiree(club, "Mardi de la Comète", datetime(2026, 10, 20, 20, tzinfo=PARIS))
    jeudi = _soiree(club, "Jeudi", datetime(2026, 10, 22, 20, tzinfo=PARIS), game="commere")
    _soiree(other, "Chez les Amis", datetime(2026, 10, 21, 20, tzinfo=PARIS))

    calendar = _feed(client, calendar_token_get(club=club, user=organiser))

    assert calendar["VERSION"] == "2.0" and calendar["PRODID"]
    assert calendar["X-WR-CALNAME"] == "Cercle des Lumières"
    assert calendar["X-WR-TIMEZONE"] == "Europe/Paris"
    assert [tz.tz_name for tz in calendar.timezones] == ["Europe/Paris"]
    events = calendar.events
    assert [e["UID"] for e in events] == [f"soiree-{mardi.pk}@academie",
                                          f"soiree-{jeudi.pk}@academie"]
    assert [e["SUMMARY"] for e in events] == ["Mardi de la Comète · Comet",
                                              "Jeudi · Ma commère, accommodez-moi"]
    assert events[0]["URL"] == f"http://testserver/soirees/{mardi.pk}/"
    assert all(e.DTSTAMP is not None for e in events)
    assert events[0].end - events[0].start == timedelta(hours=3)


@pytest.mark.parametrize(("local", "utc"), [
    # Europe/Paris leaves summer time on 2026-10-25 and takes it again on 2027-03-28.
    (datetime(2026, 10, 24, 20, tzinfo=PARIS), datetime(2026, 10, 24, 18, tzinfo=UTC)),
    (datetime(2026, 10, 25, 20, tzinfo=PARIS), datetime(2026, 10, 25, 19, tzinfo=UTC)),
    (datetime(2027, 3, 27, 20, tzinfo=PARIS), datetime(2027, 3, 27, 19, tzinfo=UTC)),
    (datetime(2027, 3, 28, 20, tzinfo=PARIS), datetime(2027, 3, 28, 18, tzinfo=UTC)),
])
def test_a_soiree_starts_at_the_club_s_local_time_on_either_side_of_the_clock_change(
        client: Any, club: Club, organiser: Any, local: datetime, utc: datetime) -> None:
    soiree = _soiree(club, "Samedi", utc)
    answer = client.get(f"/calendar/{calendar_token_get(club=club, user=organiser)}.ics")

    assert (f"DTSTART;TZID=Europe/Paris:{local:%Y%m%dT%H%M%S}"
            in answer.content.decode().splitlines())
    (event,) = Calendar.from_ical(answer.content).events
    assert event["UID"] == f"soiree-{soiree.pk}@academie"
    assert event.start.replace(tzinfo=None) == local.replace(tzinfo=None)
    assert str(event.start.tzinfo) == "Europe/Paris"
    assert event.start.astimezone(UTC) == utc
    # An app that reads the feed's own VTIMEZONE, not its tz database, finds the same instant.
    (vtimezone,) = Calendar.from_ical(answer.content).timezones
    assert local.replace(tzinfo=vtimezone.to_tz()).astimezone(UTC) == utc
    assert local.astimezone(UTC) == utc  # the case is what it says


def test_the_times_are_the_club_s_own_zone_not_the_service_s(
        client: Any, organiser: Any) -> None:
    montreal = club_create(name="Club de Montréal", slug="montreal", organiser=organiser)
    Club.objects.filter(pk=montreal.pk).update(time_zone="America/Toronto")
    montreal.refresh_from_db()
    # 2026-11-01: Toronto leaves summer time a week after Paris.
    _soiree(montreal, "Samedi", datetime(2026, 10, 31, 23, 30, tzinfo=UTC))

    answer = client.get(f"/calendar/{calendar_token_get(club=montreal, user=organiser)}.ics")

    assert "DTSTART;TZID=America/Toronto:20261031T193000" in answer.content.decode()
    calendar = Calendar.from_ical(answer.content)
    assert calendar["X-WR-TIMEZONE"] == "America/Toronto"
    assert calendar.events[0].start.astimezone(UTC) == datetime(2026, 10, 31, 23, 30,
                                                                tzinfo=UTC)


def test_a_revoked_address_answers_404_and_the_new_one_works(
        client: Any, club: Club, organiser: Any) -> None:
    _soiree(club, "Mardi", datetime(2026, 10, 20, 20, tzinfo=PARIS))
    old = calendar_token_get(club=club, user=organiser)
    client.force_login(organiser)

    answer = client.post(f"/calendar/{club.pk}/revoke", follow=True)

    assert answer.redirect_chain == [("/#calendar", 302)]
    page = answer.content.decode()
    assert re.search(r'<ul class="messages" role="status"><li>[^<]*Cercle des Lumières', page)
    assert calendar_token_get(club=club, user=organiser) in _section(page, "calendar")
    client.logout()
    assert client.get(f"/calendar/{old}.ics").status_code == 404
    new = calendar_token_get(club=club, user=organiser)
    assert new != old
    assert len(_feed(client, new).events) == 1


def test_the_404_says_nothing_of_whether_the_address_ever_existed(
        client: Any, club: Club, organiser: Any) -> None:
    revoked = calendar_token_get(club=club, user=organiser)
    client.force_login(organiser)
    client.post(f"/calendar/{club.pk}/revoke")
    client.logout()

    paths = (f"/calendar/{revoked}.ics", "/calendar/never-made-Q2xlYW5zZWNyZXQ.ics",
             "/no/such/page")
    answers = [client.get(path) for path in paths]

    assert [a.status_code for a in answers] == [404, 404, 404]
    # The site's 404 page (frontend/templates/404.html): the same words for each, once the
    # values of each request are set aside (its CSP nonce, its CSRF token, the path asked).
    pages = [_without_request_values(a.content.decode(), path)
             for a, path in zip(answers, paths, strict=True)]
    assert pages[0] == pages[1] == pages[2]
    assert b"Lumi" not in answers[0].content and b"club" not in answers[0].content.lower()


def _without_request_values(page: str, path: str) -> str:
    page = re.sub(r'nonce="[^"]*"', 'nonce=""', page.replace(path, "PATH"))
    return re.sub(r'(name="csrfmiddlewaretoken" value=|name="csrf-token" content=)"[^"]*"',
                  r'\1""', page)


def test_the_lobby_shows_a_member_his_own_address_for_each_club(
        client: Any, club: Club, organiser: Any, outsider: Any) -> None:
    other = club_create(name="Les Amis", slug="amis", organiser=outsider)
    membership_add(club=club, user=outsider, role=Membership.Role.PLAYER)
    client.force_login(outsider)

    section = _section(client.get("/").content.decode(), "calendar")

    for each in (club, other):
        token = calendar_token_get(club=each, user=outsider)
        assert f'href="webcal://testserver/calendar/{token}.ics"' in section
        assert f'value="http://testserver/calendar/{token}.ics"' in section
        assert f'action="/calendar/{each.pk}/revoke"' in section
    assert calendar_token_get(club=club, user=organiser) not in section


def test_the_lobby_speaks_english_when_asked(client: Any, club: Club, organiser: Any) -> None:
    client.force_login(organiser)

    section = _section(client.get("/", headers={"accept-language": "en"}).content.decode(),
                       "calendar")

    assert "Club calendar" in section and ">Revoke</button>" in section


def test_the_lobby_speaks_french_first(client: Any, club: Club, organiser: Any) -> None:
    client.force_login(organiser)

    section = _section(client.get("/").content.decode(), "calendar")

    assert "Calendrier du club" in section and ">Révoquer</button>" in section


def test_one_of_no_club_sees_no_calendar_and_a_stranger_is_asked_to_sign_in(
        client: Any, outsider: Any) -> None:
    answer = client.get("/")
    assert answer.status_code == 302 and "/accounts/login/" in answer["Location"]

    client.force_login(outsider)
    assert 'id="calendar"' not in client.get("/").content.decode()


def test_revoking_needs_a_signed_in_member_and_a_post(
        client: Any, club: Club, organiser: Any, outsider: Any) -> None:
    token = calendar_token_get(club=club, user=organiser)
    path = f"/calendar/{club.pk}/revoke"

    stranger = client.post(path)
    assert stranger.status_code == 302 and "/accounts/login/" in stranger["Location"]
    client.force_login(organiser)
    assert client.get(path).status_code == 405
    client.force_login(outsider)
    assert client.post(path).status_code == 404
    assert client.post("/calendar/999999/revoke").status_code == 404
    assert calendar_token_get(club=club, user=organiser) == token


def test_revoking_needs_the_page_s_csrf_token(club: Club, organiser: Any) -> None:
    from django.test import Client

    browser = Client(enforce_csrf_checks=True)
    browser.force_login(organiser)
    token = calendar_token_get(club=club, user=organiser)

    assert browser.post(f"/calendar/{club.pk}/revoke").status_code == 403
    assert calendar_token_get(club=club, user=organiser) == token
