"""The lobby in a real browser, on a 390 px phone and a desktop: a player signs in, sees his
invitations, accepts one by clicking (and is told why he cannot accept a second), finds his
table, and switches the page to English. Screenshots of each step are kept in the test's
folder (and copied to /tmp/shots for a look)."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone
from playwright.sync_api import Page, expect

from games.models import Hand, Partie
from games.services import casual_table_create
from tournaments.models import Membership
from tournaments.services import club_create, membership_add, soiree_create

from .conftest import shot, sign_in, wait_for_js

pytestmark = [pytest.mark.postgres, pytest.mark.browser]

PASSWORD = "pw-for-tests"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}



def _fits(page: Page, width: int) -> bool:
    """Nothing on the page is wider than the screen (no sideways scrolling)."""
    return bool(page.evaluate(f"document.documentElement.scrollWidth <= {width}"))



@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_a_player_accepts_an_invitation_on_a_phone_and_reads_the_lobby_in_english(
        live_server_process: Any, page: Page, django_user_model: Any, tmp_path: Path,
        organiser: Any) -> None:
    alice, bruno, chloe = (django_user_model.objects.create_user(name, password=PASSWORD)
                           for name in ("alice", "bruno", "chloe"))
    club = club_create(name="Cercle des Lumières", slug="lumieres", organiser=organiser)
    membership_add(club=club, user=bruno, role=Membership.Role.PLAYER)
    now = timezone.now()
    soiree_create(club=club, name="Jeudi de la Comète", starts_at=now + timedelta(minutes=30),
                  ends_at=now + timedelta(hours=3), game="comet")
    slow = {"move_timeout": timedelta(seconds=30), "pause_between_hands": timedelta(minutes=10)}
    alice_s = casual_table_create(creator=alice, game="comet", players=[alice, bruno],
                                  bots=["heuristic"], buy_in=100, at=now, **slow)
    chloe_s = casual_table_create(creator=chloe, game="commere",
                                  players=[chloe, bruno, alice], bots=["heuristic"], at=now,
                                  **slow)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.set_viewport_size(PHONE)
    page.context.set_extra_http_headers({"Accept-Language": "fr-FR,fr;q=0.9"})

    page.goto(f"{live_server_process.url}/accounts/login/?next=/")
    page.fill("#id_username", "bruno")
    page.fill("#id_password", PASSWORD)
    page.click("main button[type=submit]")

    invitation = page.locator(f'#invitations [data-partie="{alice_s.pk}"]')
    expect(invitation).to_contain_text("alice vous invite à une table de Comet")
    expect(invitation).to_contain_text("Cave : 100 jetons")
    expect(page.locator(f'#invitations [data-partie="{chloe_s.pk}"]')).to_contain_text(
        "alice (en attente)")
    assert page.evaluate("document.documentElement.lang") == "fr"
    assert _fits(page, PHONE["width"])
    shot(page, tmp_path, "lobby-1-phone-fr-invitations")

    invitation.get_by_role("button", name="Accepter").click()

    # The last acceptance starts the table: the page opens it; the lobby then shows it first.
    page.wait_for_url(re.compile(r".*/hands/[0-9a-f-]+/$"))
    hand = Hand.objects.get(partie=alice_s)
    assert page.url.endswith(f"/hands/{hand.pk}/")
    page.goto(f"{live_server_process.url}/")
    table_now = page.locator("#now a.go")
    expect(table_now).to_have_text("Aller à la table (donne 1)")
    assert table_now.get_attribute("href") == f"/hands/{hand.pk}/"
    assert Partie.objects.get(pk=alice_s.pk).status == Partie.Status.PLAYING
    expect(page.locator(f'#invitations [data-partie="{alice_s.pk}"]')).to_have_count(0)
    # A second table while he sits at the first: the API says no, and the page says why.
    other = page.locator(f'#invitations [data-partie="{chloe_s.pk}"]')
    other.get_by_role("button", name="Accepter").click()
    expect(other.get_by_role("alert")).to_contain_text(
        "Refusé : bruno joue déjà à une autre table amicale")
    assert _fits(page, PHONE["width"])
    shot(page, tmp_path, "lobby-2-phone-fr-seated")

    page.select_option("#language-switch select", "en")
    page.click("#language-switch button")

    expect(page.locator("#now-title")).to_have_text("Your table now")
    expect(page.locator("#now a.go")).to_have_text("Go to the table (hand 1)")
    expect(other).to_contain_text("chloe invites you to a table of Ma commère")
    expect(page.get_by_role("button", name="Create the table")).to_be_visible()
    assert page.evaluate("document.documentElement.lang") == "en"
    assert _fits(page, PHONE["width"])
    shot(page, tmp_path, "lobby-3-phone-en")

    page.set_viewport_size(DESKTOP)
    shot(page, tmp_path, "lobby-4-desktop-en")
    page.select_option("#language-switch select", "fr")
    page.click("#language-switch button")
    expect(page.locator("#now-title")).to_have_text("Votre table")
    wait_for_js(page, "document.readyState === 'complete'")
    shot(page, tmp_path, "lobby-5-desktop-fr")

    # A new casual table from the form: first a name nobody has, then chloe and a bot (he
    # does not sit: he plays at alice's); then he cancels it.
    form = page.locator("#new-table")
    form.get_by_label("Joueurs à inviter").fill("zed")
    form.get_by_role("button", name="Créer la table").click()
    expect(form.get_by_role("alert")).to_contain_text("joueur inconnu : zed")
    form.get_by_label("Joueurs à inviter").fill("chloe")
    form.get_by_label("M’y asseoir aussi (à la première place)").uncheck()
    form.get_by_label("Robots pour compléter la table").fill("1")
    form.get_by_label("Cave (jetons)").fill("20")
    # The Comet's window is chosen here, long enough for "ask me"; Ma commère has none.
    window = form.get_by_label("Comète : chaque occasion de la jouer dure")
    form.get_by_label("Jeu").select_option("commere")
    expect(window).to_be_hidden()
    form.get_by_label("Jeu").select_option("comet")
    window.select_option("15")
    form.get_by_role("button", name="Créer la table").click()
    made = page.locator("#casual .panel", has_text="table ouverte par bruno")
    expect(made).to_contain_text("chloe (en attente)")
    expect(made).to_contain_text("cave de 20 jetons")
    shot(page, tmp_path, "lobby-6-desktop-fr-new-table")
    made.get_by_role("button", name="Annuler la table").click()
    expect(page.locator("#casual .panel", has_text="table ouverte par bruno")).to_have_count(0)
    made_partie = Partie.objects.get(created_by=bruno)
    assert made_partie.status == Partie.Status.CANCELLED
    # People's timings: 30 s a decision, and the Comet window chosen.
    assert (made_partie.move_timeout, made_partie.comet_window) == (
        timedelta(seconds=30), timedelta(seconds=15))
    assert errors == []


@pytest.mark.parametrize("live_server_process", ["embedded"], indirect=True)
def test_stopping_a_casual_table_asks_first_and_a_no_changes_nothing(
        live_server_process: Any, page: Page, django_user_model: Any, tmp_path: Path) -> None:
    alice = django_user_model.objects.create_user("alice", password=PASSWORD)
    partie = casual_table_create(creator=alice, game="comet", players=[alice],
                                 bots=["heuristic"], at=timezone.now(),
                                 move_timeout=timedelta(minutes=5))
    page.set_viewport_size(PHONE)
    page.context.set_extra_http_headers({"Accept-Language": "fr"})
    sign_in(page, live_server_process.url, "alice", PASSWORD)
    stop = page.get_by_role("button", name="Arrêter après cette donne")
    asked: list[str] = []

    def answer(accept: bool) -> Any:
        def said(dialog: Any) -> None:
            asked.append(dialog.message)
            dialog.accept() if accept else dialog.dismiss()
        return said

    page.once("dialog", answer(False))
    stop.click()
    expect(stop).to_be_visible()  # a "no": the table plays on
    partie.refresh_from_db()
    assert partie.deal_until is None and partie.status == Partie.Status.PLAYING

    page.once("dialog", answer(True))
    stop.click()
    expect(page.locator("#casual .stopping")).to_have_text(
        "La table s’arrêtera après cette donne.")
    partie.refresh_from_db()
    assert partie.deal_until is not None
    assert asked == ["Arrêter cette table après la donne en cours ? Aucune autre donne ne sera "
                     "distribuée ; c’est sans retour."] * 2
    shot(page, tmp_path, "lobby-stop-asked-fr-390")
