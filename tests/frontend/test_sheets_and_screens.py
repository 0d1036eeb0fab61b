"""The soirée's sheets hold up: the results PDF in French with its game's columns only, the
seating printed alone, and status words that follow the soirée's state."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from tests.pdf import pdf_pages_text
from tournaments.models import Club, Membership, Soiree
from tournaments.selectors import settlement_of
from tournaments.services import checkin, rebuy

pytestmark = pytest.mark.django_db


def pdf_text(content: bytes) -> str:
    """The PDF's text as a reader extracts it, columns kept in place, pages apart (\\f)."""
    return pdf_pages_text(content)


@pytest.fixture
def commere(django_user_model: Any) -> dict[str, Any]:
    club = Club.objects.create(name="Cercle", slug="cercle")
    ana = django_user_model.objects.create_user("ana")
    organiser = django_user_model.objects.create_user("olga")
    Membership.objects.create(club=club, user=ana)
    Membership.objects.create(club=club, user=organiser, role=Membership.Role.ORGANISER)
    now = timezone.now()
    soiree = Soiree.objects.create(club=club, name="Vendredi soir — Ma commère",
                                   starts_at=now - timedelta(hours=3), ends_at=now,
                                   game="commere", buy_in=50)
    checkin(soiree=soiree, user=ana, at=now - timedelta(hours=3))
    rebuy(soiree=soiree, user=ana, request_id="first")
    standings = {"players": [
        {"player": "ana", "net": 7, "hands_won": 2, "hands": 3, "comets": 0, "tricons": 1},
        {"player": "Voltaire", "net": -7, "hands_won": 1, "hands": 3, "comets": 0,
         "tricons": 0}], "computed_at": now.isoformat()}
    Soiree.objects.filter(pk=soiree.pk).update(
        status=Soiree.Status.CLOSED, opened_at=now - timedelta(hours=3) + timedelta(minutes=4),
        closed_at=now - timedelta(minutes=32), standings=standings,
        settlement=settlement_of(standings))
    soiree.refresh_from_db()
    return {"soiree": soiree, "ana": ana, "organiser": organiser}


def test_the_pdf_is_french_with_its_dashes_accents_and_only_its_game_s_columns(
        client: Any, commere: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # Hands of parties 9 and 10 and hands 9 and 100: their digests must stay in one column.
    hands = [{"table": 1, "partie": partie, "hand": hand, "id": f"{partie:08d}-hand-{hand}",
              "ok": True, "digest": f"{partie:02d}{hand:03d}" + "ab" * 30}
             for partie, hand in ((9, 9), (10, 10), (10, 100))]
    monkeypatch.setattr("tournaments.sheets.hands_of", lambda soiree: hands)
    client.force_login(commere["ana"])

    text = pdf_text(client.get(f"/soirees/{commere['soiree'].pk}/results.pdf").content)

    assert "Vendredi soir — Ma commère" in text and "?" not in text
    assert "Comètes" not in text
    header = next(line for line in text.splitlines() if "jetons finaux" in line)
    assert re.search(r"rang\s+joueur\s+cave\s+recaves\s+jetons finaux\s+net\s+donnes gagnées"
                     r"\s+donnes\s+tricons", header)
    ana = next(line for line in text.splitlines() if re.search(r"\bana\b", line)).split()
    assert ana == ["1", "ana", "50", "50", "107", "7", "2", "3", "1"]  # 50 + 50 + 7
    voltaire = next(line for line in text.splitlines() if "Voltaire" in line).split()
    assert voltaire[:5] == ["2", "Voltaire", "–", "–", "–"]  # a bot plays the club's chips
    assert re.search(r"prévu : \d\d/\d\d/\d{4} \d\d:\d\d–\d\d:\d\d", text)
    assert re.search(r"réel : \d\d/\d\d/\d{4} \d\d:\d\d–\d\d:\d\d", text)
    assert "terminée" in text
    digests = [line.index(h["digest"]) for h in hands for line in text.splitlines()
               if h["digest"] in line]
    assert len(digests) == 3 and len(set(digests)) == 1


def test_the_comet_sheet_counts_comets_and_no_tricons(client: Any, commere: Any) -> None:
    Soiree.objects.filter(pk=commere["soiree"].pk).update(game="comet", name="Jeudi — Comet")
    client.force_login(commere["ana"])

    text = pdf_text(client.get(f"/soirees/{commere['soiree'].pk}/results.pdf").content)
    page = client.get(f"/soirees/{commere['soiree'].pk}/results").content.decode()

    assert "Comètes" in text and "tricons" not in text
    assert "<th>Comètes</th>" in page and "tricons" not in page


def test_the_results_page_follows_the_soiree_s_state(client: Any, commere: Any) -> None:
    soiree = commere["soiree"]
    client.force_login(commere["ana"])

    closed = client.get(f"/soirees/{soiree.pk}/results").content.decode()
    Soiree.objects.filter(pk=soiree.pk).update(status=Soiree.Status.OPEN, closed_at=None)
    open_ = client.get(f"/soirees/{soiree.pk}/results").content.decode()
    english = client.get(f"/soirees/{soiree.pk}/results",
                         HTTP_ACCEPT_LANGUAGE="en").content.decode()

    status = re.compile(r'id="results-status"[^>]*>([^<]+)<')
    assert status.search(closed).group(1) == "terminée"
    assert status.search(open_).group(1) == "en cours"
    assert "encore" not in closed
    assert re.search(r"<dt>prévu</dt><dd>[^<]+</dd>\s*<dt>réel</dt><dd>[^<]+…</dd>", open_)
    assert "<th>Comètes</th>" not in closed and "<th>tricons</th>" in closed
    for word in ("rang", "cave", "recaves", "jetons finaux"):
        assert f"<th>{word}</th>" in closed
    assert status.search(english).group(1) in ("open", "in progress")


def test_the_room_screen_knows_a_closed_soiree_is_over(client: Any, commere: Any) -> None:
    client.force_login(commere["ana"])

    page = client.get(f"/soirees/{commere['soiree'].pk}/room").content.decode()

    assert 'data-status="closed"' in page and 'data-over="La soirée est terminée"' in page
    assert 'data-idle="en attente"' in page


def test_the_seating_sheet_holds_the_tables_and_the_seed_and_nothing_else(
        client: Any, commere: Any, outsider: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    seats = [{"player": name, "bot": None} for name in ("ana", "bea", "carl", "dora")]
    rows = [{"table": 1, "round": 1, "status": "over", "seats": seats[:2]},
            {"table": 2, "round": 1, "status": "over", "seats": seats[2:]},
            {"table": 2, "round": 2, "status": "over",
             "seats": [*seats[2:], {"player": "Voltaire", "bot": "h"}]}]
    monkeypatch.setattr("frontend.results.soiree_tables", lambda soiree: rows)
    monkeypatch.setattr("frontend.organiser.soiree_tables", lambda soiree: rows)
    Soiree.objects.filter(pk=commere["soiree"].pk).update(seating_seed="c0ffee" * 4)
    url = f"/soirees/{commere['soiree'].pk}/seating"
    client.force_login(commere["organiser"])

    page = client.get(url).content.decode()
    manage = client.get(f"/soirees/{commere['soiree'].pk}/manage").content.decode()

    blocks = re.findall(r'<section class="seating-block" data-table="(\d+)"', page)
    assert blocks == ["1", "2"]  # each table once: its latest partie
    assert "c0ffee" * 4 in page and "Voltaire" in page and "dora" in page
    assert "<form" not in page.split("<main")[-1] and "late-arrival" not in page
    assert f'href="{url}"' in manage
    for who in (commere["ana"], outsider):
        client.force_login(who)
        assert client.get(url).status_code == 403
