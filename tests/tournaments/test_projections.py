"""A soirée's read models (tournaments/projections.py): the standings, the results sheet's
figures and the chart are stored as the hands end, in each hand's transaction, and as rulings
and the door move chips; whatever happened they equal what ``rebuild_projections`` computes
from the events and the ledger, and the pages and the API read them."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from games.models import Hand, HandEvent
from games.services import deadline_fire, partie_start, partie_tick
from ledger.models import JournalEntry
from tests.games.test_services import _void_seed
from tournaments import arbitration, projections, selectors, services, sheets
from tournaments.models import Soiree, SoireeProjection, SoireeStanding
from tournaments.seating import draw

from .test_clock import OPENS, _beat, _soiree, _status
from .test_rulings import _moved
from .test_rulings import played as played  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db


def _same(stored: dict[str, Any], computed: dict[str, Any]) -> None:
    """The standings read from the rows are those computed from the events (their time
    apart)."""
    assert {k: v for k, v in stored.items() if k != "computed_at"} == {
        k: v for k, v in computed.items() if k != "computed_at"}


def _rows(soiree: Soiree) -> dict[str, dict[str, Any]]:
    return {r.player.username: {f: getattr(r, f) for f in projections.FIELDS}
            for r in SoireeStanding.objects.filter(soiree=soiree).select_related("player")}


def _dispute(hand: Hand, by: Any) -> Any:
    return arbitration.dispute_open(hand=hand, user=by, reason="contestée",
                                    request_id=uuid.uuid4(), at=timezone.now())


def _rule(dispute: Any, arbiter: Any, kind: str, **more: Any) -> Any:
    return arbitration.rule(dispute=dispute, arbiter=arbiter, kind=kind, reason="décidé",
                            request_id=uuid.uuid4(), at=timezone.now(), **more)


def _a_hand_of(soiree: Soiree, user: Any) -> Hand:
    """A finished hand of the soirée where ``user`` sat and chips moved."""
    return next(h for h in Hand.objects.filter(partie__soiree_table__soiree=soiree,
                                               status=Hand.Status.OVER).order_by("started_at")
                if _moved(h) and h.partie.seats.filter(player=user).exists())


@pytest.mark.parametrize("game", ["comet", "commere"])
def test_a_bots_evening_with_rulings_leaves_the_stored_figures_those_computed_again(
        game: str, clock: Any, club: Any, members: Any, client: Any) -> None:
    soiree = _soiree(club, game=game, bot_kind="heuristic", deals_per_partie=2,
                     lasts=timedelta(seconds=40), buy_in=30)
    alice, bruno = members(2, prefix="joueur")
    (arbiter,) = members(1, prefix="arbitre")
    services.membership_add(club=club, user=arbiter, role="auditor")
    for user in (alice, bruno):
        services.checkin(soiree=soiree, user=user, at=timezone.now())
    services.rebuy(soiree=soiree, user=alice, request_id=uuid.uuid4(), amount=12)
    clock.move_to(OPENS - timedelta(seconds=1))
    _beat(clock, until=lambda: Hand.objects.filter(partie__soiree_table__soiree=soiree,
                                                   status=Hand.Status.OVER).count() >= 2)

    # While it is open: the rows are the evening so far, a ruling in them.
    void = _dispute(_a_hand_of(soiree, alice), alice)
    _rule(void, arbiter, "void")
    soiree.refresh_from_db()
    assert projections.projection_differences(soiree=soiree) == []
    _same(selectors.standings_read(soiree=soiree),
          selectors.standings_compute(soiree=soiree, at=timezone.now()))

    _beat(clock, until=lambda: _status(soiree) == Soiree.Status.CLOSED)
    # After the close: an adjustment, and an appeal that undoes the void (its hand counts
    # again).
    hand = _a_hand_of(soiree, bruno)
    taker = next(s for s in hand.partie.seats.select_related("player") if s.player != bruno)
    _rule(_dispute(hand, bruno), arbiter, "adjusted",
          corrections={bruno.username: -1, taker.player.username: 1})
    _rule(void, arbiter, "stands")
    soiree.refresh_from_db()

    assert projections.projection_differences(soiree=soiree) == []
    call_command("rebuild_projections", "--check", "--soiree", str(soiree.pk))
    # The record stored at the close, kept by the rulings, is the rows' standings.
    _same(soiree.standings, selectors.standings_read(soiree=soiree))
    _same(soiree.standings, selectors.standings_compute(soiree=soiree, at=timezone.now()))
    # The results sheet's figures are the ledger's.
    assert selectors.paid_read(soiree=soiree) == selectors.chips_paid(soiree)
    assert selectors.paid_read(soiree=soiree)[alice.username] == (30, 12)
    lines = sheets.chips_over_the_evening(soiree)
    assert {name: points[-1] for name, points in lines.items()} == {
        r["player"]: r["net"] for r in soiree.standings["players"] + soiree.standings["bots"]}
    # The results page lists the hands a page at a time, with the digest each one's record,
    # verified, ends with.
    assert [(h["id"], h["digest"]) for h in sheets.hands_page(soiree, 1)] == [
        (h["id"], h["digest"]) for h in sheets.hands_of(soiree)][:sheets.HANDS_PER_PAGE]
    client.force_login(alice)
    answer = client.get(f"/api/soirees/{soiree.pk}/standings").json()
    assert answer["standings"] == soiree.standings
    assert client.get(f"/soirees/{soiree.pk}/results").status_code == 200


def test_the_pot_a_closing_partie_shares_reaches_the_stored_nets(
        club: Any, members: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # Ma commère: the pot a void last round leaves is shared among the seats at the partie's
    # end (RULES.md §1), an entry of the close's, not of a hand's.
    now = timezone.now()
    soiree = services.soiree_create(
        club=club, name="Ma commère", game="commere", buy_in=40, starts_at=now,
        ends_at=now + timedelta(hours=2), options={"ante": 2, "max_turns": 1},
        deals_per_partie=1, forced_move_delay=timedelta(0), comet_window=timedelta(0))
    (ana,) = members(1)
    services.checkin(soiree=soiree, user=ana, at=now)
    (plan,) = draw("commere", [ana], seed="any", bots_allowed=True)
    seats = len(plan.players) + plan.bots
    seed = _void_seed(seats, 2, {str(s): 40 for s in range(seats)})
    monkeypatch.setattr("games.services.parties.new_seed", lambda: seed)
    (table,) = services.soiree_open(soiree=soiree, at=now)
    hand = table.partie.hands.get()
    while hand.status == Hand.Status.PLAYING:  # nobody moves: every decision times out
        deadline_fire(hand_id=hand.pk, seq=hand.last_seq, at=hand.deadline)
        hand.refresh_from_db()
    assert HandEvent.objects.filter(hand=hand, type="void").exists()
    before = _rows(soiree)

    partie_tick(partie_id=table.partie_id, at=now + timedelta(hours=1))  # its end closes it

    shared = JournalEntry.objects.get(idempotency_key=f"partie:{table.partie_id}:pot-shared")
    gains = {p.account.owner.username: p.amount
             for p in shared.postings.select_related("account__owner") if p.account.owner}
    after = _rows(soiree)
    assert {p: after[p]["net"] - before[p]["net"] for p in after} == {
        p: gains.get(p, 0) for p in after}
    assert sum(gains.values()) > 0
    assert projections.projection_differences(soiree=soiree) == []


def test_a_void_and_an_adjustment_change_the_stored_standings(played: Any, client: Any) -> None:  # noqa: F811
    soiree, hand = played["soiree"], played["hand"]
    alice, arbiter = played["alice"], played["arbiter"]
    seated = set(hand.partie.seats.values_list("player__username", flat=True))
    before = _rows(soiree)
    version = selectors.projection_version(soiree=soiree)
    client.force_login(alice)
    first = client.get(f"/api/soirees/{soiree.pk}/standings")

    dispute = _dispute(hand, alice)
    _rule(dispute, arbiter, "void")

    voided = _rows(soiree)
    moved = _moved(hand)
    # The hand counts no more, and its chips went back.
    assert {p: before[p]["hands"] - voided[p]["hands"] for p in seated} == dict.fromkeys(
        seated, 1)
    assert {p: voided[p]["net"] - before[p]["net"] for p in moved} == {
        p: -n for p, n in moved.items()}
    assert selectors.projection_version(soiree=soiree) > version
    # The API answers the new standings, under a new ETag.
    again = client.get(f"/api/soirees/{soiree.pk}/standings",
                       HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 200 and again["ETag"] != first["ETag"]
    shown = {r["player"]: r["hands"] for r in again.json()["standings"]["players"]
             + again.json()["standings"]["bots"]}
    assert shown == {p: row["hands"] for p, row in voided.items() if row["listed"]}

    # An adjustment between two of its players moves their stored nets, and nothing else.
    players = [s.player for s in hand.partie.seats.select_related("player").order_by("number")]
    giver, taker = players[0], players[1]
    held = services.stack(soiree, giver).balance if not hand.partie.seats.get(
        player=giver).bot else 1
    amount = max(1, min(2, held))
    _rule(_dispute(hand, alice), arbiter, "adjusted",
          corrections={giver.username: -amount, taker.username: amount})

    adjusted = _rows(soiree)
    assert adjusted[giver.username]["net"] == voided[giver.username]["net"] - amount
    assert adjusted[taker.username]["net"] == voided[taker.username]["net"] + amount
    assert {p: row["hands"] for p, row in adjusted.items()} == {
        p: row["hands"] for p, row in voided.items()}
    assert projections.projection_differences(soiree=soiree) == []


def test_the_standings_answer_304_while_nothing_changed(
        played: Any, client: Any, outsider: Any) -> None:  # noqa: F811
    soiree = played["soiree"]
    client.force_login(played["alice"])
    first = client.get(f"/api/soirees/{soiree.pk}/standings")
    assert first.status_code == 200 and first["ETag"]

    unchanged = client.get(f"/api/soirees/{soiree.pk}/standings",
                           HTTP_IF_NONE_MATCH=first["ETag"])
    chart = client.get(f"/soirees/{soiree.pk}/chips.svg")
    chart_again = client.get(f"/soirees/{soiree.pk}/chips.svg", HTTP_IF_NONE_MATCH=chart["ETag"])

    assert unchanged.status_code == 304 and not unchanged.content
    assert chart.status_code == 200 and chart_again.status_code == 304
    # One who may not see the soirée learns nothing, not even that it is unchanged.
    client.force_login(outsider)
    assert client.get(f"/api/soirees/{soiree.pk}/standings",
                      HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 403


def _playing(soiree: Soiree) -> Hand:
    return Hand.objects.filter(partie__soiree_table__soiree=soiree,
                               status=Hand.Status.PLAYING).select_related("partie").first()


def test_a_hand_s_figures_are_stored_in_the_command_that_ends_it(
        clock: Any, club: Any, members: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    soiree = _soiree(club, lasts=timedelta(minutes=30))
    (ana,) = members(1)
    services.checkin(soiree=soiree, user=ana, at=timezone.now())
    services.soiree_open(soiree=soiree, at=OPENS)
    hand = _playing(soiree)

    # The projection fails: the move that ends the hand fails with it and leaves nothing.
    def broken(**_: Any) -> None:
        raise RuntimeError("the read model is down")

    monkeypatch.setattr(projections, "hand_add", broken)
    failed = None
    while failed is None:
        hand.refresh_from_db()
        seq, entries = hand.last_seq, JournalEntry.objects.count()
        try:
            deadline_fire(hand_id=hand.pk, seq=seq, at=hand.deadline)
        except RuntimeError:
            failed = seq
    hand.refresh_from_db()
    assert hand.status == Hand.Status.PLAYING and hand.last_seq == failed
    assert not HandEvent.objects.filter(hand=hand, type="hand_over").exists()
    assert JournalEntry.objects.count() == entries
    assert not SoireeStanding.objects.filter(soiree=soiree, listed=True).exists()

    # Working again, the same move ends the hand, and its figures are there when it returns.
    monkeypatch.undo()
    assert deadline_fire(hand_id=hand.pk, seq=failed, at=hand.deadline)
    hand.refresh_from_db()
    assert hand.status == Hand.Status.OVER
    assert SoireeProjection.objects.get(soiree=soiree).hands == 1
    _same(selectors.standings_read(soiree=soiree),
          selectors.standings_compute(soiree=soiree, at=timezone.now()))
    assert projections.projection_differences(soiree=soiree) == []


def test_a_casual_table_s_hands_store_nothing(django_user_model: Any) -> None:
    partie_start(game="comet", players=[], bots=["heuristic"] * 3, at=timezone.now(),
                 options={"deals": 1})

    assert Hand.objects.filter(status=Hand.Status.OVER).exists()
    assert not SoireeProjection.objects.exists() and not SoireeStanding.objects.exists()


def test_the_check_names_the_first_difference_and_the_rebuild_mends_it(
        played: Any) -> None:  # noqa: F811
    soiree = played["soiree"]
    row = SoireeStanding.objects.filter(soiree=soiree, listed=True).select_related(
        "player").first()
    SoireeStanding.objects.filter(pk=row.pk).update(net=row.net + 5)

    with pytest.raises(CommandError, match=f"{row.player.username}'s net stored "
                                           f"{row.net + 5}, computed {row.net}"):
        call_command("rebuild_projections", "--check")
    assert SoireeStanding.objects.get(pk=row.pk).net == row.net + 5  # the check wrote nothing

    call_command("rebuild_projections")
    call_command("rebuild_projections", "--check")
    assert SoireeStanding.objects.get(soiree=soiree, player=row.player).net == row.net


def test_the_chart_keeps_a_point_a_stretch_whatever_the_order_of_the_hands() -> None:
    deltas = [(3, 5), (1, -2), (3, 1), (7, 4), (0, 2), (7, -9)]
    forward: list[list[int]] = []
    for stretch, delta in deltas:
        forward = projections.chart_add(forward, stretch, delta)
    backward: list[list[int]] = []
    for stretch, delta in reversed(deltas):
        backward = projections.chart_add(backward, stretch, delta)

    assert forward == backward == [[0, 2], [1, 0], [3, 6], [7, 1]]
