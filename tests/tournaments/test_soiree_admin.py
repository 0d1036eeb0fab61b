"""Staff change a soirée in the admin site: checked as the API checks a new one, so nothing it
could not play (or PostgreSQL could not store) is saved, and the form says why."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from tournaments.models import Soiree
from tournaments.services import soiree_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def soiree(club: Any) -> Soiree:
    now = timezone.now()
    return soiree_create(club=club, name="Jeudi", game="comet",
                         starts_at=now + timedelta(hours=1), ends_at=now + timedelta(hours=3))


def _form(soiree: Soiree, **changes: Any) -> dict[str, Any]:
    form = {"club": soiree.club_id, "name": soiree.name, "game": soiree.game, "options": "{}",
            "starts_at_0": "2031-03-14", "starts_at_1": "20:00:00",
            "ends_at_0": "2031-03-14", "ends_at_1": "23:00:00", "buy_in": 50,
            "move_timeout": "00:00:30", "pause_between_hands": "00:00:05",
            "forced_move_delay": "00:00:01", "comet_window": "00:00:02",
            "share_window": "00:00:03", "min_tables": 1,
            "bots_allowed": "on", "bot_kind": "heuristic", "dispute_window": "1 00:00:00"}
    for prefix in ("registrations", "tables"):
        form.update({f"{prefix}-TOTAL_FORMS": 0, f"{prefix}-INITIAL_FORMS": 0})
    return {**form, **changes}


@pytest.mark.parametrize(("options", "message"), [
    ('{"a\\u0000": 1}', "unknown Comet option"),
    ('{"deals": 3}', "Fixez la fin avec deals_per_partie, pas options.deals"),
    ('[1, 2]', "Les options doivent être un objet des options des règles"),
])
def test_options_the_game_refuses_are_not_saved(admin_client: Client, soiree: Soiree,
                                                options: str, message: str) -> None:
    url = f"/admin/tournaments/soiree/{soiree.pk}/change/"
    answer = admin_client.post(url, _form(soiree, options=options))
    assert answer.status_code == 200  # the form again, with its error
    assert message in answer.content.decode()
    soiree.refresh_from_db()
    assert soiree.options == {}
    saved = admin_client.post(url, _form(soiree, options='{"ante": 2}', name="Vendredi"))
    assert saved.status_code == 302
    soiree.refresh_from_db()
    assert (soiree.name, soiree.options) == ("Vendredi", {"ante": 2})


def test_a_soiree_that_ends_before_it_starts_is_not_saved(admin_client: Client,
                                                          soiree: Soiree) -> None:
    answer = admin_client.post(f"/admin/tournaments/soiree/{soiree.pk}/change/",
                               _form(soiree, ends_at_1="19:00:00"))
    assert answer.status_code == 200
    assert "Une soirée doit finir après son début" in answer.content.decode()
