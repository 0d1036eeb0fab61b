"""The pages people play and judge by, in Chromium, in French and in English: axe-core finds no
serious or critical issue on the lobby, the table in play, the replay and the audit page of a
disputed hand; and in French, the text their scripts put on the page holds no English phrase of
the catalogue. The audit page names every card and event in words (screenshots: French on a
desktop, English on a phone)."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import connection
from django.utils import timezone
from playwright.sync_api import Browser, Page

from games.models import Hand
from games.services import casual_table_create, deadline_fire, share_send
from tests.frontend.test_table_browser import AXE, _serious_violations
from tournaments.arbitration import dispute_open
from tournaments.models import Membership
from tournaments.services import checkin, club_create, membership_add, soiree_create, soiree_open

from .conftest import fits, shot, wait_for_js
from .test_french_pages import english_in

pytestmark = [pytest.mark.postgres, pytest.mark.browser]

PASSWORD = "pw-for-tests"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
#: When each page's script has drawn it.
DRAWN = {
    "lobby": "document.readyState === 'complete'",
    "table": "window.tablePage && window.tablePage.current() !== null",
    "replay": "document.getElementById('step-where').textContent !== ''",
    "audit": "document.getElementById('summary').dataset.ok !== undefined"
             " && document.querySelectorAll('#events li').length > 0",
}
assert AXE.exists()


def _evening(django_user_model: Any, organiser: Any) -> dict[str, Any]:
    """A Comet soirée whose one hand alice (who sent her share) and bruno let the time-out
    rule play, which alice disputes and arbitre (the club's auditor) may rule on; and denis at
    his casual table, in play."""
    club = club_create(name="Cercle des Lumières", slug="lumieres", organiser=organiser)
    people = {name: django_user_model.objects.create_user(name, password=PASSWORD)
              for name in ("alice", "bruno", "arbitre", "denis")}
    for name in ("alice", "bruno", "arbitre"):
        membership_add(club=club, user=people[name], role=(
            Membership.Role.AUDITOR if name == "arbitre" else Membership.Role.PLAYER))
    now = timezone.now()
    soiree = soiree_create(club=club, name="Jeudi", game="comet", starts_at=now,
                           ends_at=now + timedelta(hours=2), move_timeout=timedelta(minutes=5),
                           deals_per_partie=1, pause_between_hands=timedelta(hours=1),
                           share_window=timedelta(minutes=5))
    for name in ("alice", "bruno"):
        checkin(soiree=soiree, user=people[name], at=now)
    (table,) = soiree_open(soiree=soiree, at=now)
    hand = table.partie.hands.get()
    share_send(hand_id=hand.pk, user=people["alice"], share="5a" * 32, at=now)
    for _ in range(500):  # the rest played by the deadlines (the time-out rule), now
        hand.refresh_from_db()
        if hand.status == Hand.Status.OVER:
            break
        deadline_fire(hand_id=hand.pk, seq=hand.last_seq, at=hand.deadline)
    assert hand.status == Hand.Status.OVER
    dispute_open(hand=hand, user=people["alice"], reason="Mon temps a expiré trop tôt.",
                 request_id=uuid.uuid4(), at=timezone.now(), event_seq=3)
    casual = casual_table_create(creator=people["denis"], game="comet",
                                 players=[people["denis"]], bots=["heuristic", "heuristic"],
                                 at=now, move_timeout=timedelta(minutes=5))
    return {"hand": hand, "table": Hand.objects.get(partie=casual)}


def _evening_made(django_user_model: Any, organiser: Any) -> dict[str, Any]:
    """``_evening`` made in a thread of its own: the commands' live messages (to nobody, in
    this process) cannot be sent from the browser's event loop."""
    def made() -> dict[str, Any]:
        try:
            return _evening(django_user_model, organiser)
        finally:
            connection.close()  # the thread's own

    with ThreadPoolExecutor(1) as worker:
        return worker.submit(made).result()


def _pages(e: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(who reads it, what it is, its path): each page as the person it is made for."""
    hand, table = e["hand"].pk, e["table"].pk
    return [("alice", "lobby", "/"), ("alice", "audit", f"/hands/{hand}/audit"),
            ("denis", "lobby", "/"), ("denis", "table", f"/hands/{table}/"),
            ("arbitre", "audit", f"/hands/{hand}/audit"),
            ("arbitre", "replay", f"/hands/{hand}/replay")]


def _signed_in(browser: Browser, url: str, username: str, language: str,
               viewport: dict[str, int]) -> tuple[Any, Page, list[str]]:
    # axe is injected as a script of the test's: the pages' CSP would refuse it.
    context = browser.new_context(bypass_csp=True, viewport=viewport, locale=language,
                                  extra_http_headers={"Accept-Language": language})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{url}/accounts/login/?next=/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(f"{url}/")
    return context, page, errors


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
@pytest.mark.parametrize("what", ["lobby", "table", "replay", "audit"])
def test_no_serious_accessibility_issue_in_french_on_a_desktop_and_english_on_a_phone(
        live_server_process: Any, browser: Browser, django_user_model: Any, organiser: Any,
        tmp_path: Path, what: str) -> None:
    evening = _evening_made(django_user_model, organiser)
    url = live_server_process.url
    found: dict[str, list[str]] = {}
    errors: list[str] = []
    for language, viewport in (("fr", DESKTOP), ("en", PHONE)):
        for who, kind, path in _pages(evening):
            if kind != what:
                continue
            context, page, page_errors = _signed_in(browser, url, who, language, viewport)
            page.goto(url + path)
            wait_for_js(page, DRAWN[what])
            found[f"{language} {who}"] = _serious_violations(page)
            if what == "audit" and who == "arbitre":  # an event opened onto its JSON
                page.locator("#events li").nth(2).locator("summary").click()
                shot(page, tmp_path, f"a11y-audit-{language}-{viewport['width']}")
                assert fits(page, viewport["width"])
            errors += page_errors
            context.close()

    assert {reader: issues for reader, issues in found.items() if issues} == {}
    assert found and errors == []


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_in_french_the_pages_scripts_show_no_english_phrase_of_the_catalogue(
        live_server_process: Any, browser: Browser, django_user_model: Any, organiser: Any,
        tmp_path: Path) -> None:
    evening = _evening_made(django_user_model, organiser)
    url = live_server_process.url
    said: dict[str, str] = {}
    for username in ("alice", "denis", "arbitre"):
        context, page, _errors = _signed_in(browser, url, username, "fr", DESKTOP)
        for who, what, path in _pages(evening):
            if who == username:
                page.goto(url + path)
                wait_for_js(page, DRAWN[what])
                said[f"{who} {what}"] = page.evaluate("document.body.innerText")
                if (who, what) == ("arbitre", "replay"):  # every step, said in words
                    page.locator("[data-step=first]").click()
                    steps = []
                    for _ in range(evening["hand"].last_seq):
                        steps.append(page.locator("#step-words").inner_text())
                        page.locator("[data-step='event+']").click()
                    said["replay steps"] = "\n".join(steps)
                if (who, what) == ("arbitre", "audit"):
                    said["event 3"] = page.locator(".event-words[data-event='3']").inner_text()
                    said["event 3 listed"] = page.locator("#event-3 summary").inner_text()
        context.close()
    hand = evening["hand"]

    assert {page: found for page, text in said.items() if (found := english_in(text))} == {}
    # The audit page tells the hand in words: its cards, its events, not their codes.
    audit = said["arbitre audit"]
    assert "Donne 1 : " in audit and "Fin de la donne : " in audit, audit
    assert "alice envoie sa part de hasard." in audit
    # The disputed event (3), in words beside its number, as the list of events says it.
    assert said["event 3"] == f"({said['event 3 listed'].split(' ', 1)[1]})", said
    assert "hand_over" not in audit and "hand_started" not in audit
    steps = said["replay steps"].split("\n")
    assert len(steps) == hand.last_seq and all(steps), steps
    assert not {"share", "deal", "hand_over", "pay", "play"} & set(steps), steps
    assert steps[-1].startswith("Fin de la donne"), steps[-1]
    first = hand.events.filter(type="play").order_by("seq").first()
    assert first is not None
    assert f" joue {_the_card(first.payload['card'])}." in audit, (first.payload, audit)


RANKS = {"A": "l’as", "2": "le deux", "3": "le trois", "4": "le quatre", "5": "le cinq",
         "6": "le six", "7": "le sept", "8": "le huit", "9": "le neuf", "T": "le dix",
         "J": "le valet", "Q": "la dame", "K": "le roi"}
SUITS = {"C": "trèfle", "D": "carreau", "H": "cœur", "S": "pique"}


def _the_card(code: str) -> str:
    return f"{RANKS[code[0]]} de {SUITS[code[1]]}"
