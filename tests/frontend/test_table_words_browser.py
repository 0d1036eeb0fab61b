"""What the table says at the Comet's chances, in French: a card the service will play for
the person is said to be played for her (not "à vous"), the Comet's button during another's
turn says what it would do, the Comet on the felt is told apart from the real card, the
cards' corners read V, D, R, and a partie's end says where to go next, on a reload too."""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from games.engine.deal import commitment
from games.engine.registry import get_game
from games.engine.shares import SharedDeal, first_dealer_v2
from games.models import Hand
from games.services import casual_table_create
from games.services.parties import RECORD_FORMAT

from .conftest import shot, wait_for_js
from .test_table_browser import PASSWORD, _comet_seed, _hand_played_offline, _play_out, _sign_in

pytestmark = [pytest.mark.postgres, pytest.mark.browser]

LOADED = "window.tablePage && window.tablePage.current() !== null"
FRENCH_CORNERS = {"A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "V", "D", "R"}

# Every drawing of the viewer's tray, with the hand it drew: what the prompt said, whose turn
# it was, the viewer's legal moves, and the deadline's kind.
RECORD_PROMPTS = """() => {
  window.prompts = [];
  const draw = Table.drawMine;
  Table.drawMine = h => {
    draw(h);
    window.prompts.push({prompt: document.getElementById('prompt').textContent,
                         mine: (h.to_act || []).includes(h.your_seat), kind: h.deadline_kind,
                         types: (h.legal_moves || []).map(m => m.type),
                         enabled: document.querySelectorAll('#hand button:not([disabled])').length,
                         status: h.status, phase: h.view.phase,
                         plan: document.getElementById('plan').textContent,
                         comet_played: (h.view.played || []).some(p => p.stands_for),
                         comet_card: (b => b ? b.disabled : null)(
                           document.querySelector('#hand [data-card="9D"]'))});
  };
}"""


def _comet_holder(seed: str, seats: int) -> int:
    """The seat the service's deal from ``seed`` gives the Comet (the deal of the tests: the
    seed alone, as ``ACADEMIE_SHARE_WINDOW`` is 0)."""
    engine = SharedDeal(get_game("comet"), seed, version=RECORD_FORMAT)
    options = get_game("comet").normalise_options({})
    started = engine.start(
        dealer=first_dealer_v2(seed, seats),
        seats=[{"seat": s, "player": f"p{s}"} for s in range(seats)], options=options,
        chips_before={str(s): 0 for s in range(seats)}, pot_before=0,
        commitment=commitment(seed), comet_payment_due=options["comet_payment"])
    state = engine.apply(engine.initial_state(), started)
    for event in engine.deal(state):
        state = engine.apply(state, event)
    return int(state.comet_holder)


def _bot_comet_for_a_real_card() -> str:
    """The first seed, in a fixed order, whose hand sees a bot play the Comet for a card still
    in a hand (not the 8D at the gap), the hand played as ``_play_out`` plays alice's part."""
    for i in range(1000):
        seed = f"{i:064x}"
        end: list[Any] = []
        _hand_played_offline("comet", seed, 2, {}, end=end)
        played = SharedDeal(get_game("comet"), seed, version=RECORD_FORMAT).view(end[0], 0)[
            "played"]
        if any(p.get("stands_for") not in (None, "8D") and p["seat"] != 0 for p in played):
            return seed
    raise AssertionError("no seed has a bot play the Comet for a real card")


def _table(monkeypatch: pytest.MonkeyPatch, alice: Any, seed: str,
           window: timedelta = timedelta(seconds=1)) -> Hand:
    """A one-deal Comet table of alice and two bots, dealt from ``seed``, whose chances last
    a second (every card of a run waits it while the Comet is in a hand); the partie closes a
    second after its hand."""
    monkeypatch.setattr("games.services.parties.new_seed", lambda: seed)
    partie = casual_table_create(creator=alice, game="comet", players=[alice],
                                 bots=["heuristic", "heuristic"], at=timezone.now(),
                                 options={"deals": 1}, move_timeout=timedelta(seconds=30),
                                 forced_move_delay=timedelta(0), comet_window=window,
                                 pause_between_hands=timedelta(seconds=1))
    return Hand.objects.get(partie=partie)


def _until_over(page: Page) -> None:
    end = time.monotonic() + 180
    while page.evaluate("window.tablePage.current().status") != "over":
        assert time.monotonic() < end, "the hand did not end"
        page.wait_for_timeout(200)


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_a_card_the_service_plays_at_a_comet_chance_is_said_played_for_her(
        live_server_process: Any, page: Page, django_user_model: Any, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    alice = django_user_model.objects.create_user("alice", password=PASSWORD)
    # The first seed, in a fixed order, that gives a bot the Comet: alice's run cards are her
    # only moves, each played for her when the chance ends.
    seed = next(s for s in (f"{i:064x}" for i in range(200)) if _comet_holder(s, 3) != 0)
    hand = _table(monkeypatch, alice, seed)
    page.set_viewport_size({"width": 390, "height": 844})
    page.context.set_extra_http_headers({"Accept-Language": "fr"})
    errors = _sign_in(page, live_server_process, f"/hands/{hand.pk}/", "alice")
    wait_for_js(page, LOADED)
    page.evaluate(RECORD_PROMPTS)
    _play_out(page)  # her openings, if any; every other card of hers is played for her

    seen = page.evaluate("window.prompts")
    forced = [p for p in seen if p["mine"] and p["kind"] == "comet" and len(p["types"]) == 1]
    assert forced, seen
    for p in forced:  # said to be played for her, and nothing of hers to click
        assert p["prompt"].startswith(
            "Votre seul coup, joué pour vous à la fin de l’occasion de la Comète, sauf si son "
            "détenteur joue la Comète à sa place : "), p
        assert "À vous" not in p["prompt"] and p["enabled"] == 0, p
    shot(page, tmp_path, "forced-at-a-chance-fr-390")
    assert errors == []


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_the_comets_holder_is_told_what_its_button_does_and_the_felt_marks_it(
        live_server_process: Any, page: Page, django_user_model: Any, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    alice = django_user_model.objects.create_user("alice", password=PASSWORD)
    hand = _table(monkeypatch, alice, _comet_seed())  # alice holds the Comet
    page.set_viewport_size({"width": 1280, "height": 900})
    page.context.set_extra_http_headers({"Accept-Language": "fr"})
    errors = _sign_in(page, live_server_process, f"/hands/{hand.pk}/", "alice")
    wait_for_js(page, LOADED)

    # A French pack's corners: valet, dame, roi.
    corners = page.locator("#hand button").evaluate_all(
        "bs => bs.map(b => [b.dataset.card, b.querySelector('.pc b').textContent])")
    assert {face for _, face in corners} <= FRENCH_CORNERS, corners
    for card, face in corners:
        assert face == {"J": "V", "Q": "D", "K": "R", "T": "10"}.get(card[0], card[0]), corners
    assert any(card[0] in "JQK" for card, _ in corners), corners

    # "Ask me" is not offered where a chance (1 s) leaves no time to decide, and says why.
    page.locator("#orders summary").click()
    ask = page.get_by_label("me demander à chaque fois")
    expect(ask).to_be_disabled()
    expect(page.locator("#ask-refused")).to_have_text(
        "Pas à cette table : chaque occasion dure 1 s, trop peu pour décider (il faut au moins "
        "8 s). Votre consigne décide, et le bouton « jouer la Comète » la joue quand vous voulez.")

    # With "ask me" (offered from 8 s), the page's own words for her two decisions at a
    # chance, drawn from a hand as the server sends it: her card awaited, and a blocked run.
    page.evaluate("Table.T.comet_order.order = 'ask'")
    asked = page.evaluate("""() => {
      const h = window.tablePage.current(), me = h.your_seat;
      const at = (view, legal) => { Table.drawMine({...h, status: 'playing', to_act: [me],
        deadline_kind: 'comet', legal_moves: legal,
        view: {...h.view, hand: ['9D', '2S'], ...view}});
        return document.getElementById('prompt').textContent; };
      return [at({phase: 'run', run: {suit: 'S', next_card: '2S'}},
                 [{type: 'play', card: '2S'}, {type: 'comet'}]),
              at({phase: 'blocked', run: {suit: 'S', blocked: 'played'}},
                 [{type: 'comet'}, {type: 'keep_comet'}])]; }""")
    assert asked == [
        "À vous : jouez votre carte ou la Comète avant la fin de l’occasion ; sinon votre carte "
        "est jouée pour vous et vous gardez la Comète.",
        "La suite est bloquée : sa carte suivante a déjà été jouée. Jouez la Comète pour la "
        "continuer (chaque autre joueur vous paie), ou gardez-la ; si vous ne faites rien avant "
        "la fin de l’occasion, vous la gardez."], asked
    page.evaluate("Table.T.comet_order.order = 'blocked';"
                  " Table.drawMine(window.tablePage.current())")

    page.evaluate(RECORD_PROMPTS)
    _play_out(page)  # her order ("blocked", the default) plays the Comet for her
    seen = page.evaluate("window.prompts")
    chances = [p for p in seen if not p["mine"] and "comet" in p["types"]
               and p["status"] != "over"]
    assert chances, seen
    for p in chances:  # the button's meaning, said while another's card is awaited
        assert ("Vous avez la Comète : si vous le voulez, jouez-la maintenant ; elle remplace "
                "la carte attendue (l") in p["prompt"], p
        assert "chaque autre joueur vous paie 1. Sinon, votre consigne décide." in p["prompt"], p
        # Played by its own button only: the lit 9♦ in her hand is not a second way.
        assert p["comet_card"] is True, p

    # Her own decisions at a chance are her order's, said so (never a rushed "à vous"); at the
    # blocked run of a suit she holds, her order ("blocked") plays the Comet.
    own = [p for p in seen if p["mine"] and p["kind"] == "comet" and "comet" in p["types"]]
    assert any(p["phase"] == "blocked" for p in own), seen
    for p in own:
        if p["phase"] == "blocked":  # why the run stopped, then what her order does
            assert p["prompt"].startswith("La suite est bloquée"), p
            assert "Votre consigne joue la Comète pour vous" in p["prompt"], p
        else:
            assert p["prompt"].startswith("Votre consigne "), p
    # Once she has played it, the line under her hand says so (not "you do not hold it").
    after = [p for p in seen if p["comet_played"] and p["status"] != "over"]
    assert after, seen
    for p in after:
        assert p["plan"] == ("Vous avez joué la Comète dans cette donne : votre consigne attend "
                             "la prochaine donne où vous l’aurez."), p

    # The Comet lies on the felt as the card it stood for, with a star; the felt says so. In
    # this deal it carried a diamond run over the gap: no real eight of diamonds will follow.
    played = page.evaluate("window.tablePage.current().view.played")
    assert [p["stands_for"] for p in played if p.get("stands_for")] == ["8D"], played
    note = page.locator("#centre .tp-comet-note")
    expect(note).to_have_text("★ marque la Comète, jouée pour le huit de carreau, la carte "
                              "retirée du jeu : elle a fait passer la suite par-dessus le trou.")
    shot(page, tmp_path, "comet-note-fr-1280")

    # One deal: the partie is over; the empty tray gives way to where she goes next.
    closed = page.locator("#closed")
    expect(closed).to_contain_text("La partie est terminée.")
    expect(closed.get_by_role("link", name="Retour à l’accueil")).to_have_attribute("href", "/")
    expect(closed.get_by_role("link", name="Ouvrir une nouvelle table")).to_have_attribute(
        "href", "/#new")
    expect(page.locator("#mine")).to_be_hidden()
    expect(page.locator("#leave")).to_be_hidden()
    shot(page, tmp_path, "partie-over-fr-1280")

    page.reload()  # the same, when the page opens on the partie's last hand
    wait_for_js(page, LOADED)
    expect(page.locator("#closed")).to_contain_text("La partie est terminée.")
    expect(page.locator("#closed").get_by_role("link", name="Retour à l’accueil")).to_be_visible()
    expect(page.locator("#mine")).to_be_hidden()
    page.set_viewport_size({"width": 390, "height": 844})
    shot(page, tmp_path, "partie-over-fr-390")
    assert errors == []


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_the_felt_says_the_real_card_the_comet_stood_for_is_still_to_come(
        live_server_process: Any, page: Page, django_user_model: Any, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    alice = django_user_model.objects.create_user("alice", password=PASSWORD)
    hand = _table(monkeypatch, alice, _bot_comet_for_a_real_card(), window=timedelta(0))
    page.set_viewport_size({"width": 390, "height": 844})
    page.context.set_extra_http_headers({"Accept-Language": "fr"})
    errors = _sign_in(page, live_server_process, f"/hands/{hand.pk}/", "alice")
    wait_for_js(page, LOADED)
    _play_out(page)

    played = page.evaluate("window.tablePage.current().view.played")
    (card,) = [p["stands_for"] for p in played if p.get("stands_for")]
    assert card != "8D", played
    words = page.evaluate("JSON.parse(document.getElementById('table-words').textContent)")
    named = words["card"].format(rank=words["the_rank"][card[0]], suit=words["suit"][card[1]])
    expect(page.locator("#centre .tp-comet-note")).to_have_text(
        f"★ marque la Comète, jouée pour {named} ; la vraie carte reste dans la main de son "
        "joueur jusqu’à ce qu’une suite la demande.")
    shot(page, tmp_path, "comet-note-real-card-fr-390")
    assert errors == []
