"""Season ratings: openskill's Plackett-Luce model over the parties of a season's soirées.

A partie is rated once it is over, if its table belongs to a soirée of a season (a casual
table, or a soirée outside any season, is not), at least one hand was played and two players
sat. Each player is a team of one, ranked by his net chips over the partie (its hands' results
and his share of the last pot): 1 for the best net, equal nets share a rank.

The model is sequential: a player's rating before a partie enters its update. The parties of a
season are therefore rated in the order (``ended_at``, partie id), and ``rebuild`` replays
exactly that order, so the stored ratings are always what a rebuild from the finished parties
gives, float for float (``replay`` computes them without writing; ``ratings_rebuild --check``
compares).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet
from openskill.models import PlackettLuce

from games import selectors as game_selectors
from games.models import Partie, Seat
from ledger import selectors as ledger_selectors

from .models import Rating, RatingChange, Season
from .selectors import rulings_net

#: The model with openskill's defaults (mu 25, sigma 25/3, beta 25/6, tau 25/300): changing
#: one changes every rating, and needs a ``ratings_rebuild`` of each season.
MODEL = PlackettLuce()

# The pot-shared entry is found by its source, which names the partie: the window only has to
# hold whatever time the ledger's clock stamped it with.
_EVER = (datetime(1970, 1, 1, tzinfo=UTC), datetime(3000, 1, 1, tzinfo=UTC))


@dataclass(frozen=True)
class Placing:
    """One player's result in a rated partie."""

    user_id: int
    net: int
    rank: int


@dataclass(frozen=True)
class Skill:
    """A player's rating after a partie, as stored."""

    mu: float
    sigma: float
    ordinal: float


@dataclass
class Standing:
    """A player's rating in a season as a replay has it so far."""

    skill: Skill
    parties: int
    updated_at: datetime


@dataclass(frozen=True)
class Change:
    """One line of a replay: a player's placing in a partie and his rating after it."""

    partie_id: Any
    at: datetime
    placing: Placing
    skill: Skill


@dataclass
class Replay:
    """A season's ratings as its finished parties give them, rated in order."""

    standings: dict[int, Standing]
    changes: list[Change]


# -- which parties, and how their players place --------------------------------------------------


def season_of(partie: Partie) -> Season | None:
    """The season a partie is rated in: its soirée's, if its table is a soirée's."""
    return (Season.objects.filter(soirees__tables__partie=partie).first()
            if partie.pk else None)


def rated_parties(*, season: Season) -> QuerySet[Partie]:
    """The season's finished soirée parties, in the order they are rated."""
    return (Partie.objects.filter(soiree_table__soiree__season=season,
                                  status=Partie.Status.OVER, ended_at__isnull=False)
            .order_by("ended_at", "id"))


def placings(partie: Partie) -> list[Placing]:
    """The partie's players by seat with their nets and ranks; empty when it cannot be rated
    (no hand played, or fewer than two players)."""
    seats = {s.number: s.player_id for s in partie.seats.order_by("number")}
    nets = dict.fromkeys(seats.values(), 0)
    played = False
    for kind, payload in game_selectors.partie_results(partie=partie):
        if kind != "hand_over":
            continue
        played = True
        for seat, net in payload["result"]["net"].items():
            nets[seats[int(seat)]] += net
    if not played or len(nets) < 2:
        return []
    shared = ledger_selectors.settlement(club_key=partie.club_key, since=_EVER[0],
                                         until=_EVER[1],
                                         source_prefix=f"partie:{partie.pk}/pot-shared")
    for line in shared.nets:
        if line.account.owner_id in nets:
            nets[line.account.owner_id] += line.net
    # The rulings on its hands count as played: a void's chips sent back (its hand's result
    # stays above, the ruling undoes it), an adjustment's.
    ids = {s.player.get_username(): s.player_id
           for s in partie.seats.select_related("player")}
    for name, net in rulings_net(partie=partie).items():
        if name in ids:
            nets[ids[name]] += net
    # Competition ranking: a player's rank is one more than the number of better nets.
    return [Placing(user_id=uid, net=net, rank=1 + sum(other > net for other in nets.values()))
            for uid, net in nets.items()]


# -- the model ---------------------------------------------------------------------------------


def rate(placed: list[Placing], before: Mapping[int, Skill]) -> list[Skill]:
    """Each placing's rating after the partie, from the players' ratings before it (a player
    without one starts at the model's defaults)."""
    teams = [[MODEL.rating(mu=before[p.user_id].mu, sigma=before[p.user_id].sigma)]
             if p.user_id in before else [MODEL.rating()] for p in placed]
    after = MODEL.rate(teams, ranks=[p.rank for p in placed])
    return [Skill(mu=team[0].mu, sigma=team[0].sigma, ordinal=team[0].ordinal())
            for team in after]


def replay(*, season: Season) -> Replay:
    """The season's ratings from its finished parties, computed in memory."""
    out = Replay(standings={}, changes=[])
    for partie in rated_parties(season=season):
        ended = partie.ended_at
        placed = placings(partie)
        if ended is None or not placed:
            continue
        before = {uid: s.skill for uid, s in out.standings.items()}
        for p, skill in zip(placed, rate(placed, before), strict=True):
            was = out.standings.get(p.user_id)
            out.standings[p.user_id] = Standing(
                skill=skill, parties=(was.parties if was else 0) + 1, updated_at=ended)
            out.changes.append(Change(partie_id=partie.pk, at=ended, placing=p, skill=skill))
    return out


# -- writes ------------------------------------------------------------------------------------


def _lock(season: Season) -> Season:
    """The season's row, locked: one rater of a season at a time, so that two workers noticing
    the same partie rate it once, and parties are applied one after the other."""
    return Season.objects.select_for_update(no_key=True).get(pk=season.pk)


def rate_partie(*, partie: Partie) -> int:
    """Rate a finished partie of a season; returns the players rated (0 if it was rated
    already, or is not to be rated). A partie that ended before one already rated (its soirée's
    clock noticed it late) is put in its place by a rebuild of the season."""
    season = season_of(partie)
    if season is None or partie.status != Partie.Status.OVER or partie.ended_at is None:
        return 0
    placed = placings(partie)  # a finished partie's results no longer change
    if not placed:
        return 0
    with transaction.atomic():
        season = _lock(season)
        if RatingChange.objects.filter(partie=partie).exists():
            return 0
        later = RatingChange.objects.filter(season=season).filter(
            Q(at__gt=partie.ended_at) | Q(at=partie.ended_at, partie_id__gt=partie.pk))
        if later.exists():
            _write(season, replay(season=season))
            return len(placed)
        stored = {r.user_id: r for r in Rating.objects.filter(
            season=season, user_id__in=[p.user_id for p in placed])}
        before = {uid: Skill(mu=r.mu, sigma=r.sigma, ordinal=r.ordinal)
                  for uid, r in stored.items()}
        changes = []
        for p, skill in zip(placed, rate(placed, before), strict=True):
            rating = stored.get(p.user_id) or Rating(season=season, user_id=p.user_id)
            rating.mu, rating.sigma, rating.ordinal = skill.mu, skill.sigma, skill.ordinal
            rating.parties += 1
            rating.updated_at = partie.ended_at
            rating.save()
            changes.append(RatingChange(season=season, user_id=p.user_id, partie=partie,
                                        rank=p.rank, net=p.net, mu=skill.mu, sigma=skill.sigma,
                                        ordinal=skill.ordinal, at=partie.ended_at))
        RatingChange.objects.bulk_create(changes)
        return len(placed)


def rate_parties(*, parties: Iterable[Partie]) -> int:
    """Rate each of ``parties`` not rated yet, in the season's order; returns the players
    rated."""
    ordered = sorted(parties, key=lambda p: (p.ended_at, p.pk))
    return sum(rate_partie(partie=p) for p in ordered)


def parties_to_rate(*, soiree: Any) -> QuerySet[Partie]:
    """A soirée's parties that are over and not rated yet (none outside a season)."""
    if soiree.season_id is None:
        return Partie.objects.none()
    return Partie.objects.filter(soiree_table__soiree=soiree, status=Partie.Status.OVER,
                                 ended_at__isnull=False, rating_changes__isnull=True)


def _write(season: Season, done: Replay) -> None:
    Rating.objects.filter(season=season).delete()
    RatingChange.objects.filter(season=season).delete()
    Rating.objects.bulk_create([
        Rating(season=season, user_id=uid, mu=s.skill.mu, sigma=s.skill.sigma,
               ordinal=s.skill.ordinal, parties=s.parties, updated_at=s.updated_at)
        for uid, s in done.standings.items()])
    RatingChange.objects.bulk_create([
        RatingChange(season=season, user_id=c.placing.user_id, partie_id=c.partie_id,
                     rank=c.placing.rank, net=c.placing.net, mu=c.skill.mu, sigma=c.skill.sigma,
                     ordinal=c.skill.ordinal, at=c.at)
        for c in done.changes])


def rebuild(*, season: Season) -> Replay:
    """Delete the season's ratings and rate every finished partie of it again, in order."""
    with transaction.atomic():
        season = _lock(season)
        done = replay(season=season)
        _write(season, done)
        return done


def differences(*, season: Season) -> list[str]:
    """Where the stored ratings differ from a replay of the season (exact comparison)."""
    done = replay(season=season)
    out = []
    stored = {r.user_id: r for r in Rating.objects.filter(season=season).select_related("user")}
    for uid in sorted(set(stored) | set(done.standings)):
        row, want = stored.get(uid), done.standings.get(uid)
        have = None if row is None else (row.mu, row.sigma, row.ordinal, row.parties,
                                         row.updated_at)
        should = None if want is None else (want.skill.mu, want.skill.sigma,
                                            want.skill.ordinal, want.parties, want.updated_at)
        if have != should:
            out.append(f"rating of user {uid}: stored {have}, recomputed {should}")
    kept = {(c.partie_id, c.user_id): (c.rank, c.net, c.mu, c.sigma, c.ordinal, c.at)
            for c in RatingChange.objects.filter(season=season)}
    redone = {(c.partie_id, c.placing.user_id): (c.placing.rank, c.placing.net, c.skill.mu,
                                                 c.skill.sigma, c.skill.ordinal, c.at)
              for c in done.changes}
    for key in sorted(set(kept) | set(redone), key=str):
        if kept.get(key) != redone.get(key):
            out.append(f"partie {key[0]}, user {key[1]}: stored {kept.get(key)}, "
                       f"recomputed {redone.get(key)}")
    return out


# -- reads -------------------------------------------------------------------------------------


def bot_ids(*, season: Season) -> set[int]:
    """The users who sat as bots at the season's tables: rated like anyone, listed apart."""
    return set(Seat.objects.filter(partie__soiree_table__soiree__season=season)
               .exclude(bot="").values_list("player_id", flat=True))


def rating_list(*, season: Season) -> QuerySet[Rating]:
    """The season's ratings, best ordinal first, with their players."""
    return (Rating.objects.filter(season=season).select_related("user")
            .order_by("-ordinal", "user__username", "pk"))


def rating_history(*, season: Season, user: Any) -> QuerySet[RatingChange]:
    """A player's rated parties of the season in the order they were rated, with each one's
    soirée table."""
    return (RatingChange.objects.filter(season=season, user=user)
            .select_related("partie__soiree_table__soiree").order_by("at", "partie_id"))
