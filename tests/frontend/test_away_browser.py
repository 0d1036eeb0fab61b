"""Leaving the table in a real browser (RULES.md §3, leaving the table): at a casual table alice
pauses it, nothing moves while she is away, the lobby says where she is absent and brings her
back, and the table plays on; bruno, at the same table in another browser, is told of both. At a
soirée's table the only way to leave is the time-out rule, said plainly. In French and English,
on a 390 px phone and a desktop; the screenshots are kept in the test's folder (and /tmp/shots).
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import Browser, Page

from games.models import Hand, Partie
from games.services import casual_table_create, invitation_answer
from tests.tournaments.evenings import one_table
from tournaments.models import Membership
from tournaments.services import club_create, membership_add

from .conftest import shot, wait_for_js

pytestmark = [pytest.mark.postgres, pytest.mark.browser]

PASSWORD = "pw-for-tests"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
MOVE_TIMEOUT, FORCED_DELAY = 3, 1
WORDS = {
    "fr": {"waits": "La table est en pause en attendant alice.",
           "paused": "alice a mis la table en pause jusqu’à son retour.",
           "back": "alice est de retour.", "resumed": "La table reprend.",
           "away_from": "Vous avez quitté la table amicale (alice)",
           "paused_note": "elle est en pause jusqu’à votre retour", "come_back": "revenir"},
    "en": {"waits": "The table is paused, waiting for alice.",
           "paused": "alice has paused the table until their return.",
           "back": "alice is back.", "resumed": "The table plays on.",
           "away_from": "You are away from alice's table",
           "paused_note": "it is paused until you are back", "come_back": "come back"},
}


def _signed_in(browser: Browser, url: str, username: str, language: str,
               path: str) -> tuple[Page, list[str]]:
    """A browser of its own for ``username``, reading ``language``, signed in at ``path``."""
    context = browser.new_context(viewport=DESKTOP, locale=language,
                                  extra_http_headers={"Accept-Language": language})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(f"{error}\n{error.stack}"))
    page.goto(f"{url}/accounts/login/?next={path}")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{url}{path}")
    return page, errors


def _shots(page: Page, tmp_path: Path, name: str) -> None:
    """The page at a phone's width and a desktop's, nothing wider than the screen."""
    for size in (PHONE, DESKTOP):
        page.set_viewport_size(size)
        page.wait_for_timeout(150)
        assert page.evaluate(f"document.documentElement.scrollWidth <= {size['width']}"), name
        shot(page, tmp_path, f"{name}-{size['width']}")


def _latest(partie: Partie) -> tuple[int, int]:
    """Where the table is: its latest hand's number and last seq."""
    hand = Hand.objects.filter(partie=partie).order_by("-number").first()
    assert hand is not None
    return hand.number, hand.last_seq


def _log(page: Page) -> str:
    return page.locator("#log").inner_text()


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
@pytest.mark.parametrize("language", ["fr", "en"])
def test_alice_pauses_a_casual_table_and_bruno_sees_it_wait_and_resume(
        live_server_process: Any, browser: Browser, django_user_model: Any, tmp_path: Path,
        language: str) -> None:
    said = WORDS[language]
    alice, bruno = (django_user_model.objects.create_user(name, password=PASSWORD)
                    for name in ("alice", "bruno"))
    now = timezone.now()
    # A Comet deal lasts: a Ma commère round may end at its first announcement.
    partie = casual_table_create(
        creator=alice, game="comet", players=[alice, bruno], bots=["heuristic"],
        options={"deals": 20}, at=now,
        move_timeout=timedelta(seconds=MOVE_TIMEOUT),
        forced_move_delay=timedelta(seconds=FORCED_DELAY), comet_window=timedelta(0),
        pause_between_hands=timedelta(seconds=2))
    invitation_answer(partie_id=partie.pk, user=bruno, accept=True, at=now)
    url = live_server_process.url
    hand = Hand.objects.filter(partie=partie).order_by("-number").first()
    assert hand is not None
    watcher, watcher_errors = _signed_in(browser, url, "bruno", language, f"/hands/{hand.pk}/")
    wait_for_js(watcher, "window.tablePage && window.tablePage.current() !== null")
    page, errors = _signed_in(browser, url, "alice", language, f"/hands/{hand.pk}/")
    wait_for_js(page, "window.tablePage && window.tablePage.current() !== null")

    # Leaving, she is asked how: at a casual table, both ways.
    page.locator("#leave").click()
    wait_for_js(page, "!document.getElementById('leave-choice').hidden")
    assert page.locator("#leave-casual [data-leave=pause]").is_visible()
    assert page.locator("#leave-casual [data-leave=timeout]").is_visible()
    assert not page.locator("#leave-soiree").is_visible()
    _shots(page, tmp_path, f"leave-choice-casual-{language}")
    page.locator("#leave-casual [data-leave=pause]").click()
    page.wait_for_url(f"{url}/")

    partie.refresh_from_db()
    assert partie.paused_at is not None
    # bruno is told, live: the notice, the log, and no clock runs on his page.
    wait_for_js(watcher, "!document.getElementById('paused').hidden")
    assert said["waits"] in watcher.locator("#paused").inner_text()
    wait_for_js(watcher, "document.getElementById('clock').hidden")
    assert said["paused"] in _log(watcher)
    _shots(watcher, tmp_path, f"paused-table-{language}")
    # The table stands still: several times its move timeout and forced delay pass.
    still = _latest(partie)
    watcher.wait_for_timeout(3 * (MOVE_TIMEOUT + FORCED_DELAY) * 1000)
    assert _latest(partie) == still
    assert watcher.evaluate("window.tablePage.current().seq") == still[1]

    # The lobby says where she is absent, and how, and brings her back.
    notice = page.locator("#away-from")
    assert said["away_from"] in notice.inner_text()
    assert said["paused_note"] in notice.inner_text()
    _shots(page, tmp_path, f"lobby-away-{language}")
    notice.get_by_role("link", name=said["come_back"]).click()
    page.wait_for_url(f"{url}/hands/*/")
    wait_for_js(page, "window.tablePage && window.tablePage.current() !== null")

    partie.refresh_from_db()
    assert partie.paused_at is None and not partie.seats.get(player=alice).away
    assert page.locator("#away").is_hidden() and page.locator("#leave").is_visible()
    # bruno is told the table plays on, and it does.
    wait_for_js(watcher, "document.getElementById('paused').hidden")
    wait_for_js(watcher, f"document.getElementById('log').innerText.includes({said['resumed']!r})")
    assert said["back"] in _log(watcher)
    wait_for_js(watcher, "!document.getElementById('clock').hidden")
    page.wait_for_timeout(200)
    end = 30_000
    while _latest(partie) == still and end > 0:
        page.wait_for_timeout(250)
        end -= 250
    assert _latest(partie) != still, "the table did not play on"
    assert errors == [] and watcher_errors == []


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
@pytest.mark.parametrize("language", ["fr", "en"])
def test_at_a_soiree_table_leaving_is_the_time_out_rule_said_plainly(
        live_server_process: Any, browser: Browser, django_user_model: Any, organiser: Any,
        tmp_path: Path, language: str) -> None:
    alice = django_user_model.objects.create_user("alice", password=PASSWORD)
    club = club_create(name="Cercle des Lumières", slug="lumieres", organiser=organiser)
    membership_add(club=club, user=alice, role=Membership.Role.PLAYER)
    place = one_table(club=club, player=alice, name="Jeudi de la Comète")
    hand = Hand.objects.filter(partie=place.partie).order_by("-number").first()
    assert hand is not None
    url = live_server_process.url
    page, errors = _signed_in(browser, url, "alice", language, f"/hands/{hand.pk}/")
    wait_for_js(page, "window.tablePage && window.tablePage.current() !== null")

    page.locator("#leave").click()
    wait_for_js(page, "!document.getElementById('leave-choice').hidden")

    assert page.locator("#leave-soiree").is_visible()
    assert not page.locator("[data-leave=pause]").is_visible()
    _shots(page, tmp_path, f"leave-choice-soiree-{language}")
    page.locator("#leave-soiree [data-leave=timeout]").click()
    page.wait_for_url(f"{url}/")
    seat = place.partie.seats.get(player=alice)
    assert (seat.away, seat.pauses) == (True, False)
    assert page.locator("#away-from a.come-back").is_visible()
    _shots(page, tmp_path, f"lobby-away-soiree-{language}")
    assert errors == []
