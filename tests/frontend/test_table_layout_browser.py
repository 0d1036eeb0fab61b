"""The live card table's layout, measured in a real browser: the "Leave the table" button keeps
its place however the clock beside it reads (on a desktop, a tablet and a phone), the six seats
of a Comet table sit inside the felt, clear of one another and of what its centre shows, without
a sideways scroll, and on a 390 x 844 phone the top of the page (the site's header and the
table's bar) ends by 64 px, every control in it within reach, the tray's cards in view.
Every hand is dealt from a seed the test names. Screenshots go to the test's folder and
/tmp/shots."""

from __future__ import annotations

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

from .conftest import SHOTS, shot, wait_for_js
from .test_table_browser import PASSWORD, _sign_in

pytestmark = [pytest.mark.postgres, pytest.mark.browser]

DESKTOP = {"width": 1280, "height": 900}
TABLET = {"width": 820, "height": 1180}  # where the bar takes two rows
PHONE = {"width": 390, "height": 844}
LOADED = "window.tablePage && window.tablePage.current() !== null"
CAUGHT_UP = "window.tablePage.motion.behind() === 0"
MY_TURN = (
    "(h => h.status === 'playing' && (h.to_act || []).includes(h.your_seat)"
    " && h.legal_moves.length > 0)(window.tablePage.current())"
)

# The button's box, and what the clock beside it says (the desktop's clock, the phone's tray).
LEAVE = """() => { const r = document.getElementById('leave').getBoundingClientRect();
  const clock = document.getElementById('clock');
  // Its place on the page (a scroll moves the whole page, not the button within it).
  return {x: r.x + scrollX, y: r.y + scrollY, width: r.width,
          clock: clock.hidden ? null : clock.textContent.trim()
            .replace(/\\s+/g, ' '), tray: document.getElementById('tray-clock').textContent,
          hint: !document.getElementById('sound-hint').hidden}; }"""

# Every seat's box, the felt's (its border included: a seat may not cross it) and that of
# what the felt's centre shows (the phase, the pot, the runs, the talon).
SEAT_BOXES = """() => { const box = e => { const r = e.getBoundingClientRect();
    return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
  return {felt: box(document.querySelector('.tp-felt')),
          seats: [...document.querySelectorAll('#seats li')].map(li => ({
            seat: li.dataset.seat, ...box(li)})),
          centre: [...document.querySelectorAll('#centre > :not(.sr-only)')].map(e => ({
            what: e.className || e.tagName, ...box(e)}))}; }"""

# What a phone shows at the top: the bottom of the site's header and of the table's bar.
TOP = """() => ({header: document.querySelector('body > header').getBoundingClientRect().bottom,
              bar: document.querySelector('.tp-bar').getBoundingClientRect().bottom})"""

# The controls of the site's header and of the table's bar that cannot be brought wholly into
# the window (scrolled to as a keyboard's focus would), and those smaller than a fingertip's
# 14 px; the header and the page scrolled back after. Those the phone's table page leaves out
# (the password's link: the lobby has it) are not counted.
CONTROLS_OUT_OF_REACH = """() => {
  const controls = [...document.querySelectorAll('body > header a, body > header button,'
    + ' body > header select, .tp-bar input, .tp-bar button')]
    .filter(e => getComputedStyle(e.closest('.hdr-more') || e).display !== 'none');
  const out = [];
  for (const e of controls) {
    e.scrollIntoView({block: 'nearest', inline: 'nearest'});
    const r = e.getBoundingClientRect();
    if (r.width < 14 || r.height < 14 || r.left < -0.5 || r.top < -0.5
        || r.right > innerWidth + 0.5 || r.bottom > innerHeight + 0.5)
      out.push(`${e.id || e.name || e.textContent.trim()}: ${r.left},${r.top}`
               + ` ${r.width}x${r.height}`);
  }
  document.querySelector('body > header').scrollLeft = 0;
  scrollTo(0, 0);
  return controls.length ? out : ['no control'];
}"""

# The tray's cards that are not wholly in the window.
CARDS_OUT_OF_VIEW = """() => [...document.querySelectorAll('#hand button')].filter(b => {
  const r = b.getBoundingClientRect();
  return r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth;
}).map(b => b.dataset.card)"""


def _view(page: Page, tmp_path: Path, name: str) -> None:
    """A screenshot of what the window shows (a phone's screen: the tray at its bottom), kept
    with the test and in /tmp/shots."""
    path = tmp_path / f"{name}.png"
    page.screenshot(path=str(path))
    SHOTS.mkdir(exist_ok=True)
    shutil.copy(path, SHOTS / path.name)


def _comet_table(
    user: Any,
    monkeypatch: pytest.MonkeyPatch,
    bots: int,
    base: str,
    move_timeout: timedelta = timedelta(seconds=30),
) -> Hand:
    """A Comet table of the person and ``bots`` heuristic bots, dealt from the seed stream
    ``base``; every bot's move and every only move played at once."""
    monkeypatch.setattr("games.services.parties.new_seed", seed_stream(f"table-layout-{base}"))
    partie = casual_table_create(
        creator=user,
        game="comet",
        players=[user],
        bots=["heuristic"] * bots,
        at=timezone.now(),
        move_timeout=move_timeout,
        forced_move_delay=timedelta(0),
        comet_window=timedelta(0),
        pause_between_hands=timedelta(minutes=10),
    )
    return Hand.objects.get(partie=partie)


def _click_a_card(page: Page) -> None:
    """On her turn, click her first card that may be played (or her first move), and wait until
    the table has moved on."""
    wait_for_js(page, MY_TURN)
    seq = page.evaluate("window.tablePage.current().seq")
    buttons = page.locator("#hand button:not([disabled]), #actions button")
    buttons.first.click()
    wait_for_js(
        page,
        f"window.tablePage.current().seq > {seq} || "
        "document.getElementById('error').textContent !== ''",
    )
    assert page.locator("#error").inner_text() == ""


def _play_out(page: Page) -> None:
    """Click her cards until the hand is over."""
    end = time.monotonic() + 120
    while page.evaluate("window.tablePage.current().status") != "over":
        assert time.monotonic() < end, "the hand did not end"
        if page.evaluate(MY_TURN):
            _click_a_card(page)
        else:
            page.wait_for_timeout(100)


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
@pytest.mark.parametrize("size", [DESKTOP, TABLET, PHONE], ids=["1280", "820", "390"])
def test_the_leave_button_keeps_its_place_whatever_the_clock_says(
    live_server_process: Any,
    page: Page,
    django_user_model: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    size: dict[str, int],
) -> None:
    alice = django_user_model.objects.create_user("alice", password=PASSWORD)
    # 100 s a move: the countdown reads three figures, then two, then one.
    hand = _comet_table(alice, monkeypatch, 2, "leave", move_timeout=timedelta(seconds=100))
    page.set_viewport_size(size)
    page.context.set_extra_http_headers({"Accept-Language": "fr-FR,fr"})
    # The page's clock is the test's: the countdown moves on when the test says, not with the
    # machine's pace (it also runs on by itself, as a clock does).
    page.clock.install()
    errors = _sign_in(page, live_server_process, f"/hands/{hand.pk}/", "alice")
    wait_for_js(page, LOADED + " && " + MY_TURN)
    seen = [page.evaluate(LEAVE)]  # 100 s, and the sound's hint under its switch
    assert seen[0]["hint"], seen
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    shot(page, tmp_path, f"layout-leave-start-{size['width']}")

    def tick(ms: int) -> None:
        before = page.evaluate("document.getElementById('tray-clock').textContent")
        page.clock.run_for(ms)
        wait_for_js(page, f"document.getElementById('tray-clock').textContent !== {before!r}")
        seen.append(page.evaluate(LEAVE))

    tick(1000)  # a second on
    tick(89_000)  # two figures: about 10 s
    tick(1000)  # one figure, and urgent
    # The clock's longest words, drawn by the page's own clock: a Comet's chance, and a
    # countdown of four figures; then the hand's own deadline again.
    for kind, seconds in (("comet", 5), ("timeout", 1000)):
        page.evaluate(f"""Table.drawClock({{...window.tablePage.current(), deadline_kind: {kind!r},
                          deadline: new Date(Date.now() + {seconds * 1000}).toISOString()}})""")
        seen.append(page.evaluate(LEAVE))
    page.evaluate("Table.drawClock(window.tablePage.current())")
    # Her turns to the end of the hand, each with a deadline of its own (her first click lets
    # the sound play, which takes its hint away); at the end the clock is gone.
    end = time.monotonic() + 120
    while page.evaluate("window.tablePage.current().status") != "over":
        assert time.monotonic() < end, "the hand did not end"
        if page.evaluate(MY_TURN):
            seen.append(page.evaluate(LEAVE))
            _click_a_card(page)
        else:
            page.wait_for_timeout(100)
    seen.append(page.evaluate(LEAVE))
    wait_for_js(page, CAUGHT_UP)
    shot(page, tmp_path, f"layout-leave-over-{size['width']}")

    # On a desktop and a tablet the clock beside the button said all this; on a phone the
    # tray did (the bar's clock gives way to it there).
    said = {s["clock"] for s in seen} if size != PHONE else {s["tray"] for s in seen}
    assert len(said) >= 6 and (None in said or size == PHONE), seen
    assert not seen[-1]["hint"], seen
    assert max(s["x"] for s in seen) - min(s["x"] for s in seen) <= 1, seen
    assert max(s["y"] for s in seen) - min(s["y"] for s in seen) <= 1, seen
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert errors == []


def _apart(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return (
        a["right"] <= b["left"]
        or b["right"] <= a["left"]
        or a["bottom"] <= b["top"]
        or b["bottom"] <= a["top"]
    )


def _seats_fit(page: Page, width: int) -> None:
    """Every seat inside the felt, no two overlapping nor over what the centre shows, and no
    sideways scroll on the page."""
    wait_for_js(page, CAUGHT_UP)
    boxes = page.evaluate(SEAT_BOXES)
    felt, seats, centre = boxes["felt"], boxes["seats"], boxes["centre"]
    assert len(seats) == 6 and centre, boxes
    for seat in seats:
        assert (
            seat["left"] >= felt["left"]
            and seat["right"] <= felt["right"]
            and seat["top"] >= felt["top"]
            and seat["bottom"] <= felt["bottom"]
        ), (width, seat, felt)
        for shown in centre:
            assert _apart(seat, shown), (width, seat, shown)
    for i, a in enumerate(seats):
        for b in seats[i + 1 :]:
            assert _apart(a, b), (width, a, b)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), width


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_the_six_seats_of_a_comet_table_sit_inside_the_felt(
    live_server_process: Any,
    page: Page,
    django_user_model: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    alice = django_user_model.objects.create_user("alice", password=PASSWORD)
    hand = _comet_table(alice, monkeypatch, 5, "six")
    page.set_viewport_size(DESKTOP)
    page.context.set_extra_http_headers({"Accept-Language": "fr-FR,fr"})
    errors = _sign_in(page, live_server_process, f"/hands/{hand.pk}/", "alice")
    wait_for_js(page, LOADED + " && " + MY_TURN)
    assert page.locator("#seats li").count() == 6
    for size in (DESKTOP, TABLET, PHONE):  # as dealt
        page.set_viewport_size(size)
        _seats_fit(page, size["width"])
        shot(page, tmp_path, f"layout-six-dealt-{size['width']}")
    # Mid-hand: each seat shows the last card it played, and the runs fill the centre.
    page.set_viewport_size(DESKTOP)
    end = time.monotonic() + 120
    while page.evaluate("window.tablePage.current().view.played.length") < 12:
        assert time.monotonic() < end, "the hand did not go on"
        assert page.evaluate("window.tablePage.current().status") != "over"
        _click_a_card(page)
    for size in (DESKTOP, TABLET, PHONE):
        page.set_viewport_size(size)
        _seats_fit(page, size["width"])
        shot(page, tmp_path, f"layout-six-mid-{size['width']}")
    # Over: every run as long as it grew, and the result.
    page.set_viewport_size(DESKTOP)
    _play_out(page)
    for size in (DESKTOP, TABLET, PHONE):
        page.set_viewport_size(size)
        _seats_fit(page, size["width"])
        shot(page, tmp_path, f"layout-six-over-{size['width']}")
    assert errors == []


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
@pytest.mark.parametrize(
    ("language", "sound_on", "leave"),
    [
        ("fr", "Son quand c’est à moi", "Quitter la table"),
        ("en", "Sound on my turn", "Leave the table"),
    ],
)
def test_on_a_phone_the_top_of_the_table_is_short_and_the_tray_in_view(
    live_server_process: Any,
    page: Page,
    django_user_model: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    language: str,
    sound_on: str,
    leave: str,
) -> None:
    alice = django_user_model.objects.create_user("alice", password=PASSWORD)
    hand = _comet_table(alice, monkeypatch, 2, "top")
    page.set_viewport_size(PHONE)
    page.context.set_extra_http_headers({"Accept-Language": language})
    errors = _sign_in(page, live_server_process, f"/hands/{hand.pk}/", "alice")
    wait_for_js(page, LOADED + " && " + MY_TURN)
    # As the page opens (the sound's hint shown until her first click): the site's header
    # and the table's bar end by 64 px, and her cards are all in view in the tray.
    top = page.evaluate(TOP)
    assert top["bar"] <= 64, top
    assert page.locator("#sound-hint").is_visible()
    assert page.evaluate(CARDS_OUT_OF_VIEW) == []
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    _view(page, tmp_path, f"layout-top-390-view-{language}")
    shot(page, tmp_path, f"layout-top-390-{language}")
    # Every control of the header and of the bar is within reach, the sound's switch still
    # named in words, and they work.
    assert page.evaluate(CONTROLS_OUT_OF_REACH) == []
    sound = page.get_by_role("checkbox", name=sound_on, exact=True)
    sound.click()
    assert not sound.is_checked() and page.locator("#sound-hint").is_hidden()
    sound.click()
    assert sound.is_checked()
    page.get_by_role("button", name=leave, exact=True).click()
    assert page.locator("#leave-choice").is_visible()
    page.locator("#leave-choice [data-leave='']").click()
    assert page.locator("#leave-choice").is_hidden()
    assert page.evaluate(TOP) == top and page.evaluate(CARDS_OUT_OF_VIEW) == []
    # Her turn's cards, played on: the tray keeps them in view.
    _click_a_card(page)
    wait_for_js(page, MY_TURN + " || window.tablePage.current().status === 'over'")
    assert page.evaluate(CARDS_OUT_OF_VIEW) == []
    _view(page, tmp_path, f"layout-top-390-played-{language}")

    # The lobby, on the same phone: its header as before (it wraps there), in the window.
    page.goto(f"{live_server_process.url}/")
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert page.evaluate(CONTROLS_OUT_OF_REACH.replace(", .tp-bar input, .tp-bar button", "")) == []
    assert page.evaluate(
        "document.querySelector('body > header').scrollWidth"
        " <= document.querySelector('body > header').clientWidth"
    )
    shot(page, tmp_path, f"layout-lobby-390-{language}")
    assert errors == []
