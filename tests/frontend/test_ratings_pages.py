"""The season's ratings on its page (people, then the bots apart) and a player's page with his
rating, its chart and his rated parties: for the club's members, like the season page."""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Any

import pytest
from django.utils import timezone

from games.services.chips import bot_user
from tournaments import ratings
from tournaments.models import Membership, Rating, Season, Soiree
from tournaments.services import club_create, membership_add

from ..tournaments.ratings_helpers import finished_partie

pytestmark = pytest.mark.django_db


@pytest.fixture
def rated(django_user_model: Any, organiser: Any) -> dict[str, Any]:
    club = club_create(name="Cercle", slug="cercle-cotes", organiser=organiser)
    today = timezone.localdate()
    season = Season.objects.create(club=club, name="Saison", starts_on=today - timedelta(days=9),
                                   ends_on=today + timedelta(days=90))
    ana, bob = (django_user_model.objects.create_user(name) for name in ("ana", "bob"))
    for user in (ana, bob):
        membership_add(club=club, user=user, role=Membership.Role.PLAYER)
    start = timezone.now() - timedelta(days=2)
    soiree = Soiree.objects.create(club=club, season=season, name="Jeudi", game="comet",
                                   starts_at=start, ends_at=start + timedelta(hours=3),
                                   status=Soiree.Status.CLOSED)
    voltaire = bot_user(0)
    for i, nets in enumerate(([12, -2, -10], [-3, 8, -5], [6, -6, 0])):
        ratings.rate_partie(partie=finished_partie(
            soiree=soiree, players=[ana, bob, voltaire], nets=nets, bots=(2,),
            ended_at=start + timedelta(minutes=30 * (i + 1))))
    return {"season": season, "ana": ana, "bob": bob, "voltaire": voltaire, "soiree": soiree}


def test_the_season_page_ranks_the_people_and_lists_the_bots_apart(client: Any,
                                                                   rated: Any) -> None:
    season, ana = rated["season"], rated["ana"]
    client.force_login(ana)

    page = client.get(f"/seasons/{season.pk}/").content.decode()

    people = page.split('id="season-ratings"')[1].split("</table>")[0]
    bots = page.split('id="season-bot-ratings"')[1].split("</table>")[0]
    names = re.findall(r'<a href="/seasons/\d+/players/(\d+)/">([^<]+)</a>', people)
    order = [r.user.username for r in Rating.objects.filter(season=season)
             .exclude(user=rated["voltaire"]).order_by("-ordinal")]
    assert [name for _, name in names] == order and len(order) == 2
    assert "Voltaire" in bots and "Voltaire" not in people
    best = Rating.objects.get(user__username=order[0])
    assert f"<td>1</td><td><a href=\"/seasons/{season.pk}/players/{best.user_id}/\">" in people
    assert f"{best.ordinal:.2f}".replace(".", ",") in people  # French decimals by default


def test_a_player_s_page_shows_his_rating_its_chart_and_his_parties(client: Any,
                                                                    rated: Any) -> None:
    season, bob = rated["season"], rated["bob"]
    client.force_login(rated["ana"])
    base = f"/seasons/{season.pk}/players/{bob.pk}/"

    page = client.get(base, HTTP_ACCEPT_LANGUAGE="en")
    chart = client.get(f"{base}rating.svg")

    assert page.status_code == 200
    text = page.content.decode()
    assert f'src="{base}rating.svg"' in text
    rows = re.findall(r"<tr><td>(\d)</td>", text.split('id="player-parties"')[1])
    assert rows == ["3", "2", "1"]  # newest first
    assert "2 of 3" in text and f'href="/soirees/{rated["soiree"].pk}/"' in text
    assert chart["Content-Type"].startswith("image/svg+xml")
    svg = chart.content.decode()
    assert svg.startswith("<svg") and svg.count("<circle") == 4  # the start, then 3 parties
    ordinal = f"{Rating.objects.get(user=bob).ordinal:.2f}".replace(".", ",")  # in French
    assert "bob" in svg and f"cote prudente {ordinal}</text>" in svg


def test_a_bot_s_page_says_it_is_a_bot(client: Any, rated: Any) -> None:
    client.force_login(rated["ana"])

    page = client.get(f"/seasons/{rated['season'].pk}/players/{rated['voltaire'].pk}/",
                      HTTP_ACCEPT_LANGUAGE="en").content.decode()

    assert "(bot)" in page and "among the season's bots" in page


def test_the_ratings_are_the_club_s_own(client: Any, rated: Any, outsider: Any) -> None:
    season, bob = rated["season"], rated["bob"]
    client.force_login(outsider)

    answers = [client.get(f"/seasons/{season.pk}/players/{bob.pk}/{path}").status_code
               for path in ("", "rating.svg")]

    assert answers == [403, 403]
    client.force_login(rated["ana"])
    assert client.get(f"/seasons/{season.pk}/players/999999/").status_code == 404


def test_a_season_without_rated_parties_says_so(client: Any, organiser: Any) -> None:
    club = club_create(name="Cercle", slug="cercle-vide", organiser=organiser)
    season = Season.objects.create(club=club, name="Vide", starts_on=date(2031, 1, 1),
                                   ends_on=date(2031, 12, 31))
    client.force_login(organiser)

    page = client.get(f"/seasons/{season.pk}/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    mine = client.get(f"/seasons/{season.pk}/players/{organiser.pk}/",
                      HTTP_ACCEPT_LANGUAGE="en").content.decode()

    assert "No partie of this season has been rated yet." in page
    assert "season-ratings" not in page
    assert "No rated partie in this season yet." in mine
