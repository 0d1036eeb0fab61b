"""The card table in a real browser: a person plays whole hands by clicking and by keyboard,
against bots, on a 30 s clock, in French and in English, on a desktop and on a 390 px phone.
Screenshots of each step are kept in the test's folder (and in /tmp/shots for a look)."""

from __future__ import annotations

import contextlib
import json
import random
import re
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import Page

from games import services
from games.engine.base import Event, Move
from games.engine.bots import make_bot
from games.engine.deal import commitment
from games.engine.registry import get_game
from games.engine.shares import SharedDeal, first_dealer_v2
from games.models import Hand
from games.services import casual_table_create
from games.services.parties import RECORD_FORMAT
from tests.seeding import seed_stream

from .conftest import shot, wait_for_js

pytestmark = [pytest.mark.postgres, pytest.mark.browser]

PASSWORD = "pw-for-tests"




CARD = re.compile(r'"([A2-9TJQK][CDHS])"')
SHOWN = {"showdown", "void", "over"}


def _listen(page: Page) -> list[dict[str, Any]]:
    """Every JSON answer of the API and every live frame the page receives, as they come."""
    received: list[dict[str, Any]] = []

    def answer(response: Any) -> None:
        if "/api/" in response.url and response.request.method in ("GET", "POST"):
            # A redirect or an empty answer has no body to hold a card.
            with contextlib.suppress(Exception):
                received.append(response.json())

    page.on("response", answer)
    page.on("websocket", lambda ws: ws.on(
        "framereceived", lambda payload: received.append(json.loads(payload))))
    return received


def _before_the_showdown(payload: dict[str, Any]) -> bool:
    """A hand's view, frame or events, taken while every hand was still hidden."""
    if "events" in payload:
        return not payload["over"] and not any(e["type"] in SHOWN for e in payload["events"])
    view = payload.get("view")
    return isinstance(view, dict) and view.get("phase") not in SHOWN | {None}


def _hidden_cards_seen(received: list[dict[str, Any]], may_see: set[str]) -> set[str]:
    """Cards in what the page received before the showdown that its viewer may not see."""
    return {card for payload in received if _before_the_showdown(payload)
            for card in CARD.findall(json.dumps(payload))} - may_see


def _without_public_names(payload: dict[str, Any]) -> dict[str, Any]:
    """A Comet payload without the cards the rules make public while someone holds them: the
    run's next card, and the card the Comet stood for (RULES.md §2; README's rules notes)."""
    payload = json.loads(json.dumps(payload))
    view = payload.get("view") or {}
    view.pop("run", None)
    events = payload.get("events", []) + ([payload["event"]] if payload.get("event") else [])
    for entry in view.get("played", []) + events:
        entry.pop("stands_for", None)
    return payload


# The seeds of the two hands the person plays: the hand is chosen, not lucky. The service's
# play is replayed offline, as it goes at these tables (no share window in the test settings,
# so no contributor to the deal; no forced-move delay nor Comet window, so every bot's move and
# every only move is played at once), and the first seed in a fixed order that gives the test
# what it needs is taken.

def _person_clicks(game: str, view: dict[str, Any], legal: list[Move],
                   comet_at_block: bool) -> tuple[str, Move]:
    """What ``_play_out`` clicks (by keyboard as well: after each move the page draws the hand
    again and Tab starts over from its first card), and the move it makes: "play the Comet" at
    a blocked run if ``comet_at_block``, else the first card the person may play as the page
    sorts them (the Comet's own card last), else the first move button."""
    if comet_at_block and view["phase"] == "blocked" and Move("comet") in legal:
        return "play the Comet", Move("comet")
    ranks = "A23456789TJQK" if game == "comet" else "23456789TJQKA"
    mine = sorted(view["hand"], key=lambda c: ("SHCD".index(c[1]), ranks.index(c[0])))
    by_card: dict[str, Move] = {}
    for move in legal:
        if move.card:
            by_card[move.card] = move
        elif move.type == "open":  # shown on the suit's lowest card, the Comet not counted
            by_card[next(c for c in mine if c[1] == move.suit and c != "9D")] = move
        elif move.type == "comet":
            by_card["9D"] = move
    cards = [c for c in mine if c in by_card]
    card = next((c for c in cards if c != "9D"), cards[0] if cards else None)
    if card is not None:
        return card, by_card[card]
    move = next(m for m in legal if not m.card)
    return move.type, move


def _hand_played_offline(game: str, seed: str, bots: int, options: dict[str, Any],
                         comet_at_block: bool = False,
                         end: list[Any] | None = None) -> list[tuple[str, str, list[Move]]]:
    """The hand the service deals from ``seed`` to a person at seat 0 and heuristic bots after
    him, played as ``_play_out`` and the bots (``advance.bot_move``) play it: each decision the
    person is asked, as (phase, what he clicks, the legal moves). ``end``: given, the hand's
    last state is added to it."""
    game_engine = get_game(game)
    engine = SharedDeal(game_engine, seed, version=RECORD_FORMAT)
    options = game_engine.normalise_options(options)
    n = bots + 1
    started = engine.start(
        dealer=first_dealer_v2(seed, n), seats=[{"seat": s, "player": f"p{s}"} for s in range(n)],
        options=options, chips_before={str(s): 0 for s in range(n)}, pot_before=0,
        commitment=commitment(seed),
        **({"comet_payment_due": options["comet_payment"]} if game == "comet" else {}))
    state = engine.apply(engine.initial_state(), started)
    events = engine.deal(state)
    seq = 1  # Hand.last_seq: a bot's random draws depend on it

    def play(produced: list[Event]) -> None:
        nonlocal state, seq
        for event in produced:
            state = engine.apply(state, event)
            seq += 1

    def bot_move(seat: int, legal: list[Move], required: bool) -> Move | None:
        rng = random.Random(f"{commitment(seed)}:{seq}:{seat}")
        return make_bot("heuristic", rng).choose(engine, state, seat, legal, required, ())

    play(events)
    decisions = []
    while not engine.is_over(state):
        legal = engine.legal_moves(state)
        seat = engine.to_act(state)[0]
        # A bot that only may play (the Comet's holder at a waiting card) has its chance first.
        for other, moves in legal.items():
            chance = bot_move(other, moves, False) if other not in (0, seat) else None
            if chance is not None:
                play(engine.decide(state, other, chance))
                break
        else:
            if len(legal[seat]) == 1:
                play(engine.decide(state, seat, legal[seat][0], "forced"))
            elif seat:
                move = bot_move(seat, legal[seat], True)
                assert move is not None
                play(engine.decide(state, seat, move))
            else:
                view = engine.view(state, 0)
                name, move = _person_clicks(game, view, legal[0], comet_at_block)
                decisions.append((view["phase"], name, legal[0]))
                play(engine.decide(state, 0, move))
    if end is not None:
        end.append(state)
    return decisions


def _comet_seed() -> str:
    """The first seed, in a fixed order, whose hand gives the Comet to the person, who plays it
    at a blocked run and has nothing left to click after it."""
    for i in range(1000):
        seed = f"{i:064x}"
        decisions = _hand_played_offline("comet", seed, 2, {}, comet_at_block=True)
        if decisions and decisions[-1][:2] == ("blocked", "play the Comet"):
            return seed
    raise AssertionError("no seed gives the person the Comet to play at a blocked run")


def _commere_seed_base() -> str:
    """The first stream base, in a fixed order, whose round asks the person for an offer, a
    give-back, a return under the talon and an announcement (he may announce or exchange)."""
    for i in range(1000):
        base = f"commere-keyboard-{i}"
        decisions = _hand_played_offline("commere", seed_stream(base)(), 3,
                                         {"compulsory_announce": False})
        if {m.type for _, _, legal in decisions for m in legal} >= {
                "offer", "give_back", "return", "announce"}:
            return base
    raise AssertionError("no stream base asks the person for every kind of decision")


def _sign_in(page: Page, server: Any, path: str, username: str) -> list[str]:
    """Sign in and open ``path``; returns the list the page's script errors are added to."""
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(f"{error}\n{error.stack}"))
    page.goto(f"{server.url}/accounts/login/?next={path}")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    return errors


_OUT_OF_VIEW = """() => [...document.querySelectorAll(
    '#hand button:not([disabled]), #actions button, #tray-clock:not([hidden])')]
  .filter(b => { const r = b.getBoundingClientRect();
    return r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth; })
  .map(b => b.id || b.dataset.card || b.textContent)"""


def _play_out(page: Page, prefer: str = "", keyboard: bool = False,
              kinds: set[str] | None = None, prefer_blocked: bool = False,
              in_view: bool = False, order_decides: bool = False) -> list[str]:
    """Click (or Tab and Enter) a legal card or move until the hand is over; returns what was
    clicked. ``prefer``: the accessible name of a button to click whenever it is offered.
    ``order_decides``: the Comet's own question (play it or keep it) is left to her order."""
    clicked: list[str] = []
    end = time.monotonic() + 120
    while page.evaluate("window.tablePage.current().status") != "over":
        assert time.monotonic() < end, "the hand did not end"
        enabled = page.locator("#hand button:not([disabled]), #actions button")
        # The Comet's button stays while a run needs a card; the person clicks on her turn.
        mine = page.evaluate("(h => (h.to_act || []).includes(h.your_seat))"
                             "(window.tablePage.current())")
        if enabled.count() == 0 or not mine:
            page.wait_for_timeout(100)
            continue
        if order_decides and page.evaluate(
                "window.tablePage.current().legal_moves.every("
                "m => m.type === 'comet' || m.type === 'keep_comet')"):
            page.wait_for_timeout(100)
            continue
        seq = page.evaluate("window.tablePage.current().seq")
        if in_view:  # what she may play, and her countdown, in view without a scroll
            assert page.evaluate(_OUT_OF_VIEW) == [], clicked
            assert page.evaluate("scrollY") == 0 and page.evaluate(
                "document.documentElement.scrollWidth") <= page.viewport_size["width"]
        if kinds is not None:  # the kinds of decision the person was asked to make
            kinds.update(page.evaluate(
                "window.tablePage.current().legal_moves.map(m => m.type)"))
            kinds.add("phase:" + page.evaluate("window.tablePage.current().view.phase"))
        at_block = page.evaluate("window.tablePage.current().view.phase") == "blocked"
        chosen = (page.get_by_role("button", name=prefer, exact=True)
                  if prefer and (at_block or not prefer_blocked) else None)
        if chosen is not None and chosen.count():
            target = chosen.first
        else:  # a card (the Comet's own card only when nothing else may be played)
            cards = page.locator("#hand button:not([disabled]):not([data-card='9D'])")
            target = cards.first if cards.count() else enabled.first
        name = target.evaluate("b => (b.querySelector('.sr-only') || b).textContent")
        if keyboard:
            # Tab through the page to a card or move that can be played, then Enter.
            for _ in range(60):
                page.keyboard.press("Tab")
                if page.evaluate("document.activeElement.matches("
                                 "'#hand button:not([disabled]), #actions button')"):
                    break
            name = page.evaluate("(document.activeElement.querySelector('.sr-only')"
                                 " || document.activeElement).textContent")
            page.keyboard.press("Enter")
        else:
            target.click()
        clicked.append(name)
        try:
            wait_for_js(page, f"window.tablePage.current().seq > {seq} || "
                               f"document.getElementById('error').textContent !== ''")
        except AssertionError:
            page.screenshot(path="/tmp/shots/stuck.png", full_page=True)
            raise AssertionError((clicked, page.evaluate(
                "JSON.stringify(window.tablePage.current())"))) from None
        assert page.locator("#error").inner_text() == "", clicked
    return clicked


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_a_person_plays_a_comet_hand_by_clicking_and_plays_the_comet(
        live_server_process: Any, page: Page, django_user_model: Any, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    alice = django_user_model.objects.create_user("alice", password=PASSWORD)
    # A deal that gives him the Comet (9D), which he plays at a blocked run as his last click.
    seed = _comet_seed()
    monkeypatch.setattr("games.services.parties.new_seed", lambda: seed)
    partie = casual_table_create(creator=alice, game="comet", players=[alice],
                                 bots=["heuristic", "heuristic"], at=timezone.now(),
                                 move_timeout=timedelta(seconds=30),
                                 forced_move_delay=timedelta(0), comet_window=timedelta(0),
                                 pause_between_hands=timedelta(minutes=10))
    hand = Hand.objects.get(partie=partie)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.context.set_extra_http_headers({"Accept-Language": "en"})
    errors = _sign_in(page, live_server_process, f"/hands/{hand.pk}/", "alice")
    wait_for_js(page, "window.tablePage && window.tablePage.current() !== null")
    shot(page, tmp_path, "comet-1-start-en")

    # Every card is a button named in words; the others' seats have names and counts.
    names = page.locator("#hand button").evaluate_all(
        "bs => bs.map(b => b.querySelector('.sr-only').textContent)")
    assert page.get_by_role("button", name="nine of diamonds", exact=True).count() == 1
    assert all(" of " in n for n in names)
    assert page.locator("#seats li").count() == 3
    assert page.locator("#seats").inner_text().count("cards") == 3
    assert page.locator("#countdown").inner_text().endswith(" s")

    received = _listen(page)
    kinds: set[str] = set()
    clicked = _play_out(page, prefer="play the Comet", kinds=kinds, prefer_blocked=True)

    shot(page, tmp_path, "comet-2-over-en")
    # The Comet was played at a blocked run: the last thing clicked there.
    assert "phase:blocked" in kinds and clicked[-1] == "play the Comet", (kinds, clicked)
    log = page.locator("#log").inner_text()
    assert "alice (you) plays the Comet for" in log
    assert page.locator("#result").is_visible()
    assert "wins the hand" in page.locator("#result").inner_text()
    assert page.get_by_role("link", name="Audit this hand").is_visible()
    assert errors == []
    # Hidden information: the cards the others still held at the end were never in anything
    # the page received before it, but as the public name of a run's next card.
    final = page.evaluate("window.tablePage.current().view.hands")
    kept = {card for seat, cards in final.items() if seat != "0" for card in cards}
    early = [_without_public_names(p) for p in received
             if p.get("status") == "playing" or p.get("over") is False]
    assert len(early) > 5 and kept
    assert not kept & {c for p in early for c in CARD.findall(json.dumps(p))}


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_a_person_plays_a_ma_commere_round_by_keyboard_on_a_phone(
        live_server_process: Any, page: Page, django_user_model: Any, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Deals under which the round asks him for an offer, a give-back, a talon return and an
    # announcement.
    monkeypatch.setattr("games.services.parties.new_seed", seed_stream(_commere_seed_base()))
    bruno = django_user_model.objects.create_user("bruno", password=PASSWORD)
    partie = casual_table_create(creator=bruno, game="commere", players=[bruno],
                                 bots=["heuristic"] * 3, at=timezone.now(),
                                 options={"compulsory_announce": False},
                                 move_timeout=timedelta(seconds=30),
                                 forced_move_delay=timedelta(0), comet_window=timedelta(0),
                                 pause_between_hands=timedelta(minutes=10))
    hand = Hand.objects.get(partie=partie)
    page.set_viewport_size({"width": 390, "height": 844})
    page.context.set_extra_http_headers({"Accept-Language": "fr-FR,fr"})
    received = _listen(page)
    errors = _sign_in(page, live_server_process, f"/hands/{hand.pk}/", "bruno")
    wait_for_js(page, "window.tablePage && window.tablePage.current() !== null")
    shot(page, tmp_path, "commere-1-phone-fr")
    # In French: the headings, and the cards named in words ("dame de cœur").
    assert page.evaluate("document.documentElement.lang") == "fr"
    assert page.get_by_role("heading", name="Ce qui s’est passé").is_visible()
    names = page.locator("#hand button .sr-only").all_inner_texts()
    assert len(names) == 3 and all(" de " in n for n in names), names

    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    kinds: set[str] = set()
    _play_out(page, keyboard=True, kinds=kinds)

    shot(page, tmp_path, "commere-2-over-phone-fr")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert page.locator("#result").is_visible()
    assert page.locator("#log li").count() > 3
    assert errors == []
    assert kinds >= {"offer", "give_back", "return", "announce"}, kinds
    # Hidden information: before the showdown, no card but those his own hand ever held
    # reached the page, in any answer or live frame.
    own = {card for payload in received if isinstance(payload.get("view"), dict)
           for card in payload["view"].get("hand") or []}
    assert len(received) > 10 and len(own) >= 3
    assert _hidden_cards_seen(received, own) == set()


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_leaving_the_table_and_coming_back(
        live_server_process: Any, page: Page, django_user_model: Any, tmp_path: Path) -> None:
    chloe = django_user_model.objects.create_user("chloe", password=PASSWORD)
    partie = casual_table_create(creator=chloe, game="comet", players=[chloe],
                                 bots=["heuristic"], at=timezone.now(),
                                 move_timeout=timedelta(seconds=30),
                                 forced_move_delay=timedelta(0), comet_window=timedelta(0))
    hand = Hand.objects.get(partie=partie)
    errors = _sign_in(page, live_server_process, f"/hands/{hand.pk}/", "chloe")
    wait_for_js(page, "window.tablePage && window.tablePage.current() !== null")

    page.locator("#leave").click()
    page.locator("#leave-casual [data-leave=timeout]").click()  # the time-out rule plays
    page.wait_for_url(f"{live_server_process.url}/")
    assert partie.seats.get(player=chloe).away is True
    page.goto(f"{live_server_process.url}/hands/{hand.pk}/")
    wait_for_js(page, "window.tablePage && window.tablePage.current() !== null")
    assert page.locator("#away").is_visible() and not page.locator("#leave").is_visible()
    shot(page, tmp_path, "comet-away")
    page.locator("#back").click()
    wait_for_js(page, "document.getElementById('away').hidden")

    assert partie.seats.get(player=chloe).away is False
    assert errors == []


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_a_spectator_watches_a_table_live_and_sees_no_hidden_card(
        live_server_process: Any, page: Page, django_user_model: Any, tmp_path: Path) -> None:
    staff = django_user_model.objects.create_user("sophie", password=PASSWORD, is_staff=True)
    partie = casual_table_create(creator=staff, game="commere", players=[],
                                 bots=["heuristic"] * 4, at=timezone.now(),
                                 options={"rounds": 6}, pause_between_hands=timedelta(seconds=1))
    first = Hand.objects.get(partie=partie)
    received = _listen(page)
    errors = _sign_in(page, live_server_process, f"/hands/{first.pk}/", "sophie")
    wait_for_js(page, "window.tablePage && window.tablePage.current() !== null")

    # The page follows the table from hand to hand, live.
    page.wait_for_url(re.compile(r".*/hands/(?!" + str(first.pk) + r")[0-9a-f-]+/$"),
                      timeout=20_000)
    wait_for_js(page, "window.tablePage && window.tablePage.current() !== null")
    shot(page, tmp_path, "commere-spectator")

    assert not page.locator("#mine").is_visible()  # a spectator has no hand
    assert "Voltaire" in page.locator("#seats").inner_text()  # the club's named bots
    frames = [p for p in received if p.get("kind") == "hand"]
    assert len(frames) > 5
    assert _hidden_cards_seen(received, set()) == set()
    assert errors == []


AXE = Path(__file__).parent / "vendor" / "axe.min.js"  # axe-core 4.14.1, from the npm registry


def _serious_violations(page: Page) -> list[str]:
    page.add_script_tag(path=str(AXE))
    found = page.evaluate("axe.run(document).then(r => r.violations.filter("
                          "v => v.impact === 'serious' || v.impact === 'critical').map("
                          "v => v.id + ': ' + v.nodes.map(n => n.target.join(' ')).join(', ')))")
    return list(found)


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_the_lobby_and_the_table_have_no_serious_accessibility_violation(
        live_server_process: Any, browser: Any, django_user_model: Any) -> None:
    denis = django_user_model.objects.create_user("denis", password=PASSWORD)
    partie = casual_table_create(creator=denis, game="comet", players=[denis],
                                 bots=["heuristic", "heuristic"], at=timezone.now(),
                                 move_timeout=timedelta(seconds=30))
    hand = Hand.objects.get(partie=partie)
    # axe is injected as a script of the test's: the pages' CSP would refuse it.
    context = browser.new_context(bypass_csp=True)
    page = context.new_page()
    _sign_in(page, live_server_process, "/", "denis")
    page.wait_for_url(f"{live_server_process.url}/")

    lobby = _serious_violations(page)
    page.goto(f"{live_server_process.url}/hands/{hand.pk}/")
    wait_for_js(page, "window.tablePage && window.tablePage.current() !== null")
    table = _serious_violations(page)
    context.close()

    assert lobby == [] and table == [], (lobby, table)


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_a_standing_order_plays_alices_comet_at_a_blocked_run_and_she_is_paid(
        live_server_process: Any, page: Page, django_user_model: Any, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The Comet at a person's pace: alice chooses her order before the hand, clicks only
    her own turns, and the service plays her Comet when the rules give her the chance."""
    alice = django_user_model.objects.create_user("alice", password=PASSWORD)
    seed = _comet_seed()
    monkeypatch.setattr("games.services.parties.new_seed", lambda: seed)
    partie = casual_table_create(creator=alice, game="comet", players=[alice],
                                 bots=["heuristic", "heuristic"], at=timezone.now(),
                                 move_timeout=timedelta(seconds=30),
                                 forced_move_delay=timedelta(0),
                                 comet_window=timedelta(milliseconds=300),
                                 pause_between_hands=timedelta(minutes=10))
    hand = Hand.objects.get(partie=partie)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.context.set_extra_http_headers({"Accept-Language": "en"})
    errors = _sign_in(page, live_server_process, f"/hands/{hand.pk}/", "alice")
    wait_for_js(page, "window.tablePage && window.tablePage.current() !== null")
    page.locator("#orders summary").click()
    # An order that never plays first (one that does could play it while the test reads):
    # the plan follows the choice, then the order the test is about.
    page.get_by_label("never play it").check()
    wait_for_js(page, "document.getElementById('plan').textContent.includes('keep it to the end')")
    page.get_by_label("play it when a run I hold a card of is blocked").check()
    wait_for_js(page, "document.getElementById('plan').textContent.includes('blocked run of')")
    assert page.locator("#orders-saved").inner_text() == "Order saved."
    shot(page, tmp_path, "comet-order-en")
    clicked = _play_out(page, order_decides=True)
    assert "play the Comet" not in clicked  # she never had to decide it herself
    shot(page, tmp_path, "comet-order-over-en")
    log = page.locator("#log").inner_text()
    assert "alice (you) plays the Comet for" in log
    assert "to alice (you) (the Comet)" in log  # the payment it brought, said
    events = page.evaluate(f"fetch('/api/hands/{hand.pk}/events').then(r => r.json())")
    comet = [e for e in events["events"] if e["type"] == "comet"]
    assert comet and comet[0]["by"] == "player" and comet[0]["seat"] == 0
    assert errors == []


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_a_click_that_lost_to_the_time_out_rule_says_so_and_the_message_clears(
        live_server_process: Any, page: Page, django_user_model: Any) -> None:
    """No false alarm: the page says what the service played for her, and why, not that
    somebody played first; and the message goes once the table moves on."""
    django_user_model.objects.create_user("alice", password=PASSWORD)
    alice = django_user_model.objects.get(username="alice")
    partie = casual_table_create(creator=alice, game="commere", players=[alice],
                                 bots=["heuristic"] * 3, at=timezone.now(),
                                 options={"compulsory_announce": False},
                                 move_timeout=timedelta(seconds=60),
                                 forced_move_delay=timedelta(0), comet_window=timedelta(0),
                                 pause_between_hands=timedelta(minutes=10))
    hand = Hand.objects.get(partie=partie)
    flowing = {"on": True}
    held: list[Any] = []
    sockets: list[Any] = []

    def relay(ws: Any) -> None:  # the live frames, held back while the race is set up
        sockets.append(ws)
        server = ws.connect_to_server()
        server.on_message(lambda m: ws.send(m) if flowing["on"] else held.append(m))
        ws.on_message(server.send)

    page.route_web_socket(re.compile(".*/ws/.*"), relay)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.context.set_extra_http_headers({"Accept-Language": "en"})
    errors = _sign_in(page, live_server_process, f"/hands/{hand.pk}/", "alice")
    mine = ("(h => h && h.status === 'playing' && (h.to_act || []).includes(0)"
            " && h.deadline_kind === 'timeout')(window.tablePage && window.tablePage.current())")
    wait_for_js(page, mine)
    flowing["on"] = False
    hand.refresh_from_db()
    assert services.deadline_fire(hand_id=hand.pk, seq=hand.last_seq, at=hand.deadline)
    page.locator("#hand button:not([disabled])").first.click()
    wait_for_js(page, "document.getElementById('error').textContent !== ''")
    said = page.locator("#error").inner_text()
    assert said.startswith("Your time was up: the time-out rule played "), said
    assert "played first" not in said
    flowing["on"] = True
    for message in held:
        sockets[-1].send(message)
    wait_for_js(page, mine)
    page.locator("#hand button:not([disabled])").first.click()
    wait_for_js(page, "document.getElementById('error').textContent === ''")
    assert errors == []


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
@pytest.mark.parametrize("game", ["commere", "comet"])
def test_on_a_phone_your_cards_and_the_comet_are_in_view_without_a_scroll(
        live_server_process: Any, page: Page, django_user_model: Any, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch, game: str) -> None:
    """At 390 x 844 a whole Ma commère round, and a Comet hand in which she holds the Comet,
    are played without one scroll: her playable cards, her buttons (the Comet's among them)
    and her countdown sit in the tray at the bottom."""
    if game == "commere":
        monkeypatch.setattr("games.services.parties.new_seed",
                            seed_stream(_commere_seed_base()))
        options: dict[str, Any] = {"compulsory_announce": False}
        bots, window = 3, timedelta(0)
    else:
        seed = _comet_seed()
        monkeypatch.setattr("games.services.parties.new_seed", lambda: seed)
        options, bots, window = {}, 2, timedelta(milliseconds=300)
    alice = django_user_model.objects.create_user("alice", password=PASSWORD)
    partie = casual_table_create(creator=alice, game=game, players=[alice],
                                 bots=["heuristic"] * bots, at=timezone.now(), options=options,
                                 move_timeout=timedelta(seconds=30),
                                 forced_move_delay=timedelta(0), comet_window=window,
                                 pause_between_hands=timedelta(minutes=10))
    if game == "comet":
        services.seat_comet_order(partie_id=partie.pk, user=alice, order="never")
    hand = Hand.objects.get(partie=partie)
    page.set_viewport_size({"width": 390, "height": 844})
    page.context.set_extra_http_headers({"Accept-Language": "fr-FR,fr"})
    errors = _sign_in(page, live_server_process, f"/hands/{hand.pk}/", "alice")
    wait_for_js(page, "window.tablePage && window.tablePage.current() !== null")
    if game == "comet":  # the Comet's button, whenever it may be played: in view too
        wait_for_js(page, "document.querySelector('#actions button') !== null")
        assert page.evaluate(_OUT_OF_VIEW) == []
        shot(page, tmp_path, "comet-phone-fr")
    _play_out(page, in_view=True)
    shot(page, tmp_path, f"{game}-phone-over-fr")
    assert page.locator("#result").is_visible() and page.evaluate("scrollY") == 0
    assert errors == []
