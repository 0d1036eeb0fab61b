"""The results sheet of a soirée: a print-ready page, its PDF, and the standings and settlement
as CSV, for the club's members."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.utils import timezone

from tournaments.models import Club, Membership, Soiree
from tournaments.selectors import settlement_of

pytestmark = pytest.mark.django_db


@pytest.fixture
def closed(django_user_model: Any) -> dict[str, Any]:
    club = Club.objects.create(name="Cercle", slug="cercle")
    member = django_user_model.objects.create_user("ana")
    Membership.objects.create(club=club, user=member)
    stranger = django_user_model.objects.create_user("zoe")
    now = timezone.now()
    standings = {"players": [
        {"player": "ana", "name": "Ana Lenoir", "net": 7, "hands_won": 2, "hands": 3,
         "comets": 1, "tricons": 0}],
        "bots": [{"player": "Voltaire", "net": -7, "hands_won": 1, "hands": 3, "comets": 0,
                  "tricons": 0}], "computed_at": now.isoformat()}
    soiree = Soiree.objects.create(club=club, name="Jeudi", starts_at=now - timedelta(hours=2),
                                   ends_at=now, game="comet", status=Soiree.Status.CLOSED,
                                   standings=standings, settlement=settlement_of(standings))
    return {"soiree": soiree, "member": member, "stranger": stranger}


def test_a_member_reads_prints_and_downloads_the_results(client: Any, closed: Any) -> None:
    client.force_login(closed["member"])
    base = f"/soirees/{closed['soiree'].pk}"

    page = client.get(f"{base}/results")
    pdf = client.get(f"{base}/results.pdf")
    standings = client.get(f"{base}/standings.csv")
    settlement = client.get(f"{base}/settlement.csv")

    assert page.status_code == 200
    text = page.content.decode()
    assert "Le club paie 7 à Ana Lenoir" in text  # French by default; the club pays its bots'
    assert "robot du club" in text
    assert "@media print" not in text and "results.css" in text
    assert pdf["Content-Type"] == "application/pdf" and pdf.content.startswith(b"%PDF")
    # The people ranked, the club's bots apart; the reader's language (French by default).
    assert standings.content.decode().splitlines() == [
        "rang,joueur,nom,type,cave,recaves,jetons finaux,net,donnes gagnées,donnes,Comètes",
        "1,ana,Ana Lenoir,personne,,,,7,2,3,1", ",Voltaire,Voltaire,robot du club,,,,-7,1,3,0"]
    assert settlement.content.decode().splitlines() == ["de,à,montant,type",
                                                        "le club,Ana Lenoir,7,virement"]
    assert 'filename="soiree-' in settlement["Content-Disposition"]


def test_the_pdf_is_made_once_for_each_state_of_the_soiree_and_language(
        client: Any, closed: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from tournaments import sheets
    from tournaments.models import SoireeProjection

    made: list[str] = []
    real = sheets.results_pdf
    monkeypatch.setattr(sheets, "results_pdf",
                        lambda soiree, words: made.append(words["standings"]) or real(
                            soiree, words=words))
    client.force_login(closed["member"])
    url = f"/soirees/{closed['soiree'].pk}/results.pdf"

    first, again = client.get(url), client.get(url)
    assert first.content == again.content and first.content.startswith(b"%PDF")
    assert made == ["Classement"]  # the second download was the same document, kept
    # A browser that has it is told so, for nothing.
    assert client.get(url, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    english = client.get(url, HTTP_ACCEPT_LANGUAGE="en")
    assert english.content != first.content and made == ["Classement", "Standings"]

    # A hand, a ruling or the door moves the read models' version: the sheet is made again.
    SoireeProjection.objects.update_or_create(soiree=closed["soiree"], defaults={"version": 7})
    changed = client.get(url, HTTP_IF_NONE_MATCH=first["ETag"])
    assert changed.status_code == 200 and changed["ETag"] != first["ETag"]
    assert made == ["Classement", "Standings", "Classement"]
    closed["soiree"].name = "Jeudi soir"
    closed["soiree"].save(update_fields=["name"])
    client.get(url)
    assert len(made) == 4


def test_the_results_are_the_club_s_own(client: Any, closed: Any) -> None:
    client.force_login(closed["stranger"])

    answers = [client.get(f"/soirees/{closed['soiree'].pk}/{path}").status_code
               for path in ("results", "results.pdf", "standings.csv", "settlement.csv")]

    assert answers == [403] * 4


def test_the_arbiter_finds_every_finished_hand_by_player_and_game(
        client: Any, django_user_model: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from games.models import Hand
    from games.services import partie_start, partie_tick
    from tests.seeding import seed_stream

    ana = django_user_model.objects.create_user("ana")
    staff = django_user_model.objects.create_user("arbitre", is_staff=True)
    comet = partie_start(game="comet", players=[], bots=["heuristic"] * 3, at=timezone.now(),
                         options={"deals": 2}, pause_between_hands=timedelta(0))
    partie_tick(partie_id=comet.pk, at=timezone.now() + timedelta(seconds=1))  # its 2nd hand
    # The first seed of this stream deals ana's Ma commère hand (HAND_RECORD.md version 3) so
    # that no bot ends it at once: the hand stops at ana's turn and waits for her (an hour).
    monkeypatch.setattr("games.services.parties.new_seed", seed_stream("ana-waits-0"))
    partie_start(game="commere", players=[ana], bots=["heuristic"] * 3, at=timezone.now(),
                 options={"rounds": 1}, move_timeout=timedelta(hours=1))
    client.force_login(staff)

    everything = client.get("/hands/")
    comet_only = client.get("/hands/", {"game": "comet", "day": "not-a-day"})
    ana_s = client.get("/hands/", {"player": "ana"})

    finished = Hand.objects.filter(status="over")
    assert everything.status_code == 200
    assert everything.context["page"].paginator.count == finished.count() >= 2
    assert {h.partie_id for h in comet_only.context["page"]} == {comet.pk}
    assert comet_only.context["page"].paginator.count == 2  # every hand, not only the last
    # ana's Ma commère hand is still in play: nothing of it is listed.
    assert ana_s.context["page"].paginator.count == 0
    assert client.get("/hands/", {"soiree": "x", "page": "9"}).status_code == 200


def test_the_soiree_s_pages_show_its_club_s_time_zone(client: Any, closed: Any) -> None:
    soiree = closed["soiree"]
    soiree.club.time_zone = "America/Montreal"
    soiree.club.save(update_fields=["time_zone"])
    Soiree.objects.filter(pk=soiree.pk).update(
        starts_at=datetime(2031, 1, 17, 1, tzinfo=UTC),
        ends_at=datetime(2031, 1, 17, 4, tzinfo=UTC))
    client.force_login(closed["member"])

    page = client.get(f"/soirees/{soiree.pk}/").content.decode()
    sheet = client.get(f"/soirees/{soiree.pk}/results").content.decode()

    # 01:00 UTC is 20:00 the evening before in Montréal.
    assert "20:00–23:00" in page.replace("<span id=\"ends\">", "").replace("</span>", "")
    assert "16/01/2031 20:00" in sheet


def test_the_season_page_adds_up_its_closed_soirees(client: Any, django_user_model: Any,
                                                     organiser: Any, outsider: Any) -> None:
    from tournaments.models import Season, Soiree
    from tournaments.services import club_create, membership_add

    club = club_create(name="Cercle", slug="cercle-saison", organiser=organiser)
    today = timezone.localdate()
    season = Season.objects.create(club=club, name="Hiver", starts_on=today - timedelta(days=30),
                                   ends_on=today + timedelta(days=60))
    alice = django_user_model.objects.create_user("alice-s")
    membership_add(club=club, user=alice, role="player")
    start = timezone.now() - timedelta(days=3)
    for i, nets in enumerate(({"alice-s": 12, "Voltaire": -12}, {"alice-s": -2, "Voltaire": 2})):
        Soiree.objects.create(
            club=club, season=season, name=f"Soirée {i + 1}", game="comet",
            starts_at=start + timedelta(days=i), ends_at=start + timedelta(days=i, hours=3),
            status="closed", standings={"players": [
                {"player": p, "net": n, "hands_won": 1, "hands": 3, "comets": i, "tricons": 0}
                for p, n in nets.items()]})
    Soiree.objects.create(club=club, season=season, name="À venir", game="comet",
                          starts_at=start + timedelta(days=9),
                          ends_at=start + timedelta(days=9, hours=3))

    client.force_login(alice)
    page = client.get(f"/seasons/{season.pk}/").content.decode()

    rows = re.findall(r"<tr><td>([^<]+)</td><td>(-?\d+)</td><td>(\d+)</td>", page)
    assert rows == [("alice-s", "10", "2"), ("Voltaire", "-10", "2")]
    assert "Classement de la saison" in page and "À venir" in page
    assert page.count("/results\"") == 2  # the closed ones' sheets
    soiree_page = client.get(f"/soirees/{Soiree.objects.first().pk}/").content.decode()
    assert f'href="/seasons/{season.pk}/"' in soiree_page
    assert f'href="/seasons/{season.pk}/"' in client.get("/").content.decode()  # the lobby

    client.force_login(outsider)
    assert client.get(f"/seasons/{season.pk}/").status_code == 403
    assert client.get("/seasons/999999/").status_code == 404
