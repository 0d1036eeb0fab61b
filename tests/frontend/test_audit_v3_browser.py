"""The audit page of a version-3 hand (HAND_RECORD.md, "Version 3") checks everything it can in
the browser: the deal and the chain over the sealed forms, the header and the result, every move
and payment under the rules (rules.js), the digest the service lists, and the receipts this
browser kept, whose Ed25519 signatures it checks under the service's published keys.

A record pasted or chosen as a file is checked the same way without anything being sent: a
record the operator rewrote after the fact (a ``player`` move made a ``timeout``, chained again
with the seed) passes every check of its own and is caught by the receipt the service signed
when it showed the hand. "My receipts" downloads what ``python -m games.engine.verify
--receipts`` reads. Screenshots in English and French, on a desktop and a 390 px phone."""

from __future__ import annotations

import copy
import io
import json
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import Page

from games.engine.verify import main as verify_main
from games.models import Hand
from games.selectors import hand_record
from games.services import partie_start
from games.signing import receipt

from ..receipts import forged_timeout
from .conftest import fits, shot, sign_in, wait_for_js

pytestmark = [pytest.mark.postgres, pytest.mark.browser]

PASSWORD = "pw-for-tests"
DONE = "document.getElementById('summary').dataset.ok !== undefined"
OTHER_DONE = "!document.getElementById('other-result').hidden"
ERROR_SHOWN = "!document.getElementById('other-error').hidden"




def _checks(page: Page, where: str) -> dict[str, tuple[str, str | None]]:
    """The checks listed in ``where``: name → (its class, the seq it names)."""
    return {li.get_attribute("data-check") or "": (li.get_attribute("class") or "",
                                                   li.get_attribute("data-seq"))
            for li in page.locator(f"{where} li[data-check]").all()}


def _paste(page: Page, text: str) -> None:
    page.fill("#other-text", text)
    page.click("#other-check")


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_the_audit_page_checks_a_version_3_hand_its_receipts_and_pasted_records(
        live_server_process: Any, page: Page, django_user_model: Any, seeded_deals: None,
        tmp_path: Path) -> None:
    django_user_model.objects.create_user("arbitre", password=PASSWORD, is_staff=True)
    first, second = (Hand.objects.get(partie=partie_start(
        game="comet", players=[], bots=["heuristic"] * 3, at=timezone.now(),
        options={"deals": 1})) for _ in range(2))
    assert first.status == second.status == Hand.Status.OVER
    record = hand_record(hand=first)
    assert record["format"] == "academie.hand/3"
    last = len(record["events"])
    other = hand_record(hand=second)
    # What the table page keeps: the latest receipt of each hand it watched.
    kept = {first.pk: receipt(first.pk, last, record["digest"]),
            second.pk: receipt(second.pk, len(other["events"]), other["digest"])}

    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.set_viewport_size({"width": 1280, "height": 900})
    sign_in(page, live_server_process.url, "arbitre", PASSWORD, f"/hands/{first.pk}/audit")
    page.wait_for_url(f"**/hands/{first.pk}/audit")
    for hand_id, signed in kept.items():
        page.evaluate("([k, v]) => localStorage.setItem(k, v)",
                      [f"academie.receipt.{hand_id}", json.dumps(signed)])
    page.reload()
    wait_for_js(page, DONE)
    shot(page, tmp_path, "audit-v3-desktop-en")

    # Every check holds, each in its group; the receipt kept here was checked.
    assert page.locator("#summary").get_attribute("data-ok") == "true"
    assert _checks(page, "#browser-checks") == {name: ("ok", None) for name in (
        "commitment", "shares", "deck", "dealer", "chain", "digest")}
    assert _checks(page, "#play-checks") == {name: ("ok", None)
                                             for name in ("header", "result", "rules")}
    assert _checks(page, "#service-checks") == {name: ("ok", None)
                                                for name in ("serviceDigest", "receipts")}
    assert "(1 checked)" in page.locator("#service-checks li[data-check=receipts]").inner_text()
    # No player sent a share: the service alone drew the deal, and the page says so.
    assert page.locator("#no-share").inner_text() == (
        "no player's share of randomness: the service alone drew this deal")
    assert page.locator("#receipts-count").get_attribute("data-here") == "1"
    # The page's whole check (crypto, rules, receipts) of this hand, in the page's own time.
    ms = page.evaluate("window.lastAudit.ms")
    assert ms < 200, ms

    # "My receipts": every receipt this browser kept, which the command-line verifier takes.
    with page.expect_download() as caught:
        page.click("#receipts-download")
    receipts_path = tmp_path / caught.value.suggested_filename
    caught.value.save_as(receipts_path)
    assert json.loads(receipts_path.read_text()) == {
        "receipts": sorted(kept.values(), key=lambda r: f"academie.receipt.{r['hand']}")}
    keys_path, record_path = tmp_path / "keys.json", tmp_path / "record.json"
    keys = page.evaluate("async () => (await api('/api/keys')).body")
    keys_path.write_text(json.dumps(keys))
    record_path.write_text(json.dumps(record))
    out = io.StringIO()
    with redirect_stdout(out):
        code = verify_main([str(record_path), "--receipts", str(receipts_path),
                            "--keys", str(keys_path)])
    assert (code, out.getvalue()) == (0, f"OK {record['digest']} (1 receipt checked)\n")

    # Nothing the page checks below leaves the browser.
    sent: list[str] = []
    page.on("request", lambda request: sent.append(request.url))

    # The operator's forgery: every check of its own holds, but it contradicts the receipt
    # the service signed when it showed the hand; and its digest is not the one listed.
    found = forged_timeout(record)
    assert found is not None, "no player move of this hand is its default move"
    forged, changed = found
    _paste(page, json.dumps(forged))
    wait_for_js(page, OTHER_DONE)
    result = "#other-result"
    assert page.locator(f"{result} [data-part=summary]").get_attribute("data-ok") == "false"
    assert {k: v for k, v in _checks(page, result).items() if v[0] != "ok"} == {
        "serviceDigest": ("bad", None), "receipts": ("bad", str(last))}
    said = page.locator(f"{result} li[data-check=receipts]").inner_text()
    assert f"event {last}" in said and "changed after the service showed it" in said, said
    page.locator(f"{result} li[data-check=receipts] summary").click()
    shot(page, tmp_path, "audit-v3-forged-desktop-en")
    assert changed < last
    # The same record, as the service has it, pasted: every check holds.
    _paste(page, json.dumps(record))
    wait_for_js(page, f"document.querySelector('{result} [data-part=summary]').dataset.ok"
                      " === 'true'")

    # A card changed after the fact, not chained again: the chain names the event.
    tampered = copy.deepcopy(record)
    play = next(e for e in tampered["events"] if e["type"] == "play")
    play["card"] = next(c for c in tampered["deck"] if c != play["card"])
    _paste(page, json.dumps(tampered))
    wait_for_js(page, f"document.querySelector('{result} [data-part=summary]').dataset.ok"
                      " === 'false'")
    checks = _checks(page, result)
    assert checks["chain"] == ("bad", str(play["seq"]))
    assert checks["digest"][0] == "bad" and checks["rules"][0] == "bad"
    assert f"event {play['seq']}: its hash does not match its content" in page.locator(
        f"{result} li[data-check=chain]").inner_text()

    # Not JSON; a file over 5 MB: a clear message, nothing checked, nothing sent.
    _paste(page, "{this is not json")
    wait_for_js(page, ERROR_SHOWN)
    assert page.locator("#other-error").inner_text() == (
        "This is not JSON: nothing was checked, and nothing was sent.")
    assert page.locator("#other-result").is_hidden()
    page.set_input_files("#other-file", files=[{
        "name": "big.json", "mimeType": "application/json",
        "buffer": b"[" + b" " * (5 * 1024 * 1024) + b"]"}])
    wait_for_js(page, "document.getElementById('other-error').textContent.includes('5 MB')")
    assert page.locator("#other-error").inner_text() == (
        "This file is over 5 MB: it was not read, and nothing was sent.")
    # A file within the limit is checked like a paste.
    small = tmp_path / "forged.json"
    small.write_text(json.dumps(forged))
    page.set_input_files("#other-file", str(small))
    wait_for_js(page, OTHER_DONE)
    assert _checks(page, result)["receipts"] == ("bad", str(last))
    assert sent == []
    shot(page, tmp_path, "audit-v3-file-desktop-en")

    # On a phone, and in French.
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    wait_for_js(page, DONE)
    shot(page, tmp_path, "audit-v3-phone-en")
    assert fits(page, 390)
    page.context.set_extra_http_headers({"Accept-Language": "fr-FR,fr"})
    page.reload()
    wait_for_js(page, DONE)
    assert page.locator("#no-share").inner_text() == (
        "aucune part de hasard d’un joueur : le service seul a tiré cette donne")
    assert "Mes reçus" in page.locator("#receipts-download").inner_text()
    _paste(page, json.dumps(forged))
    wait_for_js(page, OTHER_DONE)
    said = page.locator(f"{result} li[data-check=receipts]").inner_text()
    assert f"événement {last}" in said and "modifié après que le service l’a montré" in said, said
    page.locator("#other-result").scroll_into_view_if_needed()
    shot(page, tmp_path, "audit-v3-forged-phone-fr")
    assert fits(page, 390)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.reload()
    wait_for_js(page, DONE)
    shot(page, tmp_path, "audit-v3-desktop-fr")
    assert page.locator("#summary").get_attribute("data-ok") == "true"
    _paste(page, "pas du JSON")
    wait_for_js(page, ERROR_SHOWN)
    assert page.locator("#other-error").inner_text() == (
        "Ce n’est pas du JSON : rien n’a été vérifié, et rien n’a été envoyé.")
    assert errors == []
