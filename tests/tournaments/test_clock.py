"""The soirée clock and the partie's rhythm, on a stopped clock moved by hand (time-machine).

No Celery here (ACADEMIE_TIMERS=off): the tests run what beat runs, the deadline sweeper and
the soirée clock, at the times they choose. Nobody at these tables moves in time (people who
never play, bots of kind "timeout"), so a hand lasts exactly as long as its deadlines say.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.models import Q
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone, translation

from games.errors import GameError
from games.models import Hand, Partie
from games.services import deadline_fire, partie_tick
from games.tasks import sweep_deadlines, verify_ended_hands
from ledger import selectors as ledger_selectors
from ledger.models import Account
from tournaments import selectors, services
from tournaments.errors import SoireeState
from tournaments.models import Announcement, Soiree, SoireeTable
from tournaments.services import soirees
from tournaments.tasks import soiree_clock

from .conftest import START, nets_by_player, parse_at, soiree_parties, timeline
from .evenings import open_evenings

pytestmark = pytest.mark.django_db

TIMEOUT = timedelta(seconds=1)
PAUSE = timedelta(seconds=5)
OPENS = START + timedelta(minutes=10)


def _soiree(club: Any, *, lasts: timedelta = timedelta(hours=2), **kwargs: Any) -> Soiree:
    kwargs.setdefault("game", "comet")
    kwargs.setdefault("bot_kind", "timeout")
    kwargs.setdefault("forced_move_delay", timedelta(0))
    kwargs.setdefault("comet_window", timedelta(0))
    return services.soiree_create(
        club=club, name="Soirée d'essai", starts_at=OPENS, ends_at=OPENS + lasts,
        move_timeout=TIMEOUT, pause_between_hands=PAUSE, **kwargs)


def _someone(soiree: Soiree, members: Any) -> None:
    """One person checked in: a soirée nobody has arrived at does not open."""
    (user,) = members(1, f"guest{soiree.pk}-")
    services.checkin(soiree=soiree, user=user, at=timezone.now())


def _beat(clock: Any, *, until: Callable[[], bool], limit: float = 600,
          step: float = 0.5, sweep: bool = True, soirees: bool = True) -> None:
    """What Celery beat does: every ``step`` seconds the deadline sweeper and the soirée
    clock; stops once ``until()`` holds (fails after ``limit`` seconds of clock time)."""
    end = timezone.now() + timedelta(seconds=limit)
    while not until():
        assert timezone.now() < end, f"not done after {limit} s of clock time"
        clock.shift(step)
        if sweep:
            sweep_deadlines()
        if soirees:
            soiree_clock()


def _tables(soiree: Soiree) -> list[SoireeTable]:
    return list(SoireeTable.objects.filter(soiree=soiree).select_related("partie"))


def _hands(soiree: Soiree) -> Any:
    return Hand.objects.filter(partie__soiree_table__soiree=soiree)


def _status(soiree: Soiree) -> str:
    soiree.refresh_from_db()
    return soiree.status


def _seated(partie: Partie) -> list[str]:
    return [s.player.username for s in partie.seats.select_related("player")]


def _people(partie: Partie) -> list[str]:
    return sorted(s.player.username for s in partie.seats.select_related("player") if not s.bot)


def test_the_soiree_opens_at_its_start_time_and_not_before(clock, club, members):
    soiree = _soiree(club)
    for user in members(2):
        services.checkin(soiree=soiree, user=user, at=timezone.now())

    clock.move_to(OPENS - timedelta(milliseconds=1))
    soiree_clock()
    assert _status(soiree) == Soiree.Status.SCHEDULED
    assert not _tables(soiree)

    clock.move_to(OPENS)
    soiree_clock()
    soiree.refresh_from_db()
    assert soiree.status == Soiree.Status.OPEN and soiree.opened_at == OPENS
    assert soiree.seating_seed
    (table,) = _tables(soiree)  # two people and a bot: one Comet table
    assert _people(table.partie) == ["member1", "member2"]
    assert len(_seated(table.partie)) == 3
    (hand,) = _hands(soiree)
    assert hand.number == 1 and hand.status == Hand.Status.PLAYING
    assert hand.deadline == OPENS + TIMEOUT  # the first decision's time runs from the deal
    assert parse_at(hand.events.order_by("seq").first().at) == OPENS


def test_the_next_hand_waits_for_the_pause_between_hands(clock, club, members):
    soiree = _soiree(club, deals_per_partie=2)
    _someone(soiree, members)
    clock.move_to(OPENS)
    soiree_clock()
    (table,) = _tables(soiree)
    partie = table.partie
    hand = partie.hands.get()
    while hand.status == Hand.Status.PLAYING:  # every decision times out at its deadline
        clock.move_to(hand.deadline)
        assert sweep_deadlines() == 1
        hand.refresh_from_db()
    partie.refresh_from_db()
    assert partie.next_hand_at == hand.ended_at + PAUSE

    clock.move_to(partie.next_hand_at - timedelta(milliseconds=1))
    assert partie_tick(partie_id=partie.pk, at=timezone.now()) is None
    assert sweep_deadlines() == 0
    soiree_clock()
    assert partie.hands.count() == 1

    clock.move_to(partie.next_hand_at)
    assert sweep_deadlines() == 1  # the sweeper deals it when nobody else has
    second = partie.hands.get(number=2)
    assert parse_at(second.events.order_by("seq").first().at) == partie.next_hand_at
    line = timeline([partie.pk])
    assert line.problems(timeout=TIMEOUT) == []
    assert all(a.lag == 0 for a in line.answers), [(a.seq, a.lag) for a in line.answers]


def test_at_the_closing_time_no_new_hand_is_dealt_and_the_hand_in_progress_finishes(
        clock, club, members):
    # A Comet hand of time-out players lasts at least eleven seconds: it is still being
    # played when the soirée's closing time comes, five seconds after the start.
    soiree = _soiree(club, lasts=timedelta(seconds=5))
    _someone(soiree, members)
    clock.move_to(OPENS)
    soiree_clock()
    (hand,) = _hands(soiree)
    _beat(clock, until=lambda: timezone.now() >= soiree.ends_at)
    hand.refresh_from_db()
    assert hand.status == Hand.Status.PLAYING
    assert _status(soiree) == Soiree.Status.OPEN

    _beat(clock, until=lambda: _status(soiree) == Soiree.Status.CLOSED)
    hand.refresh_from_db()
    assert hand.status == Hand.Status.OVER and hand.ended_at > soiree.ends_at
    assert _hands(soiree).count() == 1  # no hand after the closing time
    (table,) = _tables(soiree)
    assert table.round == 1 and table.partie.status == Partie.Status.OVER
    assert table.partie.ended_at >= hand.ended_at + PAUSE  # closed when the next was due
    soiree.refresh_from_db()
    assert soiree.closed_at >= table.partie.ended_at
    assert {row["player"] for row in _everyone(soiree)} == set(_seated(table.partie))
    assert sum(row["net"] for row in _everyone(soiree)) == 0


def _everyone(soiree: Soiree) -> list[dict]:
    """The standings' rows of the people and, apart, of the club's bots."""
    return soiree.standings["players"] + soiree.standings["bots"]


def _assert_standings_match_the_ledger(soiree: Soiree) -> None:
    settle = ledger_selectors.settlement(club_key=soiree.club.slug, since=soiree.opened_at,
                                         until=soiree.closed_at + timedelta(seconds=1))
    ledger_nets = nets_by_player(settle)
    assert all(n.account.owner_id for n in settle.nets), "a pot kept chips"
    standings = {row["player"]: row["net"] for row in _everyone(soiree)}
    assert {p: n for p, n in standings.items() if n} == ledger_nets
    # The settlement is among the people and the club, which takes or pays its bots' nets.
    parties = selectors.party_nets(soiree.standings)
    bots = {row["player"] for row in soiree.standings["bots"]}
    assert parties == {p: n for p, n in {
        **{p: n for p, n in ledger_nets.items() if p not in bots},
        selectors.CLUB: sum(n for p, n in ledger_nets.items() if p in bots)}.items() if n}
    assert {row["player"]: row["net"] for row in soiree.settlement["nets"]} == parties
    assert sum(t["amount"] for t in soiree.settlement["transfers"]) \
        == sum(n for n in parties.values() if n > 0)
    call_command("verify_hands", "--quiet")
    call_command("check_books")


@pytest.mark.parametrize("game", ["comet", "commere"])
def test_an_evening_runs_from_opening_to_closing_on_the_clock_alone(clock, club, members,
                                                                    game):
    """Heuristic bots and two people who never play; a partie of two hands after another
    while time remains; the standings and the settlement are the ledger's."""
    options = {"max_turns": 2} if game == "commere" else {}
    soiree = _soiree(club, game=game, options=options, bot_kind="heuristic",
                     deals_per_partie=2, lasts=timedelta(seconds=40), min_tables=2,
                     forced_move_delay=timedelta(seconds=1), comet_window=timedelta(seconds=2))
    people = members(2)
    for user in people:
        services.checkin(soiree=soiree, user=user, at=timezone.now())
    clock.move_to(OPENS - timedelta(seconds=1))
    _beat(clock, until=lambda: _status(soiree) == Soiree.Status.CLOSED)

    soiree.refresh_from_db()
    assert soiree.opened_at == OPENS
    tables = _tables(soiree)
    assert {t.number for t in tables} == {1, 2}
    assert max(t.round for t in tables) >= 2  # tables played on while time remained
    assert not _hands(soiree).filter(status=Hand.Status.PLAYING).exists()
    line = timeline(soiree_parties(soiree))
    for batches in line.batches.values():
        assert batches[0].at < soiree.ends_at  # no hand dealt after the closing time
    assert all(a.lag <= 0.5 for a in line.answers)  # one sweeper period at most
    players = {row["player"] for row in soiree.standings["players"]}
    assert {u.username for u in people} <= players
    _assert_standings_match_the_ledger(soiree)


def test_a_late_check_in_joins_the_next_partie_of_a_table(clock, club, members):
    soiree = _soiree(club, deals_per_partie=1)
    early = members(2, prefix="early")
    for user in early:
        services.checkin(soiree=soiree, user=user, at=timezone.now())
    clock.move_to(OPENS)
    soiree_clock()
    (first,) = _tables(soiree)
    assert _people(first.partie) == ["early1", "early2"]

    clock.shift(3)
    (late,) = members(1, prefix="late")
    services.checkin(soiree=soiree, user=late, at=timezone.now())
    _beat(clock, until=lambda: SoireeTable.objects.filter(soiree=soiree, round=2).exists())
    second = SoireeTable.objects.get(soiree=soiree, round=2)
    assert second.number == first.number
    assert "late1" not in _seated(first.partie)
    assert sorted(_seated(second.partie)) == ["early1", "early2", "late1"]  # no bot needed


def test_two_tables_of_people_ending_together_both_start_their_next_partie(clock, club,
                                                                         members):
    soiree = _soiree(club, deals_per_partie=1, bots_allowed=False)
    people = members(8)  # two Comet tables of four
    for user in people:
        services.checkin(soiree=soiree, user=user, at=timezone.now())
    clock.move_to(OPENS)
    soiree_clock()
    assert len(_tables(soiree)) == 2
    # Both first parties end between two ticks of the soirée clock.
    _beat(clock, soirees=False, until=lambda: not Partie.objects.filter(
        soiree_table__soiree=soiree, status=Partie.Status.PLAYING).exists())
    soiree_clock()
    seconds = SoireeTable.objects.filter(soiree=soiree, round=2).select_related("partie")
    assert {t.number for t in seconds} == {1, 2}
    seated = [name for t in seconds for name in _seated(t.partie)]
    assert sorted(seated) == sorted(u.username for u in people)  # each once, nobody left


def test_close_now_deals_no_new_hand_and_lets_the_hands_in_progress_finish(clock, club,
                                                                          members):
    soiree = _soiree(club, min_tables=2)
    _someone(soiree, members)
    clock.move_to(OPENS)
    soiree_clock()
    clock.shift(3)
    closing = timezone.now()
    planned = (soiree.starts_at, soiree.ends_at)
    services.soiree_close_now(soiree=soiree, at=closing)
    soiree.refresh_from_db()
    # The planned times are kept; the close is recorded beside them.
    assert (soiree.starts_at, soiree.ends_at) == planned
    assert soiree.close_asked_at == closing and soiree.status == Soiree.Status.OPEN
    assert set(Partie.objects.filter(soiree_table__soiree=soiree)
               .values_list("deal_until", flat=True)) == {closing}
    playing = list(_hands(soiree).filter(status=Hand.Status.PLAYING))
    assert len(playing) == 2

    _beat(clock, until=lambda: _status(soiree) == Soiree.Status.CLOSED)
    assert _hands(soiree).count() == 2
    for hand in playing:
        hand.refresh_from_db()
        assert hand.status == Hand.Status.OVER and hand.ended_at > closing
    soiree.refresh_from_db()
    assert soiree.standings["players"] and soiree.settlement is not None


def test_close_now_from_the_admin(clock, club, admin_client, members):
    soiree = _soiree(club)
    _someone(soiree, members)
    clock.move_to(OPENS)
    soiree_clock()
    clock.shift(2)
    response = admin_client.post(reverse("admin:tournaments_soiree_changelist"),
                                 {"action": "close_now", "_selected_action": [soiree.pk]})
    assert response.status_code == 302
    soiree.refresh_from_db()
    assert soiree.close_asked_at == timezone.now() and soiree.ends_at == OPENS + timedelta(hours=2)
    _beat(clock, until=lambda: _status(soiree) == Soiree.Status.CLOSED)
    assert _hands(soiree).count() == 1


def test_close_now_before_the_start_cancels_the_soiree(clock, club, members):
    soiree = _soiree(club)
    services.checkin(soiree=soiree, user=members(1)[0], at=timezone.now())
    services.soiree_close_now(soiree=soiree, at=timezone.now())
    clock.move_to(OPENS + timedelta(minutes=1))
    soiree_clock()
    soiree.refresh_from_db()
    assert soiree.status == Soiree.Status.CLOSED and soiree.opened_at is None
    assert not _tables(soiree)
    assert soiree.standings == {"players": [], "computed_at": soiree.closed_at.isoformat()}


def _end_partie(clock: Any, partie: Partie) -> None:
    """Play the partie's hand out on its deadlines, then let its pause pass: the partie (of
    one deal) ends on its next tick."""
    while (hand := partie.hands.filter(status=Hand.Status.PLAYING).first()) is not None:
        clock.move_to(max(timezone.now(), hand.deadline) + timedelta(milliseconds=1))
        assert deadline_fire(hand_id=hand.id, seq=hand.last_seq, at=timezone.now())
    clock.move_to(timezone.now() + PAUSE + timedelta(seconds=1))
    partie_tick(partie_id=partie.pk, at=timezone.now())
    partie.refresh_from_db()
    assert partie.status == Partie.Status.OVER


def test_a_person_who_changed_tables_does_not_stop_the_clock(clock, club, members):
    """The person checked in late sits at the bot table that ended first. When both tables
    end in the same tick, each keeps its own people: the late one stays where he sat, and
    neither this tick nor the next tries to seat him twice."""
    soiree = _soiree(club, deals_per_partie=1, min_tables=2)
    (early,) = members(1, prefix="early")
    services.checkin(soiree=soiree, user=early, at=timezone.now())
    clock.move_to(OPENS)
    soiree_clock()
    tables = {t.number: t for t in _tables(soiree)}
    assert _people(tables[1].partie) == ["early1"] and _people(tables[2].partie) == []
    (late,) = members(1, prefix="late")
    services.checkin(soiree=soiree, user=late, at=timezone.now())

    _end_partie(clock, tables[2].partie)
    soiree_clock()
    moved = SoireeTable.objects.get(soiree=soiree, number=2, round=2)
    assert _people(moved.partie) == ["late1"]

    _end_partie(clock, tables[1].partie)
    _end_partie(clock, moved.partie)
    soiree_clock()
    nexts = {t.number: t for t in SoireeTable.objects.filter(
        soiree=soiree, partie__status=Partie.Status.PLAYING)}
    assert {n: _people(t.partie) for n, t in nexts.items()} == {1: ["early1"], 2: ["late1"]}
    soiree_clock()  # the next tick seats nobody twice and fails nothing
    assert SoireeTable.objects.filter(soiree=soiree).count() == 5
    assert _status(soiree) == Soiree.Status.OPEN


def test_a_table_that_cannot_start_is_skipped_and_the_others_start(clock, club, members,
                                                                  monkeypatch, caplog):
    soiree = _soiree(club, deals_per_partie=1, min_tables=2)
    _someone(soiree, members)
    clock.move_to(OPENS)
    soiree_clock()
    tables = {t.number: t for t in _tables(soiree)}
    for table in tables.values():
        _end_partie(clock, table.partie)
    real = soirees._start_table

    def refuse_table_1(soiree: Soiree, number: int, *args: Any) -> Any:
        if number == 1:
            raise GameError("table 1 is broken")
        return real(soiree, number, *args)

    monkeypatch.setattr(soirees, "_start_table", refuse_table_1)
    soiree_clock()
    assert [t.number for t in SoireeTable.objects.filter(soiree=soiree, round=2)] == [2]
    assert "table 1 is broken" in caplog.text

    # Nothing else changes, and the next tick tries table 1 again.
    monkeypatch.setattr(soirees, "_start_table", real)
    soiree_clock()
    assert sorted(t.number for t in SoireeTable.objects.filter(soiree=soiree, round=2)) == [1, 2]


# -- what a tick reads, and what it leaves alone -----------------------------------------------


def test_a_tick_where_nothing_changed_costs_the_same_with_one_or_twenty_open_soirees(
        django_assert_max_num_queries):
    open_evenings(soirees=1, tables=3, prefix="one")
    with CaptureQueriesContext(connection) as one:
        assert soiree_clock() == 0
    open_evenings(soirees=19, tables=3, prefix="more")
    before = (SoireeTable.objects.count(), Hand.objects.count(), Announcement.objects.count(),
              list(Partie.objects.order_by("pk").values_list("pk", "deal_until", "status")))

    with django_assert_max_num_queries(len(one)):
        assert soiree_clock() == 0

    assert len(one) <= 2  # which soirées to open, which to tick
    assert before == (SoireeTable.objects.count(), Hand.objects.count(),
                      Announcement.objects.count(),
                      list(Partie.objects.order_by("pk").values_list("pk", "deal_until",
                                                                     "status")))


def test_a_tick_seats_the_table_whose_partie_ended_and_opens_no_wallet_for_one_left_out(
        clock, club, members):
    # No buy-in at the door: a stack exists only for one who was issued chips.
    soiree = _soiree(club, deals_per_partie=1, min_tables=2, buy_in=0)
    alice, bruno, carol = members(3)
    for user in (alice, bruno):
        services.checkin(soiree=soiree, user=user, at=timezone.now())
        services.rebuy(soiree=soiree, user=user, request_id=uuid.uuid4(), amount=50)
    clock.move_to(OPENS)
    soiree_clock()
    ours, other = sorted(_tables(soiree), key=lambda t: not _people(t.partie))
    assert _people(ours.partie) == ["member1", "member2"] and not _people(other.partie)
    services.checkin(soiree=soiree, user=carol, at=timezone.now())  # with nothing to play
    soiree_clock()  # the arrival is weighed: she holds less than the ante and sits out
    assert not Announcement.objects.filter(soiree=soiree).exists()

    _end_partie(clock, ours.partie)
    wallets = set(Account.objects.filter(owner__in=[alice, bruno, carol]))
    soiree_clock()

    nexts = {t.number: t for t in _tables(soiree) if t.partie.status == Partie.Status.PLAYING}
    assert nexts[ours.number].round == 2
    assert _people(nexts[ours.number].partie) == ["member1", "member2"]
    assert nexts[other.number].pk == other.pk  # the table still in play is left alone
    assert nexts[other.number].partie.deal_until == soiree.ends_at
    # Her chips were read, not her stack opened: the tick made no wallet of a person.
    assert set(Account.objects.filter(owner__in=[alice, bruno, carol])) == wallets
    assert selectors.stacks(soiree=soiree).get(carol.pk, 0) == 0

    # Her rebuy is a change at the door: the next tick seats her, with no partie ended.
    services.rebuy(soiree=soiree, user=carol, request_id=uuid.uuid4(), amount=50)
    soiree_clock()
    (join,) = Announcement.objects.filter(soiree=soiree)
    assert (join.kind, join.player, join.done_at) == ("join", carol, None)


def test_a_partie_that_ends_while_a_tick_seats_another_is_seated_by_the_next_tick(
        clock, club, members, monkeypatch):
    soiree = _soiree(club, deals_per_partie=1, min_tables=2)
    _someone(soiree, members)
    clock.move_to(OPENS)
    soiree_clock()
    tables = {t.number: t for t in _tables(soiree)}
    for table in tables.values():  # both hands played out; neither partie closed yet
        while (hand := table.partie.hands.filter(status=Hand.Status.PLAYING).first()):
            clock.move_to(max(timezone.now(), hand.deadline) + timedelta(milliseconds=1))
            assert deadline_fire(hand_id=hand.id, seq=hand.last_seq, at=timezone.now())
    clock.shift(PAUSE.total_seconds() + 1)
    partie_tick(partie_id=tables[1].partie_id, at=timezone.now())
    real = soirees._seat_next_parties

    def table_2_ends_meanwhile(*args: Any) -> Any:
        seated = real(*args)
        partie_tick(partie_id=tables[2].partie_id, at=timezone.now())
        return seated

    monkeypatch.setattr(soirees, "_seat_next_parties", table_2_ends_meanwhile)
    soiree_clock()
    monkeypatch.setattr(soirees, "_seat_next_parties", real)
    assert [t.number for t in SoireeTable.objects.filter(soiree=soiree, round=2)] == [1]
    assert Partie.objects.get(pk=tables[2].partie_id).status == Partie.Status.OVER

    soiree_clock()
    assert sorted(t.number for t in SoireeTable.objects.filter(soiree=soiree, round=2)) == [1, 2]


def _own_ledger_nets(soiree: Soiree) -> dict[str, int]:
    """Each player's net from the ledger entries of this soirée's own hands and pots only."""
    from ledger.models import Posting

    parties = [t.partie_id for t in _tables(soiree)]
    sources = Q(entry__source__startswith="partie:__none__")
    for hand_id in _hands(soiree).values_list("pk", flat=True):
        sources |= Q(entry__source__startswith=f"hand:{hand_id}/")
    for partie_id in parties:
        sources |= Q(entry__source__startswith=f"partie:{partie_id}/pot-shared")
    nets: dict[str, int] = {}
    for name, amount in (Posting.objects.filter(sources, account__kind="wallet")
                         .values_list("account__owner__username", "amount")):
        nets[name] = nets.get(name, 0) + amount
    return {name: net for name, net in nets.items() if net}


def test_two_overlapping_soirees_sharing_a_player_settle_each_its_own_chips(
        clock, club, members):
    """Both evenings run at once in one club, and alice plays at both in turn (checked in at
    the second once the first is over: not before): each settlement nets only its own hands,
    between its own players."""
    first = _soiree(club, bot_kind="heuristic", deals_per_partie=1, lasts=timedelta(seconds=60))
    # Long enough after the first one's close that a table of the second ends and seats her,
    # however long the hands the seeds deal last.
    second = _soiree(club, bot_kind="heuristic", deals_per_partie=1,
                     lasts=timedelta(seconds=300))
    alice, bruno = members(2)
    services.checkin(soiree=first, user=alice, at=timezone.now())
    services.checkin(soiree=second, user=bruno, at=timezone.now())
    with pytest.raises(SoireeState):  # one soirée at a time
        services.checkin(soiree=second, user=alice, at=timezone.now())
    clock.move_to(OPENS - timedelta(seconds=1))

    _beat(clock, until=lambda: _status(first) == Soiree.Status.CLOSED)
    services.checkin(soiree=second, user=alice, at=timezone.now())
    _beat(clock, until=lambda: _status(second) == Soiree.Status.CLOSED)

    for soiree in (first, second):
        soiree.refresh_from_db()
        seated = {name for t in _tables(soiree) for name in _seated(t.partie)}
        standings = {row["player"]: row["net"] for row in _everyone(soiree)}
        assert set(standings) <= seated
        assert {p: n for p, n in standings.items() if n} == _own_ledger_nets(soiree)
        nets = {row["player"]: row["net"] for row in soiree.settlement["nets"]}
        assert nets == selectors.party_nets(soiree.standings)
        moved: dict[str, int] = {}
        for t in soiree.settlement["transfers"]:
            assert {t["from"], t["to"]} <= seated | {selectors.CLUB}
            moved[t["from"]] = moved.get(t["from"], 0) - t["amount"]
            moved[t["to"]] = moved.get(t["to"], 0) + t["amount"]
        assert moved == nets
    # alice played at both: her hands of the one never enter the other's settlement.
    both = [{n for t in _tables(s) for n in _seated(t.partie)} for s in (first, second)]
    assert alice.username in both[0] and alice.username in both[1]
    call_command("check_books")


def test_the_results_sheet_holds_the_standings_the_settlement_and_every_hand_verified(
        clock, club, members):
    from tournaments import sheets

    soiree = _soiree(club, bot_kind="heuristic", deals_per_partie=2,
                     lasts=timedelta(seconds=20))
    services.checkin(soiree=soiree, user=members(1)[0], at=timezone.now())
    clock.move_to(OPENS - timedelta(seconds=1))
    _beat(clock, until=lambda: _status(soiree) == Soiree.Status.CLOSED)
    soiree.refresh_from_db()

    with translation.override("en"):  # the CSVs speak the reader's language
        standings = sheets.standings_csv(soiree).splitlines()
        settlement = sheets.settlement_csv(soiree).splitlines()
    with translation.override("fr"):
        french = sheets.standings_csv(soiree).splitlines()[0]
    hands = sheets.hands_of(soiree)
    words = {k: k for k in ("standings", "settlement", "hands_section", "nothing", "player",
                            "net", "hands_won", "hands", "comets", "tricons")} | {
        "pays": "{payer} pays {payee} {amount}"}
    pdf = sheets.results_pdf(soiree, words=words)

    assert standings[0] == ("rank,player,name,kind,buy-in,rebuys,final chips,net,hands won,"
                            "hands,Comets")
    assert french.startswith("rang,joueur,nom,")
    # The people first, ranked; then the club's bots apart, unranked.
    assert len(standings) == 1 + len(_everyone(soiree)) > 2
    rows = [line.split(",") for line in standings[1:]]
    assert [r[1] for r in rows] == [r["player"] for r in _everyone(soiree)]
    assert [r[0] for r in rows[:len(soiree.standings["players"])]] == [
        str(i + 1) for i in range(len(soiree.standings["players"]))]
    assert all(r[0] == "" and r[3] == "bot of the club" for r in rows[len(
        soiree.standings["players"]):])
    assert len(settlement) == 1 + len(soiree.settlement["transfers"])
    assert len(hands) == _hands(soiree).count() > 0
    assert all(h["ok"] and len(h["digest"]) == 64 for h in hands)
    assert pdf.startswith(b"%PDF") and len(pdf) > 1000
    # Once the clock has verified them, the sheet reads the verdicts in one query, whatever
    # the number of hands, and they say what verifying now says.
    assert verify_ended_hands() == len(hands)
    with CaptureQueriesContext(connection) as read:
        assert sheets.hands_of(soiree) == hands
    assert len(read) == 1
    # The chart's lines end at the standings' nets (a Comet evening: no pot is shared at the
    # end), one point a hand of the evening.
    lines = sheets.chips_over_the_evening(soiree)
    assert {name: points[-1] for name, points in lines.items()} == {
        r["player"]: r["net"] for r in _everyone(soiree)}
    assert {len(points) for points in lines.values()} == {len(hands)}
    svg = sheets.chips_chart_svg(soiree, title="Chips")
    assert svg.startswith("<svg") and all(name in svg for name in lines)



def test_the_tables_api_gives_each_tables_latest_partie_and_the_hands_of_the_evening(
        clock, club, members, client, organiser):
    """What the soirée page and the room screen read: one row a table however many parties it
    has had (``history`` for all of them), and the evening's hands over from its read model;
    each row's hands played read off its latest hand."""
    soiree = _soiree(club, bot_kind="heuristic", deals_per_partie=1, lasts=timedelta(seconds=30))
    for user in members(4):
        services.checkin(soiree=soiree, user=user, at=timezone.now())
    clock.move_to(OPENS - timedelta(seconds=1))
    _beat(clock, until=lambda: _status(soiree) == Soiree.Status.CLOSED)
    client.force_login(organiser)
    url = reverse("soiree-tables", args=[soiree.pk])

    with CaptureQueriesContext(connection) as read:
        latest = client.get(url).json()
    queries = [q["sql"] for q in read]  # read now: the next request empties the log
    every = client.get(url, {"history": "true"}).json()

    rounds = _tables(soiree)
    numbers = sorted({t.number for t in rounds})
    assert len(rounds) > len(numbers)  # the tables played several parties each
    assert [(t["table"], t["round"]) for t in latest["tables"]] == [
        (n, max(t.round for t in rounds if t.number == n)) for n in numbers]
    assert len(every["tables"]) == len(rounds)
    assert latest["hands_over"] == every["hands_over"] == _hands(soiree).filter(
        status=Hand.Status.OVER).count()
    for row in every["tables"]:
        assert row["hands_played"] == Hand.objects.filter(
            partie_id=row["partie"], status=Hand.Status.OVER).count()
    # The session, the user, the soirée, the membership, the read model, then the tables:
    # their parties, seats, chips and latest hands; as many with two rounds as with ten.
    assert len(queries) == 9, queries
    bad = client.get(url, {"history": "perhaps"})
    assert bad.status_code == 400 and "history" in bad.json()
