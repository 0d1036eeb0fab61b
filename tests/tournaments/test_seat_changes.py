"""Seat changes between hands: the organiser's moves, replacements and removals, the balancing
of tables, late arrivals at tables in play, and the announcements of each; on the stopped clock
of test_clock.py (people who never move, so a hand lasts exactly its deadlines)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone

from games.models import Partie
from tests.seeding import install, seed_stream
from tournaments import services
from tournaments.models import Announcement, Registration, Soiree, SoireeTable
from tournaments.tasks import soiree_clock

from .test_clock import OPENS, _beat, _own_ledger_nets, _people, _soiree, _status

pytestmark = pytest.mark.django_db


def _playing(soiree: Soiree) -> dict[int, list[str]]:
    return {t.number: _people(t.partie) for t in SoireeTable.objects.filter(
        soiree=soiree, partie__status=Partie.Status.PLAYING).select_related("partie")}


def _news(soiree: Soiree) -> list[tuple[str, str, str | None, int | None, int | None, bool]]:
    return [(a.kind, a.reason, a.player.username if a.player else None, a.from_table,
             a.to_table, a.done_at is not None)
            for a in Announcement.objects.filter(soiree=soiree).order_by("at", "pk")]


def _open(clock: Any, soiree: Soiree, people: list[Any]) -> None:
    for user in people:
        services.checkin(soiree=soiree, user=user, at=timezone.now())
    clock.move_to(OPENS)
    soiree_clock()


def _assert_books(soiree: Soiree) -> None:
    """Settlement = standings = the ledger's own entries of the soirée; the books balance."""
    soiree.refresh_from_db()
    standings = {r["player"]: r["net"] for r in soiree.standings["players"] if r["net"]}
    assert standings == _own_ledger_nets(soiree)
    assert {r["player"]: r["net"] for r in soiree.settlement["nets"]} == standings
    moved: dict[str, int] = {}
    for t in soiree.settlement["transfers"]:
        moved[t["from"]] = moved.get(t["from"], 0) - t["amount"]
        moved[t["to"]] = moved.get(t["to"], 0) + t["amount"]
    assert moved == standings
    call_command("check_books")  # the trial balance is zero


def test_removals_then_balancing_from_a_table_in_play_between_hands(clock, club, members,
                                                                   monkeypatch):
    # Deals under which table 2 is still in its hand when table 1 stops (the case of a table
    # between hands is test_a_table_stopped_between_hands_is_seated_again_in_the_same_tick).
    monkeypatch.setattr("games.services.parties.new_seed", seed_stream("balance-in-play-1/deal"))
    soiree = _soiree(club, bots_allowed=False, deals_per_partie=3,
                     lasts=timedelta(minutes=10))
    people = members(8)
    _open(clock, soiree, people)
    tables = _playing(soiree)
    assert sorted(len(p) for p in tables.values()) == [4, 4]
    leaving = tables[1][:2]
    for name in leaving:
        user = next(u for u in people if u.username == name)
        services.seat_change(soiree=soiree, user=user, kind="remove", at=timezone.now())
    # Asked again (a double click): the same change, nothing more.
    services.seat_change(soiree=soiree, user=user, kind="remove", at=timezone.now())
    assert Announcement.objects.filter(soiree=soiree).count() == 2

    # Table 1 stops after its hand; it keeps two, table 2 four: one of table 2 comes after
    # table 2's hand in play, and table 1 waits for him.
    _beat(clock, until=lambda: Announcement.objects.filter(
        soiree=soiree, reason="balance").exists())
    assert _playing(soiree).keys() == {2}
    (move,) = Announcement.objects.filter(soiree=soiree, reason="balance")
    assert (move.kind, move.from_table, move.to_table, move.done_at) == ("move", 2, 1, None)

    _beat(clock, until=lambda: len(_playing(soiree)) == 2)
    now = _playing(soiree)
    assert sorted(len(p) for p in now.values()) == [3, 3]
    assert move.player.username in now[1]
    assert not set(leaving) & {name for p in now.values() for name in p}
    assert set(Registration.objects.filter(soiree=soiree, left_at__isnull=False)
               .values_list("user__username", flat=True)) == set(leaving)
    assert [n[:2] + n[3:] for n in _news(soiree)] == [
        ("remove", "organiser", 1, None, True), ("remove", "organiser", 1, None, True),
        ("move", "balance", 2, 1, True)]

    services.soiree_close_now(soiree=soiree, at=timezone.now())
    _beat(clock, until=lambda: _status(soiree) == Soiree.Status.CLOSED)
    _assert_books(soiree)


def test_a_table_stopped_between_hands_is_seated_again_in_the_same_tick(clock, club, members,
                                                                       monkeypatch):
    # Deals and seating under which table 2 is between hands when table 1 stops: the balancing
    # closes it at once, and both tables start again in that tick, not taken for the end of the
    # evening. (HAND_RECORD.md version 3: the first of the bases balance-between-hands-0, -1, …
    # that gives this situation.)
    install("balance-between-hands-6", monkeypatch.setattr)
    soiree = _soiree(club, bots_allowed=False, deals_per_partie=3,
                     lasts=timedelta(minutes=10))
    people = members(8)
    _open(clock, soiree, people)
    leaving = _playing(soiree)[1][:2]
    for name in leaving:
        user = next(u for u in people if u.username == name)
        services.seat_change(soiree=soiree, user=user, kind="remove", at=timezone.now())

    _beat(clock, until=lambda: Announcement.objects.filter(
        soiree=soiree, reason="balance").exists())
    (move,) = Announcement.objects.filter(soiree=soiree, reason="balance")
    assert (move.kind, move.from_table, move.to_table) == ("move", 2, 1)
    assert move.done_at == move.at  # carried out as it was made: both tables were between
    now = _playing(soiree)
    assert sorted(len(p) for p in now.values()) == [3, 3] and move.player.username in now[1]
    assert _status(soiree) == Soiree.Status.OPEN

    services.soiree_close_now(soiree=soiree, at=timezone.now())
    _beat(clock, until=lambda: _status(soiree) == Soiree.Status.CLOSED)
    _assert_books(soiree)


def test_a_late_arrival_joins_a_table_in_play_after_its_hand_and_rebuys_count(
        clock, club, members):
    # Parties until a player is broke: without the late arrival the table would not stop.
    soiree = _soiree(club, bots_allowed=False, deals_per_partie=None,
                     lasts=timedelta(minutes=10), buy_in=30)
    early = members(3, prefix="early")
    _open(clock, soiree, early)
    assert _playing(soiree) == {1: ["early1", "early2", "early3"]}
    held = services.stack(soiree, early[0]).balance  # the buy-in, less the first hand's ante
    assert services.rebuy(soiree=soiree, user=early[0], request_id="r1") == held + 30
    assert services.rebuy(soiree=soiree, user=early[0], request_id="r1") == held + 30  # once

    (late,) = members(1, prefix="late")
    services.checkin(soiree=soiree, user=late, at=timezone.now())
    soiree_clock()
    (join,) = Announcement.objects.filter(soiree=soiree)
    assert (join.kind, join.reason, join.player, join.to_table, join.done_at) == (
        "join", "arrival", late, 1, None)
    _beat(clock, until=lambda: _playing(soiree).get(1, []) == [
        "early1", "early2", "early3", "late1"])
    join.refresh_from_db()
    assert join.done_at is not None

    services.soiree_close_now(soiree=soiree, at=timezone.now())
    _beat(clock, until=lambda: _status(soiree) == Soiree.Status.CLOSED)
    _assert_books(soiree)


def test_the_organiser_moves_a_player_and_replaces_an_absent_one_by_a_bot(clock, club,
                                                                       members):
    soiree = _soiree(club, bots_allowed=False, deals_per_partie=3,
                     lasts=timedelta(minutes=10))
    people = {u.username: u for u in members(7)}
    _open(clock, soiree, list(people.values()))
    tables = _playing(soiree)
    big, small = sorted(tables, key=lambda n: -len(tables[n]))
    mover = people[tables[big][0]]
    absent = people[tables[small][0]]
    services.seat_change(soiree=soiree, user=mover, kind="move", to_table=small,
                         at=timezone.now())
    services.seat_change(soiree=soiree, user=absent, kind="replace", at=timezone.now())

    _beat(clock, until=lambda: len(_playing(soiree)) == 2 and not Announcement.objects.filter(
        soiree=soiree, done_at__isnull=True).exists())
    now = _playing(soiree)
    assert mover.username in now[small] and absent.username not in now[small]
    seats = SoireeTable.objects.filter(soiree=soiree, number=small).order_by("-round")[0]
    assert seats.partie.seats.exclude(bot="").count() == 1  # the bot in the absent's seat
    assert {(k, p) for k, _, p, *_ in _news(soiree)} == {
        ("move", mover.username), ("replace", absent.username)}


# -- The API: its refusals change nothing ------------------------------------------------------


@pytest.fixture
def evening(clock: Any, club: Any, members: Any) -> tuple[Soiree, dict[str, list[str]]]:
    soiree = _soiree(club, bots_allowed=False, deals_per_partie=3,
                     lasts=timedelta(minutes=10))
    _open(clock, soiree, members(7))
    return soiree, {str(n): p for n, p in _playing(soiree).items()}


def _ask(client: Any, soiree: Soiree, **body: Any) -> Any:
    return client.post(f"/api/soirees/{soiree.pk}/seats", body, content_type="application/json")


def test_seat_changes_asked_through_the_api(client, organiser, evening):
    soiree, tables = evening
    client.force_login(organiser)
    player = tables["2"][0]

    answer = _ask(client, soiree, player=player, change="replace")
    again = _ask(client, soiree, player=player, change="replace")

    assert answer.status_code == again.status_code == 202, answer.content
    assert answer.json()["id"] == again.json()["id"]
    assert answer.json()["done"] is False
    assert answer.json()["text"] == (f"After the hand in play, a bot takes {player}'s seat at "
                                     f"table 2")
    news = client.get(f"/api/soirees/{soiree.pk}/announcements",
                      HTTP_ACCEPT_LANGUAGE="fr").json()["announcements"]
    assert [a["text"] for a in news] == [
        f"Après la donne en cours, {player} cède sa place à un robot à la table 2"]
    said = client.post(f"/api/soirees/{soiree.pk}/announcements", {"text": "Pause à 22 h"},
                       content_type="application/json")
    assert said.status_code == 201 and said.json()["done"] is True
    assert client.get(f"/api/soirees/{soiree.pk}/announcements").json()[
        "announcements"][0]["text"] == "Pause à 22 h"


@pytest.mark.parametrize("body, status, words", [
    ({"change": "move", "table": 1}, 400, "Choose another table"),
    ({"change": "move", "table": 9}, 400, "Choose another table"),
    ({"change": "move", "table": 2, "from": "2"}, 400, "Choose another table"),
    ({"change": "move", "table": 1, "from": "2"}, 400,
     "Table 1 would have 5 players and table 2 2: tables stay within one player"),
    ({"change": "leave"}, 400, "change"),
    ({"change": "remove", "table": 2}, 400, "Only a move names a table"),
    ({"player": "nobody", "change": "remove"}, 400, "no such player"),
    ({"player": "oscar", "change": "remove"}, 400, "oscar is not seated at a table in play"),
])
def test_a_wrong_seat_change_is_refused_and_changes_nothing(client, organiser, outsider,
                                                            evening, body, status, words):
    soiree, tables = evening
    client.force_login(organiser)
    seated = tables[body.pop("from", "1")][0]
    assert (len(tables["1"]), len(tables["2"])) == (4, 3)
    before = list(Partie.objects.filter(soiree_table__soiree=soiree)
                  .values_list("pk", "deal_until"))

    answer = _ask(client, soiree, **{"player": seated, **body})

    assert answer.status_code == status, answer.content
    assert words in answer.content.decode()
    assert not Announcement.objects.filter(soiree=soiree).exists()
    assert list(Partie.objects.filter(soiree_table__soiree=soiree)
                .values_list("pk", "deal_until")) == before


def test_seat_changes_are_the_organiser_s_and_only_while_the_soiree_plays(
        client, organiser, evening, django_user_model):
    soiree, tables = evening
    player = django_user_model.objects.get(username=tables["1"][0])
    client.force_login(player)
    assert _ask(client, soiree, player=tables["1"][1], change="remove").status_code == 403
    assert client.post(f"/api/soirees/{soiree.pk}/announcements", {"text": "hop"},
                       content_type="application/json").status_code == 403

    client.force_login(organiser)
    assert _ask(client, soiree, player=tables["1"][1], change="remove").status_code == 202
    conflict = _ask(client, soiree, player=tables["1"][1], change="replace")
    assert conflict.status_code == 409 and "already asked" in conflict.json()["detail"]
    empty = client.post(f"/api/soirees/{soiree.pk}/announcements", {"text": "  "},
                        content_type="application/json")
    assert empty.status_code == 400
    services.soiree_close_now(soiree=soiree, at=timezone.now())
    late = _ask(client, soiree, player=tables["2"][0], change="remove")
    assert late.status_code == 409 and "not in play" in late.json()["detail"]
    assert Announcement.objects.filter(soiree=soiree).count() == 1
