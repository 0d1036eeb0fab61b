"""The players' shares of randomness in a real browser (HAND_RECORD.md, version 2): each
seated person's table page makes a share with crypto.getRandomValues and sends it as the hand
starts; the deal comes with the last share, within the window; the audit page of the finished
hand re-derives the deck from the seed and the shares, and tells the player his share was used.
Screenshots in French and English, on a desktop and a 390 px phone."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import Browser, Page

from games import services
from games.models import Hand, HandEvent
from games.services import casual_table_create, invitation_answer

from .conftest import shot, sign_in, wait_for_js

pytestmark = [pytest.mark.postgres, pytest.mark.browser]

PASSWORD = "pw-for-tests"
WINDOW = timedelta(seconds=8)


def _open(page: Page, server: Any, path: str, username: str) -> list[str]:
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    sign_in(page, server.url, username, PASSWORD, path)
    return errors


def _at(event: HandEvent) -> datetime:
    return datetime.fromisoformat(event.at.replace("Z", "+00:00"))


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_each_page_sends_its_share_and_the_audit_page_confirms_it(
        live_server_process: Any, page: Page, browser: Browser, django_user_model: Any,
        tmp_path: Path) -> None:
    alice, bruno = (django_user_model.objects.create_user(n, password=PASSWORD)
                    for n in ("alice", "bruno"))
    partie = casual_table_create(creator=alice, game="comet", players=[alice, bruno],
                                 bots=["heuristic"], at=timezone.now(),
                                 move_timeout=timedelta(seconds=30),
                                 forced_move_delay=timedelta(0), comet_window=timedelta(0),
                                 pause_between_hands=timedelta(minutes=10),
                                 share_window=WINDOW)
    invitation_answer(partie_id=partie.pk, user=bruno, accept=True, at=timezone.now())
    hand = Hand.objects.get(partie=partie)
    assert list(hand.events.values_list("type", flat=True)) == ["hand_started"]

    # Alice on a desktop in French, Bruno on a phone in English, each on his own browser.
    page.set_viewport_size({"width": 1280, "height": 900})
    page.context.set_extra_http_headers({"Accept-Language": "fr-FR,fr"})
    errors = _open(page, live_server_process, f"/hands/{hand.pk}/", "alice")
    wait_for_js(page, "window.tablePage && window.tablePage.current() !== null")
    key = f"'academie.share.{hand.pk}'"
    wait_for_js(page, f"!!localStorage.getItem({key})")
    wait_for_js(page, "!!document.getElementById('share-status') && document.getElementById("
                      "'share-status').textContent.includes('est arrivée')")
    shot(page, tmp_path, "share-1-waiting-fr")
    assert "on bat les cartes" in page.locator("#centre").inner_text()
    assert page.locator("#hand button").count() == 0  # no card before the deal

    phone = browser.new_context(viewport={"width": 390, "height": 844},
                                extra_http_headers={"Accept-Language": "en"})
    other = phone.new_page()
    other_errors = _open(other, live_server_process, f"/hands/{hand.pk}/", "bruno")
    wait_for_js(other, "window.tablePage && window.tablePage.current() !== null"
                       " && window.tablePage.current().view.phase !== 'shuffling'")
    shot(other, tmp_path, "share-2-dealt-phone-en")
    wait_for_js(page, "window.tablePage.current().view.phase !== 'shuffling'")
    shot(page, tmp_path, "share-3-dealt-fr")
    assert page.locator("#hand button").count() > 0

    started = hand.events.get(type="hand_started")
    deal = hand.events.get(type="deal")
    assert deal.payload == {"contributors": [0, 1]}
    waited = _at(deal) - _at(started)
    assert waited < WINDOW, waited  # dealt by the last share, not by the window's timer
    # The figure of bench/README.md: each share's arrival, and the deal, after hand_started.
    arrivals = [(_at(e) - _at(started)).total_seconds()
                for e in hand.events.filter(type="share").order_by("seq")]
    print(f"hand_started -> shares {arrivals} s, -> deal {waited.total_seconds():.3f} s")
    mine = page.evaluate(f"localStorage.getItem({key})")
    sent = dict(hand.events.filter(type="share").values_list("payload__seat", "payload__share"))
    assert sent[0] == mine and len(mine) == 64
    assert sent[1] == other.evaluate(f"localStorage.getItem({key})")
    assert sent[0] != sent[1]

    # Both leave the table: the time-out rule ends the hand; then Alice audits it.
    for user in (alice, bruno):
        services.seat_away(partie_id=partie.pk, user=user, away=True, at=timezone.now())
    hand.refresh_from_db()
    assert hand.status == Hand.Status.OVER
    page.goto(f"{live_server_process.url}/hands/{hand.pk}/audit")
    wait_for_js(page, "!document.getElementById('your-share').hidden")
    wait_for_js(page, "document.querySelectorAll('#browser-checks li[data-check]').length >= 5")
    shot(page, tmp_path, "share-4-audit-fr")
    assert page.locator("#your-share").inner_text() == "votre part de hasard a été utilisée"
    checks = page.locator("#browser-checks li[data-check]")
    assert {c.get_attribute("data-check") for c in checks.all()} >= {
        "commitment", "shares", "deck", "dealer", "chain", "digest"}
    assert page.locator("#browser-checks li.bad").count() == 0

    # In English on the phone: the same, and a share that is not in the record is said so.
    other.goto(f"{live_server_process.url}/hands/{hand.pk}/audit")
    wait_for_js(other, "!document.getElementById('your-share').hidden")
    shot(other, tmp_path, "share-5-audit-phone-en")
    assert other.locator("#your-share").inner_text() == "your share of randomness was used"
    other.evaluate(f"localStorage.setItem({key}, 'b'.repeat(64))")
    other.reload()
    wait_for_js(other, "!document.getElementById('your-share').hidden")
    assert "not in the record" in other.locator("#your-share").inner_text()
    assert other.evaluate("document.documentElement.scrollWidth") <= 390
    assert errors == [] and other_errors == []
    phone.close()


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_the_page_sends_the_next_hands_share_before_it_follows_the_table(
        live_server_process: Any, page: Page, django_user_model: Any, tmp_path: Path) -> None:
    """The page shows a hand's result a few seconds before it follows the table to the next
    hand, longer than the share window: the next hand's share goes as soon as it starts."""
    alice = django_user_model.objects.create_user("alice", password=PASSWORD)
    partie = casual_table_create(creator=alice, game="comet", players=[alice],
                                 bots=["heuristic", "heuristic"], at=timezone.now(),
                                 options={"deals": 2}, move_timeout=timedelta(seconds=30),
                                 forced_move_delay=timedelta(0), comet_window=timedelta(0),
                                 pause_between_hands=timedelta(seconds=1),
                                 share_window=timedelta(seconds=3))
    first = Hand.objects.get(partie=partie, number=1)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.context.set_extra_http_headers({"Accept-Language": "fr-FR,fr"})
    errors = _open(page, live_server_process, f"/hands/{first.pk}/", "alice")
    wait_for_js(page, "window.tablePage && window.tablePage.current() !== null"
                      " && window.tablePage.current().view.phase !== 'shuffling'")
    # She steps away (through the API, in her browser's session, so the page stays): the
    # time-out rule plays her hand out, and the next hand starts a second later.
    csrf = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    stepped = page.request.post(f"{live_server_process.url}/api/parties/{partie.pk}/away",
                                data={"away": True}, headers={"X-CSRFToken": csrf,
                                                              "Referer": live_server_process.url})
    assert stepped.status == 200, stepped.text()
    for _ in range(300):
        second = Hand.objects.filter(partie=partie, number=2).first()
        if second is not None:
            break
        page.wait_for_timeout(100)
    assert second is not None, "the next hand did not start"
    page.wait_for_url(f"**/hands/{second.pk}/", timeout=30_000)
    wait_for_js(page, "window.tablePage && window.tablePage.current() !== null")
    shot(page, tmp_path, "share-6-next-hand-fr")
    deal = second.events.get(type="deal")
    assert deal.payload == {"contributors": [0]}
    share = second.events.get(type="share")
    assert share.payload["share"] == page.evaluate(
        f"localStorage.getItem('academie.share.{second.pk}')")
    assert errors == []
