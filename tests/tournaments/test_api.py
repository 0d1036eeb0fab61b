"""The soirée API as an organiser and a player use it over HTTP: creating a soirée, and the
answers to a creation that could never be played (each names its field, writes nothing)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from tournaments.api.views import SoireeStandingsSerializer
from tournaments.models import Registration, Soiree

pytestmark = pytest.mark.django_db


def _as(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def _soiree(**changes: Any) -> dict[str, Any]:
    now = timezone.now()
    return {"club": "cercle", "name": "Jeudi", "game": "commere",
            "starts_at": (now + timedelta(hours=1)).isoformat(),
            "ends_at": (now + timedelta(hours=4)).isoformat(), **changes}


def test_an_organiser_creates_a_soiree_and_a_member_registers(club: Any, organiser: Any,
                                                               members: Any) -> None:
    answer = _as(organiser).post("/api/soirees/", _soiree(buy_in=20), format="json")
    assert answer.status_code == 201, answer.json()
    body = answer.json()
    assert (body["club"], body["name"], body["status"], body["buy_in"]) == (
        "cercle", "Jeudi", "scheduled", 20)
    [player] = members(1)
    joined = _as(player).post(f"/api/soirees/{body['id']}/register")
    assert joined.status_code == 201
    assert Registration.objects.filter(soiree_id=body["id"], user=player).exists()
    assert _as(player).get(f"/api/soirees/{body['id']}/").json()["name"] == "Jeudi"


def test_a_soiree_that_has_already_ended_is_refused(club: Any, organiser: Any) -> None:
    now = timezone.now()
    answer = _as(organiser).post("/api/soirees/", _soiree(
        starts_at=(now - timedelta(hours=3)).isoformat(),
        ends_at=(now - timedelta(hours=1)).isoformat()), format="json")
    assert answer.status_code == 400
    assert "ends_at" in answer.json()
    assert "has already passed: a soirée must end in the future" in answer.json()["detail"]
    assert not Soiree.objects.exists()
    # Started an hour ago and still running: accepted (the clock opens it on its next tick).
    late = _as(organiser).post("/api/soirees/", _soiree(
        starts_at=(now - timedelta(hours=1)).isoformat()), format="json")
    assert late.status_code == 201


@pytest.mark.parametrize("starts_at", ["0033-06-02T04:18:04Z", "1908-01-01T20:00:00+01:00",
                                       "3000-01-01T00:00:00Z"])
def test_a_time_outside_1970_to_2999_is_refused(club: Any, organiser: Any,
                                                 starts_at: str) -> None:
    # 1908: Paris ran on local mean time, and the answer carried the offset +00:09:21, which
    # RFC 3339 cannot hold (schemathesis refused the answer).
    answer = _as(organiser).post("/api/soirees/", _soiree(starts_at=starts_at), format="json")
    assert answer.status_code == 400
    assert answer.json()["starts_at"] == [
        "must be from 1970-01-01T00:00:00Z up to 2999-12-31T23:59:59Z."]
    assert not Soiree.objects.exists()


def test_only_an_organiser_creates_a_soiree(club: Any, members: Any) -> None:
    [player] = members(1)
    answer = _as(player).post("/api/soirees/", _soiree(), format="json")
    assert answer.status_code == 403
    assert answer.json()["detail"] == "Only an organiser of Le Cercle may do this."
    missing = _as(player).post("/api/soirees/", _soiree(club="nowhere"), format="json")
    assert missing.status_code == 400
    assert missing.json()["club"] == ["no such club"]
    assert not Soiree.objects.exists()


def test_an_unknown_season_is_a_refused_field(club: Any, organiser: Any) -> None:
    answer = _as(organiser).post("/api/soirees/", _soiree(season=999), format="json")
    assert answer.status_code == 400
    assert answer.json()["season"] == ["no season 999 in Le Cercle"]
    assert not Soiree.objects.exists()


def test_a_soiree_closed_before_it_opened_has_standings_of_its_schema(club: Any,
                                                                      organiser: Any) -> None:
    client = _as(organiser)
    soiree = client.post("/api/soirees/", _soiree(), format="json").json()
    assert client.post(f"/api/soirees/{soiree['id']}/close").status_code == 200

    answer = client.get(f"/api/soirees/{soiree['id']}/standings").json()

    assert answer["status"] == "closed"
    assert answer["standings"]["players"] == []
    assert answer["standings"]["computed_at"]
    shape = SoireeStandingsSerializer(data=answer)
    assert shape.is_valid(), shape.errors


def test_soirees_are_listed_a_page_at_a_time(club: Any, organiser: Any) -> None:
    client = _as(organiser)
    for name in ("Lundi", "Mardi", "Mercredi"):
        assert client.post("/api/soirees/", _soiree(name=name), format="json").status_code == 201

    first = client.get("/api/soirees/", {"limit": 2}).json()
    second = client.get(first["next"]).json()

    assert first["count"] == 3
    assert len(first["results"]) == 2 and len(second["results"]) == 1
    assert {s["name"] for s in first["results"] + second["results"]} == {
        "Lundi", "Mardi", "Mercredi"}


def test_a_soiree_s_times_without_an_offset_are_its_club_s(db: None, django_user_model: Any
                                                          ) -> None:
    from rest_framework.test import APIClient

    from tournaments.models import Club, Membership

    boss = django_user_model.objects.create_user("boss")
    club = Club.objects.create(name="Montréal", slug="mtl", time_zone="America/Montreal")
    Membership.objects.create(club=club, user=boss, role="organiser")
    client = APIClient()
    client.force_authenticate(boss)

    answer = client.post("/api/soirees/", {
        "club": "mtl", "name": "Hiver", "game": "comet",
        "starts_at": "2031-01-16T20:00:00", "ends_at": "2031-01-16T23:00:00"}, format="json")

    assert answer.status_code == 201, answer.content
    # 20:00 in Montréal in January is 01:00 UTC the next day.
    from datetime import UTC, datetime

    assert datetime.fromisoformat(answer.json()["starts_at"]) == datetime(2031, 1, 17, 1,
                                                                          tzinfo=UTC)
