"""Where the evening's features meet: each soirée's chips are its own (a stack per soirée and
player), and a ruling after the close reaches the standings, the settlement (corrections added,
never a rewrite), the CSVs, the PDF, the results page and the chart; the house is a party."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone, translation

from games.models import Hand
from ledger.models import Account, JournalEntry
from tests.pdf import pdf_pages_text
from tournaments import arbitration, selectors, services, sheets
from tournaments.errors import SoireeError, SoireeState
from tournaments.models import Soiree

from .test_rulings import _moved
from .test_rulings import played as played  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db


def _wallets(user: Any) -> dict[str, int]:
    return dict(Account.objects.filter(owner=user, kind="wallet").values_list("ref", "balance"))


def test_a_rebuy_or_a_cash_out_at_one_soiree_moves_only_its_own_stack(club, members):
    now = timezone.now()
    first = services.soiree_create(club=club, name="Ma commère", game="commere", buy_in=50,
                                   starts_at=now + timedelta(hours=1),
                                   ends_at=now + timedelta(hours=3))
    later = services.soiree_create(club=club, name="Comet", game="comet", buy_in=30,
                                   starts_at=now + timedelta(hours=4),
                                   ends_at=now + timedelta(hours=6))
    (bernard,) = members(1, prefix="bernard")
    services.checkin(soiree=first, user=bernard, at=now)
    services.rebuy(soiree=first, user=bernard, request_id=uuid.uuid4())
    services.registration_add(soiree=later, user=bernard)
    assert _wallets(bernard) == {first.stack_ref: 100}

    # Not checked in at the later soirée: its door refuses a cash-out, and nothing moves.
    with pytest.raises(SoireeError):
        services.cash_out(soiree=later, user=bernard, request_id=uuid.uuid4())
    assert _wallets(bernard) == {first.stack_ref: 100}

    # Checked in at both (their times do not overlap): each soirée's chips are its own.
    services.checkin(soiree=later, user=bernard, at=now)
    assert services.cash_out(soiree=later, user=bernard, request_id=uuid.uuid4()) == 0
    assert _wallets(bernard) == {first.stack_ref: 100, later.stack_ref: 0}
    assert services.rebuy(soiree=later, user=bernard, request_id=uuid.uuid4()) == 30
    assert _wallets(bernard) == {first.stack_ref: 100, later.stack_ref: 30}

    # While the first is open, a check-in at another soirée is refused, naming it.
    services.soiree_open(soiree=first, at=now)
    third = services.soiree_create(club=club, name="Dimanche", game="comet", buy_in=30,
                                   starts_at=now + timedelta(days=1),
                                   ends_at=now + timedelta(days=1, hours=2))
    held = _wallets(bernard)
    with pytest.raises(SoireeState, match="Ma commère"):
        services.checkin(soiree=third, user=bernard, at=now)
    assert _wallets(bernard) == held and held[later.stack_ref] == 30


def test_a_player_cashed_out_before_the_opening_is_not_seated(club, members):
    now = timezone.now()
    soiree = services.soiree_create(club=club, name="Vendredi", game="commere", buy_in=20,
                                    starts_at=now, ends_at=now + timedelta(hours=2))
    ana, bob = members(2)
    for user in (ana, bob):
        services.checkin(soiree=soiree, user=user, at=now)
    services.cash_out(soiree=soiree, user=bob, request_id=uuid.uuid4())

    (table,) = services.soiree_open(soiree=soiree, at=now)
    people = set(table.partie.seats.filter(bot="").values_list("player__username", flat=True))
    assert people == {ana.username}
    # The table plays from the soirée's stacks, not from a wallet of the club's.
    assert table.partie.wallet_ref == soiree.stack_ref


def _paid(settlement: dict[str, Any]) -> dict[str, int]:
    paid: dict[str, int] = {}
    for t in settlement["transfers"] + settlement["corrections"]:
        paid[t["from"]] = paid.get(t["from"], 0) - t["amount"]
        paid[t["to"]] = paid.get(t["to"], 0) + t["amount"]
    return {k: v for k, v in paid.items() if v}


def test_a_void_after_the_close_reaches_every_sheet_and_keeps_what_was_shown(played, client):  # noqa: F811
    soiree, hand = played["soiree"], played["hand"]
    shown = list(soiree.settlement["transfers"])
    people = {r["player"] for r in soiree.standings["players"]}
    bots = {r["player"] for r in soiree.standings["bots"]}
    # The house is a party: every transfer is between two people, or one and the club.
    assert people and bots and not people & bots
    assert all({t["from"], t["to"]} <= people | {selectors.CLUB} for t in shown)
    dealt = {r["player"]: r["hands"] for r in soiree.standings["players"]
             + soiree.standings["bots"]}
    assert _moved(hand)

    dispute = arbitration.dispute_open(hand=hand, user=played["alice"], reason="a misdeal",
                                       request_id=uuid.uuid4(), at=timezone.now())
    arbitration.rule(dispute=dispute, arbiter=played["arbiter"], kind="void",
                     reason="misdeal", request_id=uuid.uuid4(), at=timezone.now())
    soiree.refresh_from_db()

    # The voided hand is neither dealt nor won; the settlement keeps its transfers and gains
    # the corrections that bring every party to its new net.
    seated = set(hand.partie.seats.values_list("player__username", flat=True))
    after = {r["player"]: r["hands"] for r in soiree.standings["players"]
             + soiree.standings["bots"]}
    assert {p: dealt[p] - after[p] for p in seated} == dict.fromkeys(seated, 1)
    assert soiree.settlement["transfers"] == shown
    assert soiree.settlement["corrections"]
    assert _paid(soiree.settlement) == selectors.party_nets(soiree.standings)

    correction = soiree.settlement["corrections"][0]
    with translation.override("fr"):
        csv = sheets.settlement_csv(soiree)
    client.force_login(played["alice"])
    with translation.override("fr"):
        page = client.get(f"/soirees/{soiree.pk}/results",
                          HTTP_ACCEPT_LANGUAGE="fr").content.decode()
        pdf = client.get(f"/soirees/{soiree.pk}/results.pdf",
                         HTTP_ACCEPT_LANGUAGE="fr").content
    assert "correction après une décision" in csv
    assert len(csv.strip().splitlines()) == 1 + len(shown) + len(soiree.settlement[
        "corrections"])
    assert "correction après une décision" in page
    text = pdf_pages_text(pdf)
    assert "correction après une décision" in text
    if selectors.CLUB in {correction["from"], correction["to"]}:
        assert "le club" in text
    # The chart's last point is each line's standing net, the ruling included.
    lines = sheets.chips_over_the_evening(soiree)
    nets = {r["player"]: r["net"] for r in soiree.standings["players"]
            + soiree.standings["bots"]}
    assert {name: points[-1] for name, points in lines.items() if name in nets} == nets


def test_the_manage_page_shows_each_players_chips_after_a_reload(client, club, members,
                                                                 organiser):
    now = timezone.now()
    soiree = services.soiree_create(club=club, name="Samedi", game="commere", buy_in=40,
                                    starts_at=now + timedelta(hours=1),
                                    ends_at=now + timedelta(hours=3))
    ana, bob = members(2)
    services.checkin(soiree=soiree, user=ana, at=now)
    services.rebuy(soiree=soiree, user=ana, request_id=uuid.uuid4())
    services.registration_add(soiree=soiree, user=bob)
    client.force_login(organiser)
    page = client.get(f"/soirees/{soiree.pk}/manage", HTTP_ACCEPT_LANGUAGE="fr").content.decode()
    row = page[page.index(f'data-chips-of="{ana.username}"'):]
    assert row[row.index(">") + 1:row.index("</span>")] == "80 jetons"
    bobs = page[page.index(f'data-chips-of="{bob.username}"'):] if \
        f'data-chips-of="{bob.username}"' in page else ""
    assert "jetons" not in bobs[:bobs.find("</span>")]
    assert Soiree.objects.get(pk=soiree.pk).status == Soiree.Status.SCHEDULED
    assert not Hand.objects.exists()


def test_a_rulings_effect_through_the_api_writes_nothing(played, client):  # noqa: F811
    hand = played["hand"]
    dispute = arbitration.dispute_open(hand=hand, user=played["alice"], reason="a revoke",
                                       request_id=uuid.uuid4(), at=timezone.now())
    url = f"/api/disputes/{dispute.pk}/rulings/effect"
    entries = JournalEntry.objects.count()

    client.force_login(played["alice"])  # she played the hand: she may not rule on it
    assert client.post(url, {"kind": "void"}, content_type="application/json").status_code \
        == 403
    client.force_login(played["arbiter"])
    void = client.post(url, {"kind": "void"}, content_type="application/json")
    assert void.status_code == 200
    moved = _moved(hand)
    assert {x["player"]: x["moves"] for x in void.json()["lines"]
            if x["player"] in moved} == {k: -v for k, v in moved.items()}
    wrong = client.post(url, {"kind": "adjusted", "corrections": {played["alice"].username: 3}},
                        content_type="application/json", HTTP_ACCEPT_LANGUAGE="fr")
    assert wrong.status_code == 400 and "totaliser zéro" in wrong.json()["detail"]
    assert JournalEntry.objects.count() == entries and not dispute.rulings.exists()


def test_a_soiree_that_cannot_open_says_why_for_whom_and_the_fix(client, club, members,
                                                                 organiser):
    now = timezone.now()
    soiree = services.soiree_create(club=club, name="Comet sans robots", game="comet",
                                    buy_in=10, bots_allowed=False, starts_at=now,
                                    ends_at=now + timedelta(hours=2))
    ana, bob = members(2)
    for user in (ana, bob):
        services.checkin(soiree=soiree, user=user, at=now)
    services.cash_out(soiree=soiree, user=bob, request_id=uuid.uuid4())
    client.force_login(organiser)

    page = client.get(f"/soirees/{soiree.pk}/manage", HTTP_ACCEPT_LANGUAGE="fr").content.decode()

    box = page[page.index('id="opening-problems"'):]
    box = box[:box.index("</div>")]
    assert f"{bob.username} a 0 jetons, moins que la mise (1)" in box  # for whom
    assert "1 joueur(s) pointé(s) : le jeu en demande au moins 2" in box  # why
    assert f'href="/soirees/{soiree.pk}/edit"' in box  # the fix
    with pytest.raises(SoireeError):
        services.soiree_open(soiree=soiree, at=now)
    assert Soiree.objects.get(pk=soiree.pk).status == Soiree.Status.SCHEDULED
