"""Random evenings, each from a seed: two soirées of a club at overlapping times, sharing its
members; check-ins (a second one while the first soirée holds the player is refused), rebuys and
cash-outs at the door, late arrivals, and rulings of each kind before and after the close. For
each soirée, whatever happened: its settlement is its standings' parties (its people and the
club), its standings are the ledger's entries of its own hands, pots and rulings, and each
player's stack holds his buy-ins, rebuys and cash-outs there plus his net there, so no chip
crossed from one soirée to the other. A refused request changes nothing."""

from __future__ import annotations

import random
import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.db.models import Q, Sum
from django.utils import timezone

from games.models import Hand
from ledger.models import JournalEntry, Posting
from tournaments import arbitration, selectors, services
from tournaments.errors import SoireeError, SoireeState
from tournaments.models import Registration, Ruling, Soiree

from .test_clock import OPENS, PAUSE, TIMEOUT, _beat

pytestmark = pytest.mark.django_db


def _state() -> tuple[int, list[tuple[Any, ...]]]:
    return (JournalEntry.objects.count(),
            sorted(Registration.objects.values_list("soiree_id", "user_id", "checked_in_at")))


def _try(action: Any, refused: list[str]) -> bool:
    """Run a door request; a refusal must leave the books and the registrations as they were."""
    before = _state()
    try:
        action()
        return True
    except (SoireeError, SoireeState) as exc:
        assert _state() == before, f"a refusal changed something: {exc}"
        refused.append(str(exc))
        return False


def _own_nets(soiree: Soiree) -> dict[str, int]:
    """Each player's net from the ledger entries of this soirée's hands, pots and rulings."""
    sources = Q(pk__in=[])
    for hand_id in Hand.objects.filter(partie__soiree_table__soiree=soiree).values_list(
            "pk", flat=True):
        sources |= Q(entry__source__startswith=f"hand:{hand_id}/")
    for partie_id in soiree.tables.values_list("partie_id", flat=True):
        sources |= Q(entry__source__startswith=f"partie:{partie_id}/pot-shared")
    for dispute_id in soiree.disputes.values_list("pk", flat=True):
        sources |= Q(entry__source__startswith=f"dispute:{dispute_id}/")
    rows = (Posting.objects.filter(sources, account__kind="wallet")
            .values("account__owner__username").annotate(net=Sum("amount")))
    return {r["account__owner__username"]: r["net"] for r in rows if r["net"]}


def _door_chips(soiree: Soiree, user: Any) -> int:
    """What the door put in the player's stack: buy-ins and rebuys, less cash-outs and undone
    check-ins (their reversing entries), read from the ledger by the soirée's sources."""
    return int(Posting.objects.filter(
        account=services.stack(soiree, user),
        entry__source__in=[f"soiree:{soiree.pk}/buy-in", f"soiree:{soiree.pk}/rebuy",
                           f"soiree:{soiree.pk}/cash-out"],
    ).aggregate(total=Sum("amount"))["total"] or 0)


def _rule(soiree: Soiree, rng: random.Random, arbiter: Any, kind: str) -> None:
    hands = [h for h in Hand.objects.filter(partie__soiree_table__soiree=soiree,
                                            status=Hand.Status.OVER).order_by("started_at")
             if Posting.objects.filter(entry__source__startswith=f"hand:{h.pk}/",
                                       account__owner__isnull=False).exists()]
    if not hands:
        return
    hand = rng.choice(hands)
    people = list(hand.partie.seats.filter(bot="").select_related("player"))
    if not people:
        return
    dispute = arbitration.dispute_open(hand=hand, user=people[0].player, reason="contestée",
                                       request_id=uuid.uuid4(), at=timezone.now())
    corrections = None
    if kind == "adjusted":
        seats = list(hand.partie.seats.select_related("player"))
        giver, taker = rng.sample(seats, 2)
        held = services.stack(soiree, giver.player).balance if not giver.bot else 1
        amount = max(1, min(3, held))
        corrections = {giver.player.username: -amount, taker.player.username: amount}
    effect = arbitration.ruling_effect(dispute=dispute, arbiter=arbiter, kind=kind,
                                       corrections=corrections)
    refused: list[str] = []
    posted = _try(lambda: arbitration.rule(
        dispute=dispute, arbiter=arbiter, kind=kind, reason="décidé", request_id=uuid.uuid4(),
        at=timezone.now(), corrections=corrections), refused)
    assert posted == effect["postable"], refused


def _check(soiree: Soiree) -> None:
    soiree.refresh_from_db()
    standings, settlement = soiree.standings, soiree.settlement
    everyone = standings["players"] + standings["bots"]
    # The standings are the ledger's entries of this soirée alone.
    assert {r["player"]: r["net"] for r in everyone if r["net"]} == _own_nets(soiree)
    # The settlement settles the standings' parties: its people, and the club for its bots.
    paid: dict[str, int] = {}
    for t in settlement["transfers"] + settlement["corrections"]:
        assert {t["from"], t["to"]} <= {r["player"] for r in standings["players"]} | {
            selectors.CLUB}, t
        paid[t["from"]] = paid.get(t["from"], 0) - t["amount"]
        paid[t["to"]] = paid.get(t["to"], 0) + t["amount"]
    assert {p: n for p, n in paid.items() if n} == selectors.party_nets(standings)
    # Each stack holds what the door gave and took there plus the net there: nothing else.
    nets = {r["player"]: r["net"] for r in standings["players"]}
    for registration in soiree.registrations.select_related("user"):
        user = registration.user
        assert services.stack(soiree, user).balance == (
            _door_chips(soiree, user) + nets.get(user.username, 0)), user.username


@pytest.mark.parametrize("seed", range(5))
def test_random_evenings_keep_each_soiree_s_chips_and_settlement_its_own(
        seed: int, clock: Any, club: Any, members: Any) -> None:
    rng = random.Random(seed)
    people = members(7)
    (arbiter,) = members(1, prefix="arbitre")
    services.membership_add(club=club, user=arbiter, role="auditor")
    common = {"move_timeout": TIMEOUT, "pause_between_hands": PAUSE, "bot_kind": "timeout",
              "forced_move_delay": timedelta(0), "comet_window": timedelta(0),
              "deals_per_partie": 2, "buy_in": 20}
    first = services.soiree_create(club=club, name="Comet", game="comet", starts_at=OPENS,
                                   ends_at=OPENS + timedelta(seconds=40), **common)
    second = services.soiree_create(club=club, name="Ma commère", game="commere",
                                    starts_at=OPENS + timedelta(seconds=10),
                                    ends_at=OPENS + timedelta(seconds=50), **common)
    refused: list[str] = []
    at = timezone.now()
    # The door before the openings: each member picks a soirée (or both: the second is
    # refused, naming the first), and some rebuy or cash out.
    late = people[-1]
    for i, user in enumerate(people[:-1]):
        # Someone at each (a soirée nobody is checked in at waits), then as they please.
        chosen = ([first, second][i:i + 1] if i < 2
                  else rng.sample([first, second], rng.choice([1, 2])))
        for soiree in chosen:
            _try(lambda s=soiree, u=user: services.checkin(soiree=s, user=u, at=at), refused)
        for soiree in (first, second):
            if rng.random() < 0.3:
                _try(lambda s=soiree, u=user: services.rebuy(soiree=s, user=u,
                                                            request_id=uuid.uuid4()), refused)
            if rng.random() < 0.15:
                _try(lambda s=soiree, u=user: services.cash_out(soiree=s, user=u,
                                                               request_id=uuid.uuid4()),
                     refused)
    assert any("another soirée" in why for why in refused) or all(
        Registration.objects.filter(user=u, checked_in_at__isnull=False).count() <= 1
        for u in people)
    for user in people:  # never checked in at both while their times overlap
        assert Registration.objects.filter(user=user, checked_in_at__isnull=False).count() <= 1

    # The evening runs; a late arrival, rebuys, and a ruling before the close.
    clock.move_to(OPENS - timedelta(seconds=1))
    _beat(clock, until=lambda: Soiree.objects.filter(status=Soiree.Status.OPEN).count() == 2
          or Soiree.objects.filter(status=Soiree.Status.CLOSED).exists())
    _try(lambda: services.checkin(soiree=second, user=late, at=timezone.now()), refused)
    for soiree in (first, second):
        for registration in soiree.registrations.filter(checked_in_at__isnull=False):
            if rng.random() < 0.4:
                _try(lambda s=soiree, u=registration.user: services.rebuy(
                    soiree=s, user=u, request_id=uuid.uuid4()), refused)
    _beat(clock, until=lambda: Hand.objects.filter(partie__soiree_table__soiree=first,
                                                   status=Hand.Status.OVER).exists())
    _rule(first, rng, arbiter, rng.choice(["void", "adjusted", "stands"]))
    _beat(clock, until=lambda: not Soiree.objects.exclude(status=Soiree.Status.CLOSED).exists())

    # Rulings after the close, then every soirée's books.
    for soiree in (first, second):
        _rule(soiree, rng, arbiter, rng.choice(["void", "adjusted"]))
    for soiree in (first, second):
        assert Hand.objects.filter(partie__soiree_table__soiree=soiree).exists()
        _check(soiree)
    assert Ruling.objects.filter(dispute__soiree=first).exists()
    assert Ruling.objects.filter(dispute__soiree=second).exists()
    call_command("check_books")
