"""The player admin lists people; the users bots play as are listed only when asked for."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from games.models import Seat
from games.services import partie_start

pytestmark = pytest.mark.django_db

PLAYERS = "/admin/auth/user/"


def _listed(html: str) -> set[str]:
    # The changelist links each user's change page with the username as the link's text.
    return set(re.findall(r'<a href="/admin/auth/user/\d+/change/[^"]*">([^<]+)</a>', html))


@pytest.fixture
def bots() -> set[str]:
    """A partie of alice and two bots, and a user never seated: the bots' usernames."""
    people = get_user_model().objects
    alice = people.create_user("alice")
    people.create_user("never-seated")
    partie_start(game="comet", players=[alice], bots=["heuristic", "random"],
                 at=timezone.now())
    found = {s.player.username for s in Seat.objects.exclude(bot="")}
    assert len(found) == 2
    return found


def test_the_players_list_shows_people_and_bots_on_request(admin_client, bots):

    shown = _listed(admin_client.get(PLAYERS).content.decode())
    assert {"alice", "never-seated", "admin"} <= shown
    assert not shown & bots

    assert _listed(admin_client.get(PLAYERS, {"kind": "bots"}).content.decode()) == bots
    everyone = _listed(admin_client.get(PLAYERS, {"kind": "all"}).content.decode())
    assert everyone >= bots | {"alice", "never-seated"}

    # The admin speaks French by default; its filter's heading is read here in English.
    page = admin_client.get(PLAYERS, headers={"accept-language": "en"}).content.decode()
    assert "By kind" in page and "?kind=bots" in page and "?kind=all" in page


def test_the_user_pickers_offer_people_only(admin_client, bots):

    for model, field in (("membership", "user"), ("registration", "user"),
                         ("soiree", "created_by")):
        answer = admin_client.get("/admin/autocomplete/", {
            "app_label": "tournaments", "model_name": model, "field_name": field, "term": ""})
        assert answer.status_code == 200
        offered = {r["text"] for r in answer.json()["results"]}
        assert "alice" in offered and not offered & bots

    # "Created by" is a picker of the same kind, not a list of every user.
    form = admin_client.get("/admin/tournaments/soiree/add/").content.decode()
    assert 'name="created_by"' in form and "admin-autocomplete" in form

    # The players list's own search still finds bots when they are asked for.
    found = _listed(admin_client.get(PLAYERS, {"kind": "bots", "q": "o"}).content.decode())
    assert found == bots
