"""The audit page checks a hand's record in the browser, by its own code (WebCrypto), and
refuses tampered records; the record downloads as a file that the verifier accepts."""

from __future__ import annotations

import io
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import Page

from games.engine.verify import main as verify_main
from games.models import Hand
from games.services import partie_start

from .conftest import shot, wait_for_js

pytestmark = [pytest.mark.postgres, pytest.mark.browser]

PASSWORD = "pw-for-tests"
TAMPER = """async ([how]) => {
  const record = (await api(location.pathname.replace('/hands/', '/api/hands/')
                  .replace('/audit', '/record'))).body;
  if (how === 'card') [record.deck[0], record.deck[1]] = [record.deck[1], record.deck[0]];
  if (how === 'amount') record.events.find(e => e.type === 'pay').amount += 1;
  if (how === 'chain') record.events[3].prev = record.events[2].prev;
  if (how === 'share') record.shares.push({seat: 0, share: 'a'.repeat(64)});
  return (await verifyRecord(record)).filter(c => !c.ok).map(c => c.check + ' ' + c.detail);
}"""


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_the_audit_page_verifies_the_record_itself_and_refuses_tampered_ones(
        live_server_process: Any, page: Page, django_user_model: Any, tmp_path: Path) -> None:
    django_user_model.objects.create_user("arbitre", password=PASSWORD, is_staff=True)
    partie = partie_start(game="comet", players=[], bots=["heuristic"] * 3, at=timezone.now(),
                          options={"deals": 1})
    hand = Hand.objects.get(partie=partie)
    assert hand.status == Hand.Status.OVER
    page.goto(f"{live_server_process.url}/accounts/login/?next=/hands/{hand.pk}/audit")
    page.fill("#id_username", "arbitre")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    wait_for_js(page, "document.querySelectorAll('#browser-checks li[data-check]').length > 0")
    shot(page, tmp_path, "audit-verified")

    checks = page.locator("#browser-checks li[data-check]")
    assert [checks.nth(i).get_attribute("data-check") for i in range(checks.count())] == [
        "commitment", "shares", "deck", "dealer", "chain", "digest"]
    assert page.locator("#browser-checks li.bad").count() == 0
    pay = next(e.seq for e in hand.events.order_by("seq") if e.type == "pay")
    swapped = page.evaluate(TAMPER, ["card"])
    assert len(swapped) == 1 and swapped[0].startswith("deck card 0: "), swapped
    assert page.evaluate(TAMPER, ["amount"]) == [f"chain event {pay}", "digest "]
    # A share the deal does not name: refused, and the deck under it is another.
    added = page.evaluate(TAMPER, ["share"])
    assert [f.split(" ")[0] for f in added] == ["shares", "deck"], added
    assert page.evaluate(TAMPER, ["chain"]) == ["chain event 4", "digest "]

    with page.expect_download() as caught:
        page.get_by_role("link", name="download the record").click()
    download = caught.value
    path = tmp_path / download.suggested_filename
    download.save_as(path)
    out = io.StringIO()
    with redirect_stdout(out):
        code = verify_main([str(path)])
    assert code == 0 and out.getvalue().startswith("OK "), out.getvalue()
    assert download.suggested_filename == f"free-table-hand{hand.number}.json"
