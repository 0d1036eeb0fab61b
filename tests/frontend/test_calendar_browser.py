"""The club calendar in the lobby, in a real browser, on a 390 px phone and a desktop, in French
and English: a member finds his private feed's address, his calendar app (a plain GET without
his session) reads it, he revokes it, and the old address answers 404 while the new one works.
Screenshots go to /tmp/cal_shots."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from icalendar import Calendar
from playwright.sync_api import Page, Playwright, expect

from tournaments.models import Membership
from tournaments.services import club_create, membership_add, soiree_create

from .conftest import fits, shot, sign_in

pytestmark = [pytest.mark.postgres, pytest.mark.browser]

PASSWORD = "pw-for-tests"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}




@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_a_member_subscribes_to_his_club_calendar_and_revokes_the_address(
        live_server_process: Any, page: Page, playwright: Playwright, django_user_model: Any,
        tmp_path: Path, organiser: Any) -> None:
    bruno = django_user_model.objects.create_user("bruno", password=PASSWORD)
    club = club_create(name="Cercle des Lumières", slug="lumieres", organiser=organiser)
    membership_add(club=club, user=bruno, role=Membership.Role.PLAYER)
    paris = ZoneInfo("Europe/Paris")
    for day in (24, 25):  # either side of the end of summer time
        soiree_create(club=club, name=f"Soirée du {day}", game="comet",
                      starts_at=datetime(2026, 10, day, 20, tzinfo=paris),
                      ends_at=datetime(2026, 10, day, 20, tzinfo=paris) + timedelta(hours=3))
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.set_viewport_size(PHONE)
    page.context.set_extra_http_headers({"Accept-Language": "fr-FR,fr;q=0.9"})
    sign_in(page, live_server_process.url, "bruno", PASSWORD)

    panel = page.locator("#calendar .panel.calendar")
    expect(panel).to_have_count(1)
    expect(panel).to_contain_text("Cercle des Lumières")
    address = panel.locator("input.feed").input_value()
    assert address.startswith(f"{live_server_process.url}/calendar/")
    assert panel.locator("a.subscribe").get_attribute("href") == (
        "webcal://" + address.split("://", 1)[1])
    assert fits(page, PHONE["width"])
    panel.scroll_into_view_if_needed()
    shot(page, tmp_path, "calendar-1-phone-fr")

    # The calendar app: a client of its own, without the member's session.
    app = playwright.request.new_context()
    feed = app.get(address)
    assert feed.status == 200 and feed.headers["content-type"] == "text/calendar; charset=utf-8"
    starts = [e.start for e in Calendar.from_ical(feed.body()).events]
    assert [(s.hour, s.utcoffset()) for s in starts] == [(20, timedelta(hours=2)),
                                                         (20, timedelta(hours=1))]

    panel.locator("form button[type=submit]").click()

    page.wait_for_url(f"{live_server_process.url}/#calendar")
    expect(page.locator(".messages[role=status]")).to_contain_text("Cercle des Lumières")
    new_address = page.locator("#calendar input.feed").input_value()
    assert new_address != address
    assert app.get(address).status == 404
    assert app.get(new_address).status == 200
    app.dispose()
    assert fits(page, PHONE["width"])
    shot(page, tmp_path, "calendar-2-phone-fr-revoked")

    page.set_viewport_size(DESKTOP)
    shot(page, tmp_path, "calendar-3-desktop-fr")
    page.select_option("#language-switch select", "en")
    page.click("#language-switch button")
    expect(page.locator("#calendar-title")).to_have_text("Club calendar")
    expect(page.locator("#calendar button[type=submit]")).to_have_text("Revoke")
    shot(page, tmp_path, "calendar-4-desktop-en")
    page.set_viewport_size(PHONE)
    assert fits(page, PHONE["width"])
    page.locator("#calendar").scroll_into_view_if_needed()
    shot(page, tmp_path, "calendar-5-phone-en")
    assert errors == []
