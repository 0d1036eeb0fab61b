"""The arbiter's room in Chromium: a player disputes a hand of the soirée; the arbiter finds it
in his queue, checks the record in the browser, replays the hand on the table step by step (by
buttons, keys and a #seq= link), and rules "adjusted"; the player reads the ruling. French on a
phone, English on a desktop; screenshots in the test's folder and /tmp/shots."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import Browser, Page, expect

from games.models import Hand
from tournaments.models import Dispute, Membership, Ruling, WhatIf
from tournaments.services import checkin, club_create, membership_add, soiree_create, soiree_open

from .conftest import shot, wait_for_js

pytestmark = [pytest.mark.postgres, pytest.mark.browser]

PASSWORD = "pw-for-tests"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


def _login(page: Page, url: str, name: str, then: str) -> None:
    page.goto(f"{url}/accounts/login/?next={then}")
    page.fill("#id_username", name)
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")
    page.wait_for_url(f"**{then}")


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_a_dispute_is_raised_replayed_verified_and_ruled_from_the_pages(
        live_server_process: Any, browser: Browser, django_user_model: Any, organiser: Any,
        tmp_path: Path) -> None:
    club = club_create(name="Cercle des Lumières", slug="lumieres", organiser=organiser)
    people = {name: django_user_model.objects.create_user(name, password=PASSWORD)
              for name in ("alice", "bruno", "arbitre")}
    for name, user in people.items():
        membership_add(club=club, user=user,
                       role=Membership.Role.AUDITOR if name == "arbitre" else "player")
    now = timezone.now()
    # People who never move: their time-outs (half a second) and a bot play the hand.
    soiree = soiree_create(club=club, name="Jeudi", game="comet", starts_at=now,
                           ends_at=now + timedelta(hours=1), move_timeout=timedelta(seconds=0.5),
                           forced_move_delay=timedelta(0), comet_window=timedelta(0),
                           pause_between_hands=timedelta(hours=1), deals_per_partie=1)
    for name in ("alice", "bruno"):
        checkin(soiree=soiree, user=people[name], at=now)
    soiree_open(soiree=soiree, at=now)
    deadline = time.monotonic() + 120
    while not Hand.objects.filter(partie__soiree_table__soiree=soiree, status="over").exists():
        assert time.monotonic() < deadline, "the hand did not end"
        time.sleep(0.5)
    hand = Hand.objects.get(partie__soiree_table__soiree=soiree)
    url = live_server_process.url
    errors: list[str] = []

    # alice disputes the hand, on her phone, in French.
    player = browser.new_page(viewport=PHONE, extra_http_headers={"Accept-Language": "fr"})
    player.on("pageerror", lambda error: errors.append(str(error)))
    _login(player, url, "alice", f"/hands/{hand.pk}/audit")
    form = player.locator("#dispute-form")
    form.get_by_label("Contester cette donne : qu’est-ce qui n’allait pas ?").fill(
        "Mon temps a expiré trop tôt.")
    form.get_by_label("L’événement concerné (facultatif)").fill("3")
    form.get_by_role("button", name="Ouvrir une contestation").click()
    expect(player.locator("#disputes")).to_contain_text("En attente de la décision de l’arbitre.")
    (dispute,) = Dispute.objects.filter(hand=hand)
    assert (dispute.opened_by, dispute.event_seq) == (people["alice"], 3)
    shot(player, tmp_path, "arbiter-1-phone-fr-dispute")

    # The arbiter, on a desktop in English: the queue, the checks in his browser, the replay.
    arbiter = browser.new_page(viewport=DESKTOP, extra_http_headers={"Accept-Language": "en"})
    arbiter.on("pageerror", lambda error: errors.append(str(error)))
    _login(arbiter, url, "arbitre", "/hands/")
    queue = arbiter.locator("#queue")
    expect(queue).to_contain_text("Mon temps a expiré trop tôt.")
    queue.get_by_role("link").first.click()
    arbiter.wait_for_url(f"**/hands/{hand.pk}/audit**")
    wait_for_js(arbiter, "document.querySelectorAll('#browser-checks li.ok').length === 6")
    expect(arbiter.locator("#verdict")).to_contain_text("Verified")
    shot(arbiter, tmp_path, "arbiter-2-desktop-en-audit")
    arbiter.get_by_role("link", name="Replay the hand on the table, step by step").click()
    arbiter.wait_for_url(f"**/hands/{hand.pk}/replay**")
    count = hand.last_seq
    expect(arbiter.locator("#step-where")).to_have_text(f"Event {count} of {count}")
    arbiter.keyboard.press("Home")
    expect(arbiter.locator("#step-where")).to_have_text(f"Event 1 of {count}")
    assert arbiter.evaluate("location.hash") == "#seq=1"
    arbiter.keyboard.press("ArrowRight")
    arbiter.keyboard.press("ArrowRight")
    expect(arbiter.locator("#step-where")).to_have_text(f"Event 3 of {count}")
    arbiter.keyboard.press("Shift+ArrowRight")  # the next move
    move_seq = int(arbiter.evaluate("location.hash").split("=")[1])
    assert move_seq > 3
    expect(arbiter.locator("#step-by")).to_contain_text("played by")
    expect(arbiter.locator("#all-hands li")).to_have_count(3)  # every seat's cards shown
    expect(arbiter.locator("#seats li")).to_have_count(3)
    assert f'"seq": {move_seq}' in arbiter.locator("#step-json").text_content()
    shot(arbiter, tmp_path, "arbiter-3-desktop-en-replay")

    # What if, from event 5, the seat to act had played otherwise? Played out, and kept.
    arbiter.goto(f"{url}/hands/{hand.pk}/replay#seq=5")
    expect(arbiter.locator("#step-where")).to_have_text(f"Event 5 of {count}")
    arbiter.get_by_role("button", name="What if… branch from this step").click()
    expect(arbiter.locator("#whatif-title")).to_have_text(
        "What if: from event 5, 0 move(s) played otherwise")
    choices = arbiter.locator("#whatif-moves button")
    expect(choices.first).to_be_visible()
    choices.last.click()
    expect(arbiter.locator("#whatif-title")).to_contain_text("1 move(s)")
    arbiter.get_by_role("button", name="Play the rest out by the time-out rule").click()
    expect(arbiter.locator("#whatif-moves")).to_have_text("This branch ends here.")
    expect(arbiter.locator("#result")).to_be_visible()
    arbiter.get_by_label("Note").fill("another card at event 6")
    arbiter.get_by_role("button", name="Keep this branch for the dispute").click()
    expect(arbiter.locator("#whatif-said")).to_contain_text("Kept as what-if")
    (draft,) = WhatIf.objects.filter(dispute=dispute)
    assert draft.from_seq == 5 and len(draft.moves) == 1 and draft.result is not None
    assert Hand.objects.get(pk=hand.pk).last_seq == count  # the real hand untouched
    shot(arbiter, tmp_path, "arbiter-3b-desktop-en-whatif")
    # The dispute's link opens the replay at its event.
    arbiter.goto(f"{url}/hands/{hand.pk}/replay#seq=3")
    expect(arbiter.locator("#step-where")).to_have_text(f"Event 3 of {count}")

    # The ruling: adjusted, two chips from bruno to alice.
    arbiter.goto(f"{url}/hands/{hand.pk}/audit")
    rule = arbiter.locator("form.rule-form")
    rule.get_by_label("adjusted (chip corrections)").check()
    rule.locator('input[data-player="alice"]').fill("2")
    rule.locator('input[data-player="bruno"]').fill("-2")
    rule.get_by_label(f"what-if {draft.pk}").check()
    rule.get_by_label("Reason").fill("The time-out came before the move's deadline.")
    rule.get_by_role("button", name="Rule").dblclick()
    expect(arbiter.locator("#disputes")).to_contain_text("Ruling: adjusted")
    assert Ruling.objects.filter(dispute=dispute).count() == 1
    assert Ruling.objects.get().corrections == {"alice": 2, "bruno": -2}
    assert Ruling.objects.get().cites == [draft.pk]
    shot(arbiter, tmp_path, "arbiter-4-desktop-en-ruled")

    # alice reads it on her lobby and on the hand's page.
    player.goto(f"{url}/")
    expect(player.locator("#my-disputes")).to_contain_text("décidé : résultat ajusté")
    player.locator("#my-disputes a").first.click()
    expect(player.locator("#disputes")).to_contain_text("Décision : résultat ajusté")
    expect(player.locator("#disputes")).to_contain_text("alice +2")
    shot(player, tmp_path, "arbiter-5-phone-fr-ruling")
    player.goto(f"{url}/hands/{hand.pk}/replay#seq=3")
    expect(player.locator("#step-where")).to_have_text(f"Événement 3 sur {count}")
    shot(player, tmp_path, "arbiter-6-phone-fr-replay")
    assert errors == []
