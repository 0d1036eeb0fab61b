"""The table page holds the hash chain of a version-3 hand (HAND_RECORD.md, "Version 3") in a
real browser: it recomputes the hash of every event it is shown, checks that each links to the
one before and that every signed receipt names the hash it holds at that seq, and keeps the
hand's latest receipt in localStorage (``academie.receipt.<hand id>``) for the audit page.
A tampered answer or live frame is said in the page, which loads the hand again.
Screenshots of the alert in French and English, on a desktop and a 390 px phone."""

from __future__ import annotations

import hashlib
import json
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from django.utils import timezone
from playwright.sync_api import Page, Route

from games import selectors
from games.engine.seals import SEALS, seals_of, shown_hash
from games.engine.simulate import run
from games.engine.verify import check_receipts, read_keys
from games.engine.visibility import redact_events
from games.models import Hand
from games.services import casual_table_create

from .conftest import fits, shot, sign_in, wait_for_js

pytestmark = [pytest.mark.postgres, pytest.mark.browser]

PASSWORD = "pw-for-tests"
CHAIN_JS = Path(__file__).resolve().parents[2] / "frontend" / "static" / "frontend" / "chain.js"
LOADED = "window.tablePage && window.tablePage.current() !== null"
#: The page's chain check has caught up with all it was given.
CHECKED = "window.tablePage.chain.queue.then(() => true)"


def _table(user: Any, game: str, bots: int, share_window: timedelta | None = None) -> Hand:
    partie = casual_table_create(creator=user, game=game, players=[user],
                                 bots=["heuristic"] * bots, at=timezone.now(),
                                 options={"compulsory_announce": False} if game == "commere"
                                 else None,
                                 move_timeout=timedelta(seconds=60),
                                 forced_move_delay=timedelta(0), comet_window=timedelta(0),
                                 pause_between_hands=timedelta(minutes=10),
                                 share_window=share_window)
    return Hand.objects.get(partie=partie)


def _open(page: Page, server: Any, hand: Hand, username: str, language: str) -> list[str]:
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(f"{error}\n{error.stack}"))
    page.context.set_extra_http_headers({"Accept-Language": language})
    sign_in(page, server.url, username, PASSWORD, f"/hands/{hand.pk}/")
    wait_for_js(page, LOADED)
    return errors


def _play_out(page: Page) -> int:
    """Click the first card or move offered until the hand is over; returns how many."""
    moves = 0
    end = time.monotonic() + 120
    while page.evaluate("window.tablePage.current().status") != "over":
        assert time.monotonic() < end, "the hand did not end"
        offered = page.locator("#hand button:not([disabled]), #actions button")
        if offered.count() == 0:
            page.wait_for_timeout(100)
            continue
        seq = page.evaluate("window.tablePage.current().seq")
        offered.first.click()
        wait_for_js(page, f"window.tablePage.current().seq > {seq} || "
                          f"document.getElementById('error').textContent !== ''")
        assert page.locator("#error").inner_text() == ""
        moves += 1
    return moves


def _kept(page: Page, hand: Hand) -> Any:
    return page.evaluate(f"JSON.parse(localStorage.getItem('academie.receipt.{hand.pk}'))")


def _checkpoint(receipt: dict[str, Any]) -> bytes:
    """What a receipt is signed over: canonical(["academie.checkpoint/1", hand, seq, hash])."""
    return json.dumps(["academie.checkpoint/1", receipt["hand"], receipt["seq"],
                       receipt["hash"]], separators=(",", ":"), ensure_ascii=False).encode()


def _frames(page: Page) -> list[dict[str, Any]]:
    """The live frames the page receives from now on."""
    frames: list[dict[str, Any]] = []
    page.on("websocket", lambda ws: ws.on(
        "framereceived", lambda payload: frames.append(json.loads(payload))))
    return frames


def _caught_up(page: Page, last: int) -> None:
    """The page's check has reached the hand's ``last`` seq from the commitment, unbroken."""
    wait_for_js(page, f"window.tablePage.chain.hashes.size === {last + 1}"
                      f" || window.tablePage.chain.broken")
    assert page.evaluate(CHECKED)
    assert page.evaluate("window.tablePage.chain.broken") is False
    assert page.evaluate("window.tablePage.chain.hashes.size") == last + 1


def _requests(page: Page, path: str) -> list[str]:
    """The GET requests of ``path`` the page makes from now on."""
    seen: list[str] = []
    page.on("request", lambda r: seen.append(r.url) if r.method == "GET"
            and r.url.split("?")[0].endswith(path) else None)
    return seen


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_a_player_keeps_the_signed_receipt_of_the_last_seq_of_the_hand_he_played(
        live_server_process: Any, page: Page, django_user_model: Any, tmp_path: Path) -> None:
    alice = django_user_model.objects.create_user("alice", password=PASSWORD)
    hand = _table(alice, "comet", bots=2)
    frames = _frames(page)
    page.set_viewport_size({"width": 1280, "height": 900})
    errors = _open(page, live_server_process, hand, "alice", "fr-FR,fr")
    assert page.evaluate("window.tablePage.current().format") == 3

    assert _play_out(page) > 0
    # The others' moves came to her with their "by" hidden, its seal in its place.
    assert any(f["event"]["by"] is None and f["event"]["seals"]["by"].startswith("sealed:")
               for f in frames if f.get("event"))
    hand.refresh_from_db()
    assert hand.status == Hand.Status.OVER
    last = page.evaluate("window.tablePage.current().seq")
    assert last == hand.last_seq
    # The page checked every event of the hand, from the commitment (seq 0) to the last, and
    # found no break.
    _caught_up(page, last)
    assert not page.locator("#chain-alert").is_visible()
    shot(page, tmp_path, "receipts-1-over-fr")

    # The receipt is the service's signature, under a key it publishes, on the hash the
    # record has at that seq.
    receipt = _kept(page, hand)
    assert set(receipt) == {"hand", "seq", "hash", "key", "sig"}
    assert receipt["hand"] == str(hand.pk) and receipt["seq"] == last
    keys = page.request.get(f"{live_server_process.url}/api/keys").json()
    key = next(k for k in keys["keys"] if k["id"] == receipt["key"])
    public = bytes.fromhex(key["public"])
    assert hashlib.sha256(public).hexdigest()[:16] == key["id"]
    Ed25519PublicKey.from_public_bytes(public).verify(bytes.fromhex(receipt["sig"]),
                                                      _checkpoint(receipt))
    record = selectors.hand_record(hand=hand)
    assert record["events"][last - 1]["hash"] == receipt["hash"] == record["digest"]
    assert check_receipts(record, [receipt], read_keys(keys)) == 1
    assert errors == []


def _tamper_events(route: Route) -> None:
    """The /events answer with its first event's time changed, its hash left as it was."""
    response = route.fetch()
    body = response.json()
    body["events"][0]["at"] = "2000-01-01T00:00:00Z"
    route.fulfill(response=response, json=body)


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_a_tampered_events_answer_is_said_in_french_and_the_hand_loaded_again(
        live_server_process: Any, page: Page, django_user_model: Any, tmp_path: Path) -> None:
    bruno = django_user_model.objects.create_user("bruno", password=PASSWORD)
    hand = _table(bruno, "commere", bots=3)
    # Only the page's first /events answer is changed; the reload gets the service's own.
    page.route(f"**/api/hands/{hand.pk}/events", _tamper_events, times=1)
    views = _requests(page, f"/api/hands/{hand.pk}/")
    events = _requests(page, f"/api/hands/{hand.pk}/events")
    page.set_viewport_size({"width": 1280, "height": 900})
    errors = _open(page, live_server_process, hand, "bruno", "fr-FR,fr")

    alert = page.locator("#chain-alert")
    alert.wait_for(state="visible")
    assert alert.get_attribute("role") == "alert"
    assert alert.get_attribute("data-seq") == "1"
    wait_for_js(page, "document.getElementById('chain-said').textContent"
                      ".includes('a été rechargée')")
    assert page.evaluate(CHECKED)
    said = alert.inner_text()
    assert said.startswith("Attention : ce que le serveur a envoyé de cette main")
    assert "(événement 1)" in said and "a été rechargée" in said
    assert len(views) >= 2 and len(events) >= 2  # the view and the events, loaded again
    shot(page, tmp_path, "receipts-2-break-fr")
    page.set_viewport_size({"width": 390, "height": 844})
    assert alert.is_visible() and fits(page, 390)
    shot(page, tmp_path, "receipts-3-break-phone-fr")

    # The check started again from the service's own answer: the hand is played to its end
    # with no other break, and its last receipt kept.
    assert page.evaluate("window.tablePage.chain.broken") is False
    _play_out(page)
    hand.refresh_from_db()
    _caught_up(page, hand.last_seq)
    assert alert.get_attribute("data-seq") == "1"
    assert _kept(page, hand)["hash"] == hand.last_hash
    assert errors == []


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_a_forged_live_frame_is_said_in_english_and_the_hand_loaded_again(
        live_server_process: Any, page: Page, django_user_model: Any, tmp_path: Path) -> None:
    chloe = django_user_model.objects.create_user("chloe", password=PASSWORD)
    hand = _table(chloe, "comet", bots=2)
    page.set_viewport_size({"width": 1280, "height": 900})
    errors = _open(page, live_server_process, hand, "chloe", "en")
    # Her turn (or the hand's end): nothing moves at the table until she plays.
    wait_for_js(page, "window.tablePage.current().legal_moves.length > 0"
                      " || window.tablePage.current().status === 'over'")
    seen = page.evaluate("window.tablePage.current().seq")
    _caught_up(page, seen)
    log_before = page.locator("#log").inner_text()
    views = _requests(page, f"/api/hands/{hand.pk}/")

    # A frame as the live channel sends them, one seq on, whose event is not the service's:
    # another seat plays a card, with a made-up chain.
    page.evaluate("""() => {
      const h = window.tablePage.current();
      const event = {seq: h.seq + 1, type: "play", at: new Date().toISOString(), by: null,
                     seat: 1, card: "KS", prev: "0".repeat(64), hash: "1".repeat(64),
                     seals: {by: "sealed:" + "2".repeat(64)}};
      window.tablePage.framed(Object.assign({}, h, {kind: "hand", seq: h.seq + 1, event,
                                                     receipt: null}));
    }""")
    alert = page.locator("#chain-alert")
    alert.wait_for(state="visible")
    wait_for_js(page, "document.getElementById('chain-said').textContent.includes('was loaded')")
    _caught_up(page, seen)
    said = alert.inner_text()
    assert said.startswith("Warning: what the server sent of this hand did not follow")
    assert f"(event {seen + 1})" in said
    assert alert.get_attribute("data-reason") == "hash"
    assert len(views) >= 1
    # The page shows the hand as the service has it again: the forged play is not in the log.
    hand.refresh_from_db()
    assert page.evaluate("window.tablePage.current().seq") == hand.last_seq
    assert page.locator("#log").inner_text() == log_before
    shot(page, tmp_path, "receipts-4-break-en")
    page.set_viewport_size({"width": 390, "height": 844})
    assert alert.is_visible() and fits(page, 390)
    shot(page, tmp_path, "receipts-5-break-phone-en")
    assert _kept(page, hand)["seq"] == hand.last_seq
    assert errors == []


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_a_version_2_hand_is_played_without_a_chain_check_or_receipt(
        live_server_process: Any, page: Page, django_user_model: Any,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The first hand is dealt here, in the test's process, as the service dealt hands before
    # version 3.
    monkeypatch.setattr("games.services.parties.RECORD_FORMAT", 2)
    denis = django_user_model.objects.create_user("denis", password=PASSWORD)
    hand = _table(denis, "comet", bots=2)
    assert hand.record_format == 2
    errors = _open(page, live_server_process, hand, "denis", "en")
    assert page.evaluate("window.tablePage.current().format") == 2
    _play_out(page)
    assert page.evaluate(CHECKED)
    assert page.evaluate("window.tablePage.chain.on") is False
    assert not page.locator("#chain-alert").is_visible()
    assert _kept(page, hand) is None
    assert errors == []


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_a_spectator_holds_the_chain_of_a_hand_whose_passed_cards_he_may_not_see(
        live_server_process: Any, page: Page, browser: Any, django_user_model: Any) -> None:
    alice = django_user_model.objects.create_user("alice", password=PASSWORD)
    django_user_model.objects.create_user("sophie", password=PASSWORD, is_staff=True)
    # The hand waits for Alice's share: Sophie's page is open, its live socket too, before
    # the deal.
    hand = _table(alice, "commere", bots=3, share_window=timedelta(seconds=60))
    watching = browser.new_context(viewport={"width": 390, "height": 844})
    spectator = watching.new_page()
    frames = _frames(spectator)
    spectator_errors = _open(spectator, live_server_process, hand, "sophie", "en")
    assert spectator.evaluate("window.tablePage.current().your_seat") is None
    wait_for_js(spectator, "!!window.live && window.live.socket.readyState === 1")
    # Alice comes to the table: her share deals, the bots pass their cards, she plays.
    errors = _open(page, live_server_process, hand, "alice", "en")
    _play_out(page)
    hand.refresh_from_db()
    for viewer in (page, spectator):
        _caught_up(viewer, hand.last_seq)
        assert not viewer.locator("#chain-alert").is_visible()
        assert _kept(viewer, hand)["hash"] == hand.last_hash
    # The cards passed between the others came to her hidden, their seals in their place;
    # her page checked each one's hash as it came.
    live = [f["event"] for f in frames if f.get("event") and f["hand"] == str(hand.pk)]
    assert len(live) > 5
    # (Alice's share is her browser's: the deal, and whether cards were passed at all, is
    # not fixed; every player's move is, and how each was made is hidden from a spectator.)
    passed = [e for e in live if e["type"] in ("offer", "give_back")]
    assert all(e["card"] is None and e["seals"]["card"].startswith("sealed:")
               for e in passed), passed
    moves = [e for e in live if "by" in e.get("seals", {})]
    assert moves and all(e["by"] is None and e["seals"]["by"].startswith("sealed:")
                         for e in moves), moves
    assert errors == [] and spectator_errors == []
    watching.close()


def _shown_hands(tmp_path: Path) -> list[dict[str, Any]]:
    """Version-3 hands of both games from the simulator, each as every seat and a spectator
    are shown it during play (hidden values null, seals), and as its record has it (in
    clear, no seals: the page derives them from the revealed seed)."""
    cases = []
    for game, seats in (("commere", 5), ("comet", 3)):
        folder = tmp_path / game
        run(game_name=game, players=seats, hands=2, seed=f"receipts-{game}",
            bots=["heuristic", "random", "timeout"], options=None, chips=100, export=folder,
            shares="random")
        for path in sorted(folder.glob("*.json")):
            record = json.loads(path.read_text())
            sealed = [{**e, SEALS: seals} if (seals := seals_of(e, record["seed"])) else e
                      for e in record["events"]]
            for viewer in [None, *range(seats)]:
                cases.append({"seed": None, "events": redact_events(
                    sealed, viewer=viewer, n_seats=seats, over=False, chain=True)})
            cases.append({"seed": record["seed"], "events": record["events"]})
    return cases


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_the_pages_hash_of_a_shown_event_is_the_services(
        live_server_process: Any, browser: Any, tmp_path: Path) -> None:
    cases = _shown_hands(tmp_path)
    hidden = [e for c in cases for e in c["events"] if None in e.values()]
    assert len(hidden) > 100  # hidden cards, seats and "by"s, each standing in by its seal
    assert all(shown_hash(e) == e["hash"] for c in cases if c["seed"] is None
               for e in c["events"])
    # A page of the service (a secure context, for WebCrypto), chain.js added as a test's
    # script: the page's CSP would refuse it.
    context = browser.new_context(bypass_csp=True)
    page = context.new_page()
    page.goto(f"{live_server_process.url}/accounts/login/")
    page.add_script_tag(path=str(CHAIN_JS))
    computed = page.evaluate("""cases => Promise.all(cases.map(c => Promise.all(
      c.events.map(e => window.AcademieChain.shownHash(e, c.seed)))))""", cases)
    assert computed == [[e["hash"] for e in c["events"]] for c in cases]
    context.close()
