"""Season ratings (tournaments/ratings.py): each partie of a season's soirées ranks its players
by net chips and rates them with openskill's Plackett-Luce model, once, in the order the
parties ended; ``ratings_rebuild`` recomputes exactly the stored values."""

from __future__ import annotations

import io
from datetime import date, timedelta
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from openskill.models import PlackettLuce

from games.models import Partie
from games.services import partie_tick
from games.tasks import sweep_deadlines
from tournaments import ratings
from tournaments.models import Club, Rating, RatingChange, Season, Soiree
from tournaments.services import checkin, soiree_create, soiree_open, soiree_tick

from .conftest import START
from .ratings_helpers import finished_partie

pytestmark = pytest.mark.django_db

EVENING = START  # the stopped clock's, where a test needs the ledger's time to agree


@pytest.fixture
def season(club: Club) -> Season:
    return Season.objects.create(club=club, name="Printemps", starts_on=date(2031, 3, 1),
                                 ends_on=date(2031, 6, 30))


@pytest.fixture
def soiree(club: Club, season: Season) -> Soiree:
    return Soiree.objects.create(club=club, season=season, name="Jeudi", game="comet",
                                 starts_at=EVENING, ends_at=EVENING + timedelta(hours=3),
                                 status=Soiree.Status.OPEN, opened_at=EVENING)


def _stored(partie: Partie, players: list[Any]) -> list[tuple[float, float, float, int]]:
    changes = {c.user_id: c for c in RatingChange.objects.filter(partie=partie)}
    return [(changes[p.pk].mu, changes[p.pk].sigma, changes[p.pk].ordinal, changes[p.pk].rank)
            for p in players]


def _everything(season: Season) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    return (list(Rating.objects.filter(season=season).order_by("user_id").values_list(
                "user_id", "mu", "sigma", "ordinal", "parties", "updated_at")),
            list(RatingChange.objects.filter(season=season).order_by("partie_id", "user_id")
                 .values_list("partie_id", "user_id", "rank", "net", "mu", "sigma", "ordinal",
                              "at")))


def test_the_model_gives_openskill_s_documented_example() -> None:
    # openskill's user manual (docs/source/manual.rst, "The Basics" and "Ranks"), and the
    # package's README: two teams of two fresh players, the first one winning.
    model = ratings.MODEL
    r = model.rating
    [[p1, p2], [p3, p4]] = model.rate([[r(), r()], [r(), r()]])

    assert (p1.mu, p1.sigma) == (p2.mu, p2.sigma) == (26.964294621803063, 8.177962604389991)
    assert (p3.mu, p3.sigma) == (p4.mu, p4.sigma) == (23.035705378196937, 8.177962604389991)
    assert p1.ordinal() == 2.4304068086330872
    assert p3.ordinal() == -1.4981824349730388
    assert (model.mu, model.sigma) == (25.0, 25.0 / 3.0)


def test_a_partie_ranks_its_players_by_net_and_rates_them_as_openskill_does(
        soiree: Soiree, members: Any) -> None:
    ana, bob, cleo, dan = members(4)
    first = finished_partie(soiree=soiree, players=[ana, bob, cleo, dan], nets=[30, -5, 0, -25],
                            ended_at=EVENING + timedelta(minutes=40))
    second = finished_partie(soiree=soiree, players=[dan, ana, bob], nets=[12, -4, -8],
                             ended_at=EVENING + timedelta(minutes=90))

    assert ratings.rate_partie(partie=first) == 4
    assert ratings.rate_partie(partie=second) == 3

    model = PlackettLuce()
    r = model.rating
    [[a1], [b1], [c1], [d1]] = model.rate([[r()], [r()], [r()], [r()]], ranks=[1, 3, 2, 4])
    assert _stored(first, [ana, bob, cleo, dan]) == [
        (a1.mu, a1.sigma, a1.ordinal(), 1), (b1.mu, b1.sigma, b1.ordinal(), 3),
        (c1.mu, c1.sigma, c1.ordinal(), 2), (d1.mu, d1.sigma, d1.ordinal(), 4)]
    # The second partie starts from the ratings the first one left.
    [[d2], [a2], [b2]] = model.rate([[d1], [a1], [b1]], ranks=[1, 2, 3])
    assert _stored(second, [dan, ana, bob]) == [
        (d2.mu, d2.sigma, d2.ordinal(), 1), (a2.mu, a2.sigma, a2.ordinal(), 2),
        (b2.mu, b2.sigma, b2.ordinal(), 3)]
    now = {x.user_id: x for x in Rating.objects.filter(season=soiree.season)}
    assert (now[ana.pk].mu, now[ana.pk].sigma, now[ana.pk].ordinal) == (a2.mu, a2.sigma,
                                                                         a2.ordinal())
    assert (now[ana.pk].parties, now[cleo.pk].parties) == (2, 1)
    assert now[cleo.pk].mu == c1.mu and now[ana.pk].updated_at == second.ended_at
    assert [c.net for c in RatingChange.objects.filter(partie=second).order_by("rank")] == [
        12, -4, -8]


def test_a_share_of_the_last_pot_counts_in_the_net(soiree: Soiree, members: Any) -> None:
    from games.services import chips
    from ledger import services as ledger

    ana, bob, cleo = members(3)
    # Its hand left 3 chips in the pot (bob paid them in): shared one each as the partie ends.
    partie = finished_partie(soiree=soiree, players=[ana, bob, cleo], nets=[1, -4, 0],
                             ended_at=EVENING + timedelta(minutes=30))
    wallet = ledger.wallet_get_or_create(club_key=soiree.club.slug, owner=bob)
    ledger.buy_in(wallet=wallet, amount=3, source="test", idempotency_key="test:bob")
    ledger.entry_post(postings=[(wallet, -3), (chips.pot(partie), 3)], memo="into the pot",
                      source=f"hand:{partie.pk}/event:1", idempotency_key=f"test:{partie.pk}")
    chips.share_pot(partie=partie, seats=list(partie.seats.order_by("number")),
                    last_banker=2)

    ratings.rate_partie(partie=partie)

    changes = RatingChange.objects.filter(partie=partie)
    assert {c.user_id: (c.net, c.rank) for c in changes} == {
        ana.pk: (2, 1), bob.pk: (-3, 3), cleo.pk: (1, 2)}


def test_equal_nets_share_a_rank_as_openskill_ties(soiree: Soiree, members: Any) -> None:
    ana, bob, cleo = members(3)
    partie = finished_partie(soiree=soiree, players=[ana, bob, cleo], nets=[10, -20, 10],
                             ended_at=EVENING + timedelta(minutes=30))

    ratings.rate_partie(partie=partie)

    r = PlackettLuce().rating
    [[a], [b], [c]] = PlackettLuce().rate([[r()], [r()], [r()]], ranks=[1, 3, 1])
    stored = _stored(partie, [ana, bob, cleo])
    assert stored == [(a.mu, a.sigma, a.ordinal(), 1), (b.mu, b.sigma, b.ordinal(), 3),
                      (c.mu, c.sigma, c.ordinal(), 1)]
    assert stored[0] == stored[2]  # the two tied players: the same rating after it
    assert stored[0][0] > 25 > stored[1][0]


def test_a_partie_rated_again_changes_nothing(soiree: Soiree, members: Any) -> None:
    ana, bob = members(2)
    partie = finished_partie(soiree=soiree, players=[ana, bob], nets=[3, -3],
                             ended_at=EVENING + timedelta(minutes=20))
    assert ratings.rate_partie(partie=partie) == 2
    before = _everything(soiree.season)

    assert ratings.rate_partie(partie=partie) == 0
    assert ratings.rate_parties(parties=[partie, partie]) == 0

    assert _everything(soiree.season) == before
    assert RatingChange.objects.count() == 2


def test_casual_tables_and_soirees_outside_a_season_are_not_rated(
        club: Club, members: Any) -> None:
    ana, bob = members(2)
    casual = finished_partie(players=[ana, bob], nets=[5, -5], ended_at=EVENING)
    unseasoned = Soiree.objects.create(club=club, name="Hors saison", game="comet",
                                       starts_at=EVENING, ends_at=EVENING + timedelta(hours=2))
    outside = finished_partie(soiree=unseasoned, players=[ana, bob], nets=[5, -5],
                              ended_at=EVENING)

    assert ratings.rate_partie(partie=casual) == 0
    assert ratings.rate_partie(partie=outside) == 0
    assert not ratings.parties_to_rate(soiree=unseasoned).exists()
    assert not Rating.objects.exists() and not RatingChange.objects.exists()


def test_bots_are_rated_like_anyone_and_known_as_bots(soiree: Soiree, members: Any) -> None:
    from games.services.chips import bot_user

    (ana,) = members(1)
    voltaire = bot_user(0)
    partie = finished_partie(soiree=soiree, players=[voltaire, ana], nets=[9, -9], bots=(0,),
                             ended_at=EVENING + timedelta(minutes=15))

    ratings.rate_partie(partie=partie)

    assert Rating.objects.get(user=voltaire).mu > 25 > Rating.objects.get(user=ana).mu
    assert ratings.bot_ids(season=soiree.season) == {voltaire.pk}


def test_the_tick_rates_the_parties_a_soiree_ends_with(soiree: Soiree, members: Any) -> None:
    ana, bob, cleo = members(3)
    partie = finished_partie(soiree=soiree, players=[ana, bob, cleo], nets=[4, 0, -4],
                             ended_at=soiree.ends_at - timedelta(minutes=5))

    soiree_tick(soiree=soiree, at=soiree.ends_at + timedelta(seconds=1))

    soiree.refresh_from_db()
    assert soiree.status == Soiree.Status.CLOSED
    assert RatingChange.objects.filter(partie=partie).count() == 3


def test_a_partie_noticed_late_is_rated_in_its_place(soiree: Soiree, members: Any) -> None:
    ana, bob, cleo = members(3)
    early = finished_partie(soiree=soiree, players=[ana, bob], nets=[6, -6],
                            ended_at=EVENING + timedelta(minutes=30))
    late = finished_partie(soiree=soiree, players=[bob, cleo, ana], nets=[1, 1, -2],
                           ended_at=EVENING + timedelta(minutes=50))

    ratings.rate_partie(partie=late)
    ratings.rate_partie(partie=early)  # ended first: the season is rated again in order

    assert ratings.differences(season=soiree.season) == []
    rated = [c.partie_id for c in RatingChange.objects.filter(season=soiree.season)]
    assert rated == [early.pk] * 2 + [late.pk] * 3


def test_a_rebuild_gives_exactly_the_stored_ratings(soiree: Soiree, club: Club,
                                                    members: Any) -> None:
    from games.services.chips import bot_user

    people = members(5)
    bots = [bot_user(0), bot_user(1)]
    other = Soiree.objects.create(club=club, season=soiree.season, name="Vendredi",
                                  game="commere", starts_at=EVENING + timedelta(days=1),
                                  ends_at=EVENING + timedelta(days=1, hours=3))
    tables = [
        (soiree, [people[0], people[1], bots[0]], [7, -3, -4], (2,)),
        (soiree, [people[2], people[3], people[4]], [0, 0, 0], ()),
        (soiree, [people[1], people[0], bots[0], people[3]], [-10, 4, 4, 2], (2,)),
        (other, [bots[1], people[4], people[2], people[0]], [5, -1, -1, -3], (0,)),
        (other, [people[3], bots[1], people[1]], [2, -9, 7], (1,)),
    ]
    parties = [finished_partie(soiree=s, players=p, nets=n, bots=b,
                               ended_at=EVENING + timedelta(hours=i))
               for i, (s, p, n, b) in enumerate(tables)]
    ratings.rate_parties(parties=parties)
    stored = _everything(soiree.season)
    out = io.StringIO()

    call_command("ratings_rebuild", "--season", str(soiree.season.pk), stdout=out)

    assert _everything(soiree.season) == stored  # every float exactly
    assert "5 partie(s) rated, 7 player(s)" in out.getvalue()
    call_command("ratings_rebuild", "--season", str(soiree.season.pk), "--check",
                 stdout=io.StringIO())


def test_the_check_reports_a_stored_rating_that_a_rebuild_would_not_give(
        soiree: Soiree, members: Any) -> None:
    ana, bob = members(2)
    ratings.rate_partie(partie=finished_partie(soiree=soiree, players=[ana, bob], nets=[1, -1],
                                               ended_at=EVENING + timedelta(minutes=10)))
    Rating.objects.filter(user=ana).update(mu=26.0)
    out = io.StringIO()

    with pytest.raises(CommandError, match="1 difference"):
        call_command("ratings_rebuild", "--season", str(soiree.season.pk), "--check",
                     stdout=out)
    assert f"rating of user {ana.pk}" in out.getvalue()


def test_a_rebuild_of_an_unknown_season_is_refused() -> None:
    with pytest.raises(CommandError, match="no season 999999"):
        call_command("ratings_rebuild", "--season", "999999", stdout=io.StringIO())


def test_a_soiree_played_by_bots_rates_each_partie_from_its_chips(
        club: Club, season: Season, clock: Any, members: Any) -> None:
    """A real evening: Ma commère tables of bots, and one person who lets every decision time
    out, play out (seeded), the clock's tick rates their parties, and each player's nets add
    up to the soirée's standings."""
    soiree = soiree_create(club=club, season=season, name="Samedi", game="commere",
                           starts_at=EVENING, ends_at=EVENING + timedelta(hours=2),
                           deals_per_partie=2, pause_between_hands=timedelta(0),
                           move_timeout=timedelta(seconds=1), share_window=timedelta(seconds=1),
                           min_tables=2, bot_kind="heuristic")
    checkin(soiree=soiree, user=members(1)[0], at=EVENING)  # nobody here: it would not open
    soiree_open(soiree=soiree, at=EVENING)
    at = EVENING
    for _ in range(3000):
        playing = Partie.objects.filter(soiree_table__soiree=soiree,
                                        status=Partie.Status.PLAYING)
        if not playing.exists():
            break
        at += timedelta(seconds=1)
        clock.move_to(at)
        sweep_deadlines()
        for partie in playing:
            partie_tick(partie_id=partie.pk, at=at)
    soiree_close_at = soiree.ends_at + timedelta(seconds=1)
    soiree_tick(soiree=soiree, at=soiree_close_at)

    soiree.refresh_from_db()
    assert soiree.status == Soiree.Status.CLOSED
    parties = Partie.objects.filter(soiree_table__soiree=soiree)
    assert {p.pk for p in parties} == set(RatingChange.objects.values_list("partie_id",
                                                                          flat=True))
    nets: dict[str, int] = {}
    for change in RatingChange.objects.select_related("user"):
        nets[change.user.username] = nets.get(change.user.username, 0) + change.net
    assert nets == {row["player"]: row["net"]
                    for row in soiree.standings["players"] + soiree.standings["bots"]}
    assert ratings.differences(season=season) == []
