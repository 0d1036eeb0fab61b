"""Cards that move, and a felt that holds them: a played card travels to its place (not when
the person prefers reduced motion), the Comet's runs lie one row per suit on a desktop and on
a 390 px phone however long they grow, the Comet shows as the card it stands for, and the
4 seats of Ma commère sit inside the felt. Screenshots go to the test's folder and /tmp/shots;
with ACADEMIE_DOC_SHOTS=1 also to docs/screenshots/ (the ones the README shows)."""

from __future__ import annotations

import os
import shutil
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import Page

from games.models import Hand
from games.services import casual_table_create
from tests.seeding import seed_stream

from .conftest import ROOT, shot, wait_for_js
from .test_table_browser import PASSWORD, _comet_seed, _commere_seed_base, _sign_in

pytestmark = [pytest.mark.postgres, pytest.mark.browser]

DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
LOADED = "window.tablePage && window.tablePage.current() !== null"
CAUGHT_UP = "window.tablePage.motion.behind() === 0"

# Every frame that has an animation running counts (a card in flight lasts 150-240 ms: a few
# frames at least).
WATCH_ANIMATIONS = """() => {
  window.animatedFrames = 0;
  const look = () => {
    if (document.getAnimations().length) window.animatedFrames += 1;
    requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
}"""

# Each run of the felt: its cards' tops, its height and a card's, and how far its cards reach.
RUNS = """() => [...document.querySelectorAll('#centre .tp-run')].map(row => {
  const box = row.getBoundingClientRect();
  const cards = [...row.querySelectorAll('.pc')].map(c => c.getBoundingClientRect());
  return {suit: row.dataset.suit, cards: cards.length,
          tops: new Set(cards.map(c => Math.round(c.top))).size,
          height: box.height, card: cards[0].height,
          right: Math.max(...cards.map(c => c.right)), rowRight: box.right,
          feltRight: document.querySelector('.tp-felt').getBoundingClientRect().right};
})"""

# Each seat's box and the felt's (the felt's border included: a seat may not cross it).
SEATS = """() => { const felt = document.querySelector('.tp-felt').getBoundingClientRect();
  return [...document.querySelectorAll('#seats li')].map(li => {
    const r = li.getBoundingClientRect();
    return {seat: li.dataset.seat, inside: r.left >= felt.left && r.right <= felt.right
                                           && r.top >= felt.top && r.bottom <= felt.bottom};
  }); }"""

# The Comet on the felt: its name, its mark, the rank it shows and the suit of its row.
COMET_IN_RUN = """() => { const c = document.querySelector('#centre .tp-run .pc.comet');
  return c && {label: c.getAttribute('aria-label'), role: c.getAttribute('role'),
               mark: getComputedStyle(c, '::after').content, rank: c.querySelector('b').textContent,
               row: c.closest('.tp-run').dataset.suit}; }"""


def _keep(page: Page, tmp_path: Path, name: str, full_page: bool) -> None:
    """A screenshot kept with the test, in /tmp/shots, and in docs/screenshots/ when asked."""
    if full_page:
        path = shot(page, tmp_path, name)
    else:  # what a phone shows: the felt above, the tray at the bottom
        path = tmp_path / f"{name}.png"
        page.screenshot(path=str(path))
    if os.environ.get("ACADEMIE_DOC_SHOTS"):
        (ROOT / "docs" / "screenshots").mkdir(exist_ok=True)
        shutil.copy(path, ROOT / "docs" / "screenshots" / f"{name}.png")


def _comet_table(user: Any, monkeypatch: pytest.MonkeyPatch) -> Hand:
    """A Comet table against two bots, on a deal that gives the person the Comet, which she
    plays at a blocked run; every bot's move and every only move played at once."""
    seed = _comet_seed()
    monkeypatch.setattr("games.services.parties.new_seed", lambda: seed)
    partie = casual_table_create(creator=user, game="comet", players=[user],
                                 bots=["heuristic", "heuristic"], at=timezone.now(),
                                 move_timeout=timedelta(seconds=30),
                                 forced_move_delay=timedelta(0), comet_window=timedelta(0),
                                 pause_between_hands=timedelta(minutes=10))
    return Hand.objects.get(partie=partie)


def _play_until(page: Page, done: str) -> int:
    """Click her cards (the Comet's button at a blocked run; otherwise her first playable card,
    the Comet's own last) until ``done`` is true in the page or the hand is over; returns the
    clicks made."""
    clicks = 0
    end = time.monotonic() + 120
    play_the_comet = page.evaluate(
        "JSON.parse(document.getElementById('table-words').textContent).button.comet")
    while not page.evaluate(done) and page.evaluate(
            "window.tablePage.current().status") != "over":
        assert time.monotonic() < end, "the hand did not end"
        h = page.evaluate("(h => ({mine: (h.to_act || []).includes(h.your_seat), seq: h.seq,"
                          " phase: h.view.phase}))(window.tablePage.current())")
        comet = page.get_by_role("button", name=play_the_comet, exact=True)
        cards = page.locator("#hand button:not([disabled]):not([data-card='9D'])")
        others = page.locator("#hand button:not([disabled]), #actions button")
        if h["phase"] == "blocked" and comet.count():
            target = comet.first
        elif h["mine"] and cards.count():
            target = cards.first
        elif h["mine"] and others.count():
            target = others.first
        else:
            page.wait_for_timeout(100)
            continue
        target.click()
        clicks += 1
        wait_for_js(page, f"window.tablePage.current().seq > {h['seq']} || "
                          "document.getElementById('error').textContent !== ''")
        assert page.locator("#error").inner_text() == ""
    return clicks


def _runs_in_one_row_each(page: Page, width: int) -> list[dict[str, Any]]:
    """The runs once the felt has caught up: each one row high, inside the felt, and no
    sideways scroll on the page."""
    wait_for_js(page, CAUGHT_UP)
    runs = page.evaluate(RUNS)
    assert runs, "no run on the felt"
    for run in runs:
        assert run["tops"] == 1, (width, run)  # one row: every card at the same height
        assert run["height"] < 1.5 * run["card"], (width, run)
        assert run["right"] <= run["rowRight"] + 1 <= run["feltRight"], (width, run)
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    return runs


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
@pytest.mark.parametrize("motion", ["no-preference", "reduce"])
def test_a_played_card_travels_to_its_run_unless_motion_is_reduced(
        live_server_process: Any, page: Page, django_user_model: Any, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, motion: str) -> None:
    alice = django_user_model.objects.create_user("alice", password=PASSWORD)
    hand = _comet_table(alice, monkeypatch)
    page.set_viewport_size(DESKTOP)
    page.emulate_media(reduced_motion=motion)
    page.context.set_extra_http_headers({"Accept-Language": "en"})
    errors = _sign_in(page, live_server_process, f"/hands/{hand.pk}/", "alice")
    wait_for_js(page, LOADED)
    page.evaluate(WATCH_ANIMATIONS)
    # The turn's sound waits for her first click anywhere, and says so until then.
    assert page.locator("#sound-hint").inner_text() == "Click anywhere to turn the sound on"
    assert page.locator("#sound-hint").is_visible()

    _play_until(page, "false")
    assert page.locator("#sound-hint").is_hidden()  # her first click let the sound play
    wait_for_js(page, CAUGHT_UP)
    flown, skipped, seqs = page.evaluate(
        "(m => [m.flown, m.skipped, m.seqs])(window.tablePage.motion)")
    frames = page.evaluate("window.animatedFrames")
    if motion == "reduce":
        assert flown == 0 and frames == 0, (flown, frames)
    else:
        # Her cards and the bots' travelled, one after another in the order played (the bots
        # play at once here: when a burst leaves the felt far behind, it skips the oldest, so
        # how many fly depends on the machine's pace; her own never wait behind a burst).
        assert flown >= 3 and frames > flown, (flown, skipped, frames)
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs), seqs
    # Either way the felt ends as the hand did: every card played is on it, the Comet as the
    # card it stood for.
    played = page.evaluate("window.tablePage.current().view.played")
    assert page.locator("#centre .tp-run .pc").count() == len(played)
    (comet,) = [p for p in played if p.get("stands_for")]
    names = {"A": "ace", "2": "two", "3": "three", "4": "four", "5": "five", "6": "six",
             "7": "seven", "8": "eight", "9": "nine", "T": "ten", "J": "jack", "Q": "queen",
             "K": "king"}
    suits = {"C": "clubs", "D": "diamonds", "H": "hearts", "S": "spades"}
    card = comet["stands_for"]
    assert page.get_by_role("img", name=f"the Comet for the {names[card[0]]} of {suits[card[1]]}",
                            exact=True).count() >= 1
    assert page.evaluate("document.getAnimations().length") == 0
    if motion == "reduce":
        shot(page, tmp_path, "comet-over-reduce-en")
    else:
        _keep(page, tmp_path, "table-comet-over-1280-en", full_page=True)
    assert errors == []


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_late_in_a_comet_hand_each_suit_is_one_row_on_a_desktop_and_on_a_phone(
        live_server_process: Any, page: Page, django_user_model: Any, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    alice = django_user_model.objects.create_user("alice", password=PASSWORD)
    hand = _comet_table(alice, monkeypatch)
    page.set_viewport_size(DESKTOP)
    page.context.set_extra_http_headers({"Accept-Language": "fr-FR,fr"})
    errors = _sign_in(page, live_server_process, f"/hands/{hand.pk}/", "alice")
    wait_for_js(page, LOADED)

    # Mid-hand, as a person sees it on a desktop and on a phone.
    _play_until(page, "window.tablePage.current().view.played.length >= 24")
    _runs_in_one_row_each(page, 1280)
    _keep(page, tmp_path, "table-comet-1280", full_page=True)
    page.set_viewport_size(PHONE)
    _runs_in_one_row_each(page, 390)
    _keep(page, tmp_path, "table-comet-390", full_page=False)

    # Played to its end: the runs as long as they grow, and the Comet among them.
    page.set_viewport_size(DESKTOP)
    _play_until(page, "false")
    for size in (DESKTOP, PHONE):
        page.set_viewport_size(size)
        runs = _runs_in_one_row_each(page, size["width"])
        assert max(run["cards"] for run in runs) >= 10, runs
        assert all(seat["inside"] for seat in page.evaluate(SEATS))
    shot(page, tmp_path, "table-comet-over-390")

    # The Comet shows as the card it stood for, in that card's row, named and marked so.
    played = page.evaluate("window.tablePage.current().view.played")
    (stands_for,) = [p["stands_for"] for p in played if p.get("stands_for")]
    words = page.evaluate("JSON.parse(document.getElementById('table-words').textContent)")
    card = words["card"].format(rank=words["the_rank"][stands_for[0]],
                                suit=words["suit"][stands_for[1]])
    comet = page.evaluate(COMET_IN_RUN)
    assert comet.pop("mark") not in ("none", "normal", ""), comet  # its star
    assert comet == {"label": words["comet_for"].format(card=card), "role": "img",
                     "rank": "10" if stands_for[0] == "T"
                     else words["face"].get(stands_for[0], stands_for[0]),
                     "row": stands_for[1]}, comet
    assert card in comet["label"] and "Comète" in comet["label"]
    # Under the runs, what the star means (at the gap: the card out of the pack).
    note = words["comet_note_gap" if stands_for == "8D" else "comet_note"].format(card=card)
    assert page.locator("#centre .tp-comet-note").inner_text() == note
    assert errors == []


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_the_four_seats_of_ma_commere_sit_inside_the_felt(
        live_server_process: Any, page: Page, django_user_model: Any, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("games.services.parties.new_seed", seed_stream(_commere_seed_base()))
    alice = django_user_model.objects.create_user("alice", password=PASSWORD)
    partie = casual_table_create(creator=alice, game="commere", players=[alice],
                                 bots=["heuristic", "random", "heuristic"], at=timezone.now(),
                                 options={"compulsory_announce": False},
                                 move_timeout=timedelta(seconds=30),
                                 forced_move_delay=timedelta(0), comet_window=timedelta(0),
                                 pause_between_hands=timedelta(minutes=10))
    hand = Hand.objects.get(partie=partie)
    page.set_viewport_size(DESKTOP)
    page.context.set_extra_http_headers({"Accept-Language": "fr-FR,fr"})
    errors = _sign_in(page, live_server_process, f"/hands/{hand.pk}/", "alice")
    # Her first decision: an offer, with the bots' levels at their seats.
    wait_for_js(page, LOADED + " && window.tablePage.current().legal_moves.length > 0")
    wait_for_js(page, CAUGHT_UP)
    assert page.locator("#seats li").count() == 4
    for size in (DESKTOP, PHONE):
        page.set_viewport_size(size)
        seats = page.evaluate(SEATS)
        assert all(seat["inside"] for seat in seats), (size, seats)
        assert page.evaluate("document.documentElement.scrollWidth") <= size["width"]
        _keep(page, tmp_path, f"table-commere-{size['width']}", full_page=size == DESKTOP)
    assert errors == []
