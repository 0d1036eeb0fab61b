"""The season's ratings and a player's rating page in a real browser: on a 390 px phone and a
desktop, in French and in English, nothing wider than the screen, the chart drawn, the links
from the season's table to the player's page. Screenshots go to /tmp/rat_shots."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from games.services.chips import bot_user
from tournaments import ratings
from tournaments.models import Membership, RatingChange, Season, Soiree
from tournaments.services import club_create, membership_add

from ..tournaments.ratings_helpers import finished_partie
from .conftest import fits, shot, sign_in, wait_for_js

pytestmark = [pytest.mark.postgres, pytest.mark.browser]

PASSWORD = "pw-for-tests"
SCREENS = {"phone": {"width": 390, "height": 844}, "desktop": {"width": 1280, "height": 900}}




@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_a_member_reads_the_season_s_ratings_and_a_player_s_history(
        live_server_process: Any, page: Page, django_user_model: Any, organiser: Any,
        tmp_path: Path) -> None:
    club = club_create(name="Cercle des Lumières", slug="lumieres-cotes", organiser=organiser)
    today = timezone.localdate()
    season = Season.objects.create(club=club, name="Saison d'hiver",
                                   starts_on=today - timedelta(days=30),
                                   ends_on=today + timedelta(days=60))
    names = ("alice", "bruno", "chloe", "denis", "émilie-des-longs-noms")
    people = [django_user_model.objects.create_user(n, password=PASSWORD) for n in names]
    for person in people:
        membership_add(club=club, user=person, role=Membership.Role.PLAYER)
    bots = [bot_user(0), bot_user(1)]
    start = timezone.now() - timedelta(days=3)
    for day in range(3):
        soiree = Soiree.objects.create(
            club=club, season=season, name=f"Jeudi {day + 1}", game="comet",
            starts_at=start + timedelta(days=day),
            ends_at=start + timedelta(days=day, hours=3), status=Soiree.Status.CLOSED)
        for k in range(4):
            seated = [people[(day + k + j) % 5] for j in range(3)] + [bots[(day + k) % 2]]
            nets = [[9, -4, 0, -5], [-6, 2, 8, -4], [3, 3, -10, 4], [-1, 7, -2, -4]][k]
            ratings.rate_partie(partie=finished_partie(
                soiree=soiree, players=seated, nets=nets, bots=(3,),
                ended_at=start + timedelta(days=day, minutes=30 * (k + 1))))
    alice = people[0]
    alice_s = RatingChange.objects.filter(user=alice).count()
    assert alice_s > 3
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text)
            if "Content Security Policy" in message.text else None)
    page.context.set_extra_http_headers({"Accept-Language": "fr-FR,fr;q=0.9"})
    sign_in(page, live_server_process.url, alice.username, PASSWORD, f"/seasons/{season.pk}/")
    expect(page.locator("#season-ratings")).to_be_visible()

    for language in ("fr", "en"):
        if language == "en":
            page.select_option("#language-switch select", "en")
            page.click("#language-switch button")
            wait_for_js(page, "document.documentElement.lang === 'en'")
        for screen, size in SCREENS.items():
            page.set_viewport_size(size)
            page.goto(f"{live_server_process.url}/seasons/{season.pk}/")
            expect(page.locator("#season-ratings tr")).to_have_count(1 + len(people))
            expect(page.locator("#season-bot-ratings tr")).to_have_count(1 + len(bots))
            assert fits(page, size["width"]), f"season page wider than a {screen}"
            shot(page, tmp_path, f"season-{language}-{screen}")

            page.locator("#season-ratings a", has_text="alice").click()
            expect(page.locator("h1")).to_contain_text("alice")
            expect(page.locator("#player-parties tr")).to_have_count(1 + alice_s)
            wait_for_js(page, "document.querySelector('.chart img').complete && "
                              "document.querySelector('.chart img').naturalWidth > 0")
            assert fits(page, size["width"]), f"player page wider than a {screen}"
            shot(page, tmp_path, f"player-{language}-{screen}")
    expect(page.locator("#player-rating")).to_contain_text("ordinal")
    assert errors == []
