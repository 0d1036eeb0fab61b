"""Disputes and rulings on a played soirée hand: who may open and rule, each ruling kind's
chips, appeals, shortfalls, and the books, standings, settlement and statements afterwards."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.utils import timezone

from games.models import Hand
from ledger import selectors as ledger_selectors
from ledger.models import JournalEntry, Posting
from tournaments import arbitration, selectors, services
from tournaments.errors import NotAuditor, SoireeError, SoireeState
from tournaments.models import Ruling, Soiree

from .test_clock import OPENS, _beat, _soiree, _status

pytestmark = pytest.mark.django_db


@pytest.fixture
def played(clock: Any, club: Any, members: Any) -> dict[str, Any]:
    """A closed Comet soirée: two people who never move (their time-outs play) and bots."""
    soiree = _soiree(club, bot_kind="heuristic", deals_per_partie=2,
                     lasts=timedelta(seconds=25))
    alice, bruno = members(2, prefix="joueur")
    for user in (alice, bruno):
        services.checkin(soiree=soiree, user=user, at=timezone.now())
    (arbiter,) = members(1, prefix="arbiter")
    services.membership_add(club=club, user=arbiter, role="auditor")
    clock.move_to(OPENS - timedelta(seconds=1))
    _beat(clock, until=lambda: _status(soiree) == Soiree.Status.CLOSED)
    soiree.refresh_from_db()
    hand = next(h for h in Hand.objects.filter(partie__soiree_table__soiree=soiree)
                .order_by("started_at") if _moved(h)
                and {alice.pk} <= set(h.partie.seats.values_list("player_id", flat=True)))
    return {"soiree": soiree, "hand": hand, "alice": alice, "bruno": bruno,
            "arbiter": arbiter}


def _moved(hand: Hand) -> dict[str, int]:
    nets: dict[str, int] = {}
    for name, amount in Posting.objects.filter(
            entry__source__startswith=f"hand:{hand.pk}/", account__owner__isnull=False
    ).values_list("account__owner__username", "amount"):
        nets[name] = nets.get(name, 0) + amount
    return {k: v for k, v in nets.items() if v}


def _open(played: dict[str, Any], by: str = "alice") -> Any:
    return arbitration.dispute_open(hand=played["hand"], user=played[by], reason="a revoke",
                                    request_id=uuid.uuid4(), at=timezone.now())


def _standing(soiree: Soiree, name: str) -> int:
    soiree.refresh_from_db()
    return next((r["net"] for r in soiree.standings["players"] + soiree.standings["bots"]
                 if r["player"] == name), 0)


def test_who_may_dispute_and_when(played, organiser, outsider, clock):
    hand, soiree = played["hand"], played["soiree"]
    services.membership_add(club=soiree.club, user=outsider, role="player")
    with pytest.raises(NotAuditor):
        arbitration.dispute_open(hand=hand, user=outsider, reason="x", request_id=uuid.uuid4(),
                                 at=timezone.now())
    with pytest.raises(SoireeError, match="a reason is needed"):
        arbitration.dispute_open(hand=hand, user=played["alice"], reason="  ",
                                 request_id=uuid.uuid4(), at=timezone.now())
    with pytest.raises(SoireeError, match="not 999"):
        arbitration.dispute_open(hand=hand, user=played["alice"], reason="x", event_seq=999,
                                 request_id=uuid.uuid4(), at=timezone.now())
    request = uuid.uuid4()
    first = arbitration.dispute_open(hand=hand, user=played["alice"], reason="a revoke",
                                     request_id=request, at=timezone.now(), event_seq=3)
    again = arbitration.dispute_open(hand=hand, user=played["alice"], reason="a revoke",
                                     request_id=request, at=timezone.now())
    assert first.pk == again.pk and first.event_seq == 3
    assert arbitration.dispute_open(hand=hand, user=organiser, reason="seen from the door",
                                    request_id=uuid.uuid4(), at=timezone.now()).pk != first.pk
    late = soiree.closed_at + soiree.dispute_window + timedelta(seconds=1)
    with pytest.raises(SoireeState, match="The time to dispute"):
        arbitration.dispute_open(hand=hand, user=played["alice"], reason="x",
                                 request_id=uuid.uuid4(), at=late)


def test_a_player_of_the_hand_or_a_non_auditor_may_not_rule(played, organiser):
    dispute = _open(played)
    for who in (played["bruno"], organiser):
        with pytest.raises(NotAuditor):
            arbitration.rule(dispute=dispute, arbiter=who, kind="stands", reason="fine",
                             request_id=uuid.uuid4(), at=timezone.now())
    assert not Ruling.objects.exists()


def test_a_void_hand_gives_every_chip_back_and_the_standings_follow(played):
    soiree, hand = played["soiree"], played["hand"]
    moved = _moved(hand)
    before = {name: _standing(soiree, name) for name in moved}
    dispute = _open(played)
    request = uuid.uuid4()

    ruling = arbitration.rule(dispute=dispute, arbiter=played["arbiter"], kind="void",
                              reason="misdeal", request_id=request, at=timezone.now())
    again = arbitration.rule(dispute=dispute, arbiter=played["arbiter"], kind="void",
                             reason="misdeal", request_id=request, at=timezone.now())

    assert again.pk == ruling.pk and Ruling.objects.count() == 1
    assert ruling.entries and not ruling.shortfall
    by_ruling: dict[str, int] = {}
    for name, amount in Posting.objects.filter(
            entry__id__in=ruling.entries, account__owner__isnull=False
    ).values_list("account__owner__username", "amount"):
        by_ruling[name] = by_ruling.get(name, 0) + amount
    assert {k: v for k, v in by_ruling.items() if v} == {k: -v for k, v in moved.items()}
    for name, net in moved.items():
        assert _standing(soiree, name) == before[name] - net
    # The settlement keeps what it showed and gains the correcting transfers.
    settlement = soiree.settlement
    paid: dict[str, int] = {}
    for t in settlement["transfers"] + settlement["corrections"]:
        paid[t["from"]] = paid.get(t["from"], 0) - t["amount"]
        paid[t["to"]] = paid.get(t["to"], 0) + t["amount"]
    assert {k: v for k, v in paid.items() if v} == selectors.party_nets(soiree.standings)
    call_command("check_books")
    # The player's statement shows the ruling.
    wallet = services.stack(soiree, played["alice"])
    memos = [p.entry.memo for p in ledger_selectors.account_statement(account=wallet)]
    if played["alice"].username in moved:
        assert any(m.startswith(f"Ruling (void) on dispute {dispute.pk}") for m in memos)


def test_an_adjustment_moves_chips_between_players_and_an_appeal_undoes_it(played):
    soiree = played["soiree"]
    dispute = _open(played)
    alice = played["alice"].username
    alice_before = _standing(soiree, alice)
    with pytest.raises(SoireeError, match="must sum to zero, not -1"):
        arbitration.rule(dispute=dispute, arbiter=played["arbiter"], kind="adjusted",
                         reason="revoke", corrections={alice: -2, "joueur2": 1},
                         request_id=uuid.uuid4(), at=timezone.now())
    with pytest.raises(SoireeError, match="Not a player of this hand: zed"):
        arbitration.rule(dispute=dispute, arbiter=played["arbiter"], kind="adjusted",
                         reason="revoke", corrections={alice: -2, "zed": 2},
                         request_id=uuid.uuid4(), at=timezone.now())
    other = next(s.player.username for s in played["hand"].partie.seats.all()
                 if s.player.username != alice)

    arbitration.rule(dispute=dispute, arbiter=played["arbiter"], kind="adjusted",
                     reason="a revoke: two chips of penalty",
                     corrections={alice: -2, other: 2}, request_id=uuid.uuid4(),
                     at=timezone.now())
    assert _standing(soiree, alice) == alice_before - 2

    appeal = arbitration.rule(dispute=dispute, arbiter=played["arbiter"], kind="stands",
                              reason="on appeal: no revoke", request_id=uuid.uuid4(),
                              at=timezone.now())
    assert appeal.entries and _standing(soiree, alice) == alice_before
    assert list(dispute.rulings.values_list("kind", flat=True)) == ["adjusted", "stands"]
    call_command("check_books")


def test_an_adjustment_beyond_a_wallet_is_shown_then_refused_and_changes_nothing(played):
    soiree = played["soiree"]
    dispute = _open(played)
    wallet = services.stack(soiree, played["alice"])
    holds = wallet.balance
    alice = played["alice"].username
    other = next(s.player.username for s in played["hand"].partie.seats.all()
                 if s.player.username != alice)
    asked = {alice: -(holds + 10), other: holds + 10}
    entries = JournalEntry.objects.count()

    # Its effect before it is posted: who gives, who receives, and the shortfall, which
    # falls on the player it names only.
    effect = arbitration.ruling_effect(dispute=dispute, arbiter=played["arbiter"],
                                       kind="adjusted", corrections=asked)
    assert effect["shortfall"] == 10 and not effect["postable"]
    first, second = effect["lines"]
    assert (first["player"], first["holds"], first["moves"], first["short"]) == (
        alice, holds, -(holds + 10), 10)
    assert (second["player"], second["moves"], second["short"]) == (other, holds + 10, 0)
    with pytest.raises(SoireeError, match=f"{alice} holds {holds} chips at this soirée"):
        arbitration.rule(dispute=dispute, arbiter=played["arbiter"], kind="adjusted",
                         reason="heavy penalty", corrections=asked, request_id=uuid.uuid4(),
                         at=timezone.now())
    wallet.refresh_from_db()
    assert wallet.balance == holds and JournalEntry.objects.count() == entries
    assert not dispute.rulings.exists()

    # What he holds is taken whole, and nothing from anyone the ruling does not name.
    fits = {alice: -holds, other: holds}
    assert arbitration.ruling_effect(dispute=dispute, arbiter=played["arbiter"],
                                     kind="adjusted", corrections=fits)["postable"]
    ruling = arbitration.rule(dispute=dispute, arbiter=played["arbiter"], kind="adjusted",
                              reason="heavy penalty", corrections=fits,
                              request_id=uuid.uuid4(), at=timezone.now())
    wallet.refresh_from_db()
    assert wallet.balance == 0 and not ruling.shortfall
    call_command("check_books")


@pytest.mark.postgres
def test_rulings_and_disputes_are_append_only(played):
    from django.db import IntegrityError, InternalError, transaction

    dispute = _open(played)
    ruling = arbitration.rule(dispute=dispute, arbiter=played["arbiter"], kind="stands",
                              reason="fine", request_id=uuid.uuid4(), at=timezone.now())
    for row in (dispute, ruling):
        with pytest.raises((IntegrityError, InternalError)), transaction.atomic():
            type(row).objects.filter(pk=row.pk).update(reason="rewritten")
        with pytest.raises((IntegrityError, InternalError)), transaction.atomic():
            type(row).objects.filter(pk=row.pk).delete()


# -- Through the API ----------------------------------------------------------------------------


def _post(client: Any, url: str, **body: Any) -> Any:
    return client.post(url, body, content_type="application/json")


def test_a_dispute_and_its_ruling_through_the_api(client, played):
    hand = played["hand"]
    client.force_login(played["alice"])
    opened = _post(client, f"/api/hands/{hand.pk}/disputes", reason="the Comet was mine",
                   event=2, request_id=str(uuid.uuid4()))
    assert opened.status_code == 201, opened.content
    dispute = opened.json()
    assert (dispute["status"], dispute["event"], dispute["opened_by"]) == (
        "open", 2, played["alice"].username)
    # A player of the hand may not rule on it.
    ruled = _post(client, f"/api/disputes/{dispute['id']}/rulings", kind="stands",
                  reason="mine", request_id=str(uuid.uuid4()))
    assert ruled.status_code == 403

    client.force_login(played["arbiter"])
    queue = client.get("/api/disputes/").json()["disputes"]
    assert [d["id"] for d in queue] == [dispute["id"]]
    wrong = _post(client, f"/api/disputes/{dispute['id']}/rulings", kind="adjusted",
                  reason="revoke", corrections={played["alice"].username: -3},
                  request_id=str(uuid.uuid4()))
    assert wrong.status_code == 400 and "sum to zero" in wrong.json()["detail"]
    request = str(uuid.uuid4())
    first = _post(client, f"/api/disputes/{dispute['id']}/rulings", kind="stands",
                  reason="the Comet was played in time", request_id=request)
    second = _post(client, f"/api/disputes/{dispute['id']}/rulings", kind="stands",
                   reason="the Comet was played in time", request_id=request)
    assert first.status_code == second.status_code == 201
    assert len(second.json()["rulings"]) == 1 and second.json()["status"] == "ruled"
    assert client.get("/api/disputes/").json()["disputes"] == []
    assert [d["id"] for d in client.get("/api/disputes/?status=ruled").json()[
        "disputes"]] == [dispute["id"]]
    assert client.get("/api/disputes/?status=maybe").status_code == 400

    # The player reads the ruling on his lobby and the hand's audit page.
    client.force_login(played["alice"])
    lobby = client.get("/").content.decode()
    assert "Contestations sur vos donnes" in lobby and "le résultat est maintenu" in lobby
    audit = client.get(f"/hands/{hand.pk}/audit").content.decode()
    assert "Décision : le résultat est maintenu" in audit
    assert "the Comet was played in time" in audit


def test_a_dispute_on_a_hand_in_play_or_by_a_stranger_is_refused(client, clock, club, members,
                                                                 outsider):
    soiree = _soiree(club, deals_per_partie=3, lasts=timedelta(minutes=5))
    alice, bruno = members(2, prefix="joueur")
    for user in (alice, bruno):
        services.checkin(soiree=soiree, user=user, at=timezone.now())
    clock.move_to(OPENS)
    from tournaments.tasks import soiree_clock

    soiree_clock()
    hand = Hand.objects.get(partie__soiree_table__soiree=soiree)
    client.force_login(alice)
    early = _post(client, f"/api/hands/{hand.pk}/disputes", reason="too soon",
                  request_id=str(uuid.uuid4()))
    assert early.status_code == 409 and "still being played" in early.json()["detail"]
    client.force_login(outsider)
    stranger = _post(client, f"/api/hands/{hand.pk}/disputes", reason="me too",
                     request_id=str(uuid.uuid4()))
    assert stranger.status_code == 403
    assert not hand.disputes.exists()


def test_the_replay_gives_the_table_after_each_event_with_every_hand(client, played):
    from games.services import store

    hand = played["hand"]
    client.force_login(played["arbiter"])

    steps = client.get(f"/api/hands/{hand.pk}/replay").json()["steps"]

    assert [s["event"]["seq"] for s in steps] == list(range(1, hand.last_seq + 1))
    n = hand.partie.seats.count()
    deck = store.hand_deck(hand)
    # Version 2: the hand starts shuffling, nobody holding a card, until its deal.
    assert [s["event"]["type"] for s in steps[:2]] == ["hand_started", "deal"]
    assert steps[0]["view"]["all_hands"] == {str(s): [] for s in range(n)}
    first = steps[1]["view"]["all_hands"]
    assert sorted(c for cards in first.values() for c in cards) == sorted(deck[:sum(
        len(cards) for cards in first.values())])
    assert len(first) == n
    # Comet: every card is in a hand or on the table, at every step from the deal.
    for step in steps[1:]:
        held = sum(len(cards) for cards in step["view"]["all_hands"].values())
        assert held + len(step["view"]["played"]) == len(deck)
    assert steps[-1]["view"]["result"] is not None
    assert any(s["move"] for s in steps) and not steps[0]["move"]
    moves = [s for s in steps if s["move"]]
    assert all(s["seat"] == s["event"]["seat"] for s in moves)


def test_a_what_if_plays_other_moves_on_the_same_deal_and_a_ruling_cites_it(client, played):
    from games.models import HandEvent
    from games.whatif import branch
    from tournaments.models import WhatIf

    hand = played["hand"]
    events_before = list(HandEvent.objects.filter(hand=hand).values_list("seq", "hash"))
    real = {e.seq: e.payload for e in HandEvent.objects.filter(hand=hand)}
    # A step where the seat to act had a choice, and another move than the one played.
    for seq in range(1, hand.last_seq):
        there = branch(hand=hand, from_seq=seq, moves=[])
        choices = [(int(s), m) for s, ms in there["legal_moves"].items() for m in ms]
        played_next = real[seq + 1]
        other = [(s, m) for s, m in choices if m.get("card") != played_next.get("card")
                 or m["type"] != HandEvent.objects.get(hand=hand, seq=seq + 1).type]
        if len(choices) > 1 and other:
            break
    else:
        pytest.fail("no step with a choice in this hand")
    seat, move = other[0]
    dispute = _open(played)
    client.force_login(played["arbiter"])

    answer = client.post(f"/api/disputes/{dispute.pk}/whatifs", {
        "from_seq": seq, "moves": [{"seat": seat, "move": move}], "play_out": True,
        "keep": True, "note": "had he played otherwise"}, content_type="application/json")

    assert answer.status_code == 201, answer.content
    found = answer.json()
    assert found["result"] is not None and set(found["result"]["net"]) == {
        str(s.number) for s in hand.partie.seats.all()}
    assert found["events"][0]["seat"] == seat
    assert sum(found["result"]["net"].values()) + found["view"]["pot"] >= 0
    draft = WhatIf.objects.get(pk=found["id"])
    assert (draft.from_seq, draft.played_out, draft.note) == (seq, True, "had he played otherwise")
    # The real hand is untouched.
    assert list(HandEvent.objects.filter(hand=hand).values_list("seq", "hash")) == events_before

    illegal = client.post(f"/api/disputes/{dispute.pk}/whatifs", {
        "from_seq": seq, "moves": [{"seat": (seat + 1) % 3, "move": {"type": "pass"}}]},
        content_type="application/json")
    assert illegal.status_code == 400 and "is refused" in illegal.json()["detail"]
    french = client.post(f"/api/disputes/{dispute.pk}/whatifs", {
        "from_seq": seq, "moves": [{"seat": seat, "move": {"card": "TH"}}]},
        content_type="application/json", HTTP_ACCEPT_LANGUAGE="fr")
    assert french.status_code == 400
    assert french.json()["detail"].startswith("le coup 1 n’est pas de la forme"), french.json()
    assert WhatIf.objects.count() == 1

    unknown = _post(client, f"/api/disputes/{dispute.pk}/rulings", kind="stands",
                    reason="as played", cites=[draft.pk + 100], request_id=str(uuid.uuid4()))
    assert unknown.status_code == 400 and "Not a what-if of this dispute" in unknown.json()[
        "detail"]
    ruled = _post(client, f"/api/disputes/{dispute.pk}/rulings", kind="stands",
                  reason="the branch changes nothing", cites=[draft.pk],
                  request_id=str(uuid.uuid4()))
    assert ruled.status_code == 201
    assert ruled.json()["ruling"]["cites"] == [draft.pk]
    assert ruled.json()["whatifs"][0]["id"] == draft.pk
    client.force_login(played["alice"])
    refused = client.post(f"/api/disputes/{dispute.pk}/whatifs", {"from_seq": 1},
                          content_type="application/json")
    assert refused.status_code == 403


def test_the_admin_shows_disputes_and_rulings_read_only_with_the_replay(client, played,
                                                                        django_user_model):
    admin_client = client  # signed in now: the played soirée moved the clock on
    admin_client.force_login(django_user_model.objects.create_superuser("root", password="x"))
    dispute = _open(played)
    arbitration.rule(dispute=dispute, arbiter=played["arbiter"], kind="stands", reason="fine",
                     request_id=uuid.uuid4(), at=timezone.now())

    answer = admin_client.get("/admin/tournaments/dispute/")
    assert answer.status_code == 200, (answer.status_code, answer.get("Location"))
    listed = answer.content.decode()
    page = admin_client.get(f"/admin/tournaments/dispute/{dispute.pk}/change/").content.decode()
    hands = admin_client.get("/admin/games/hand/", {"soiree": played["soiree"].pk})

    assert f"/hands/{dispute.hand_id}/replay" in listed
    assert "décidé : le résultat est maintenu" in listed  # the admin is French
    assert "fine" in page and 'name="reason"' not in page  # shown, not editable
    assert admin_client.get("/admin/tournaments/dispute/add/").status_code == 403
    assert hands.status_code == 200
    assert hands.context["cl"].result_count == Hand.objects.filter(
        partie__soiree_table__soiree=played["soiree"]).count()
