"""The web pages: signed-in only, and they show what the viewer may see through the API."""

from datetime import timedelta

import pytest
from django.utils import timezone

from games.services import partie_start, store
from tournaments.models import Membership
from tournaments.services import club_create, membership_add, soiree_create

pytestmark = pytest.mark.django_db


def test_pages_ask_a_stranger_to_sign_in(client) -> None:
    answer = client.get("/")
    assert answer.status_code == 302 and "/accounts/login/" in answer["Location"]


def test_the_lobby_lists_the_soirees_of_the_members_clubs(client, organiser, outsider) -> None:
    club = club_create(name="Cercle", slug="cercle", organiser=organiser)
    now = timezone.now()
    soiree_create(club=club, name="Mardi", starts_at=now, ends_at=now + timedelta(hours=2),
                  game="comet")
    client.force_login(organiser)
    assert "Mardi" in client.get("/").content.decode()
    client.force_login(outsider)
    assert "Mardi" not in client.get("/").content.decode()


def test_soiree_table_and_audit_pages_render(client, organiser, django_user_model) -> None:
    club = club_create(name="Cercle", slug="cercle", organiser=organiser)
    membership_add(club=club, user=organiser, role=Membership.Role.PLAYER)
    now = timezone.now()
    soiree = soiree_create(club=club, name="Jeudi", starts_at=now,
                           ends_at=now + timedelta(hours=2), game="commere")
    partie = partie_start(game="comet", players=[organiser], bots=["heuristic", "heuristic"],
                          buy_in=20, at=now)
    hand = partie.hands.get()
    client.force_login(organiser)
    page = client.get(f"/soirees/{soiree.pk}/").content.decode()
    assert "Jeudi" in page and f"/api/soirees/{soiree.pk}/tables" in page
    answer = client.get(f"/hands/{hand.pk}/")
    table = answer.content.decode()
    assert answer.context["table"]["hand"] == str(hand.pk)
    assert "frontend/table.js" in table
    # the page itself holds no card: everything comes from the API, filtered for the viewer
    assert hand.secret.seed not in table
    loaded = store.load(hand)
    held = [card for seat in range(3) for card in loaded.game.view(loaded.state, seat)["hand"]]
    assert len(held) > 30 and not any(f'"{card}"' in table for card in held)
    audit = client.get(f"/hands/{hand.pk}/audit").content.decode()
    assert f'data-hand="{hand.pk}"' in audit  # the record audit.js fetches and checks


def test_the_table_page_follows_the_viewer_s_seat_or_the_public_frames(
        client, organiser, outsider) -> None:
    partie = partie_start(game="comet", players=[organiser], bots=["heuristic", "heuristic"],
                          buy_in=20, at=timezone.now())
    hand = partie.hands.get()
    seat = partie.seats.get(player=organiser).number

    client.force_login(organiser)
    seated = client.get(f"/hands/{hand.pk}/").context["table"]
    client.force_login(outsider)
    refused = client.get(f"/hands/{hand.pk}/")
    # A casual table is watched by its players and staff only (games/permissions.py).
    outsider.is_staff = True
    outsider.save(update_fields=["is_staff"])
    watching = client.get(f"/hands/{hand.pk}/").context["table"]

    assert refused.status_code == 403

    assert seated["live_path"] == f"/ws/parties/{partie.pk}/seats/{seat}/"
    assert (seated["your_seat"], watching["your_seat"]) == (seat, None)
    assert watching["live_path"] == f"/ws/parties/{partie.pk}/"
