"""A soirée's standings and settlement, and a season's standings, computed from the hands'
events, the ledger and the rulings: the reference that the soirée's read models
(tournaments/projections.py) are rebuilt from and checked against, and the record stored with
the soirée at its close."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta
from typing import Any

from django.db.models import OuterRef, QuerySet, Subquery

from games import selectors as game_selectors
from games.models import Hand, Partie
from ledger import selectors as ledger_selectors
from ledger.netting import minimal_transfers

from ..models import Dispute, Ruling, Soiree


def _disputes(soiree: Soiree | None, partie: Any) -> QuerySet[Dispute]:
    disputes = Dispute.objects.all()
    if soiree is not None:
        disputes = disputes.filter(soiree=soiree)
    if partie is not None:
        disputes = disputes.filter(hand__partie=partie)
    return disputes


def rulings_net(*, soiree: Soiree | None = None, partie: Any = None) -> dict[str, int]:
    """What the rulings on the soirée's (or the partie's) hands moved, per player (the
    standings and the ratings add it)."""
    ids = _disputes(soiree, partie).values_list("pk", flat=True)
    return ledger_selectors.source_totals(prefixes=[f"dispute:{pk}/" for pk in ids],
                                          by="owner", owned_only=True)


def _standing_voids(disputes: QuerySet[Dispute]) -> QuerySet[Dispute]:
    """Those of ``disputes`` whose latest ruling is "void"."""
    standing = (Ruling.objects.filter(dispute=OuterRef("pk")).order_by("-at", "-pk")
                .values("kind")[:1])
    return disputes.annotate(standing=Subquery(standing)).filter(standing=Ruling.Kind.VOID)


def voided_hands(*, soiree: Soiree | None = None, partie: Any = None) -> set[Any]:
    """The ids of the soirée's (or the partie's) hands that a standing ruling voided: the
    latest ruling of one of their disputes is "void". They count neither as dealt nor as won."""
    return set(_standing_voids(_disputes(soiree, partie)).values_list("hand_id", flat=True))


def hand_voided(*, hand: Any) -> bool:
    """Whether a standing ruling voided ``hand`` (``voided_hands``, for one hand)."""
    return _standing_voids(Dispute.objects.filter(hand=hand)).exists()


#: The club as a party of a settlement: the bots play the club's chips, so their nets are
#: the club's to take or to pay. No username can be it (Django's allow no "#").
CLUB = "#club"

def party_nets(standings: dict[str, Any]) -> dict[str, int]:
    """Each party's net: every person's own, and the club's, the sum of its bots' nets."""
    nets: dict[str, int] = defaultdict(int)
    for row in standings.get("players", []):
        nets[row["player"]] += row["net"]
    for row in standings.get("bots", []):
        nets[CLUB] += row["net"]
    return {party: net for party, net in nets.items() if net}

def settlement_of(standings: dict[str, Any]) -> dict[str, Any]:
    """Who pays whom, in the fewest transfers, to settle the soirée's own nets: those of its
    hands, its tables' pots and its rulings, so that a soirée overlapping another in time never
    enters it. Every transfer is between two of its people, or one of them and the club
    (``CLUB``), and they sum to each party's net. Rulings after the close add ``corrections``
    (``settlement_corrected``); the transfers once shown stay as they were."""
    nets = party_nets(standings)
    return {
        "nets": [{"account": party, "player": party, "net": net} for party, net in nets.items()],
        "transfers": [{"from": payer, "to": payee, "amount": amount}
                      for payer, payee, amount in minimal_transfers(nets)],
        "corrections": [],
    }

def settlement_corrected(settlement: dict[str, Any], standings: dict[str, Any],
                         at: datetime) -> dict[str, Any]:
    """The settlement after a ruling: the transfers and corrections already shown, plus the
    fewest transfers that bring every party to its net in ``standings``."""
    settled: dict[str, int] = defaultdict(int)
    for t in [*settlement.get("transfers", []), *settlement.get("corrections", [])]:
        settled[t["from"]] -= t["amount"]
        settled[t["to"]] += t["amount"]
    nets = party_nets(standings)
    missing = {p: nets.get(p, 0) - settled.get(p, 0) for p in {*nets, *settled}}
    return {
        **settlement,
        "nets": [{"account": party, "player": party, "net": net} for party, net in nets.items()],
        "corrections": [
            *settlement.get("corrections", []),
            *({"from": payer, "to": payee, "amount": amount, "at": at.isoformat()}
              for payer, payee, amount in minimal_transfers(
                  {p: n for p, n in missing.items() if n}))],
    }

def standings_compute(*, soiree: Soiree, at: datetime) -> dict[str, Any]:
    """Per player: net chips (from the hands' results, pot shares and rulings), hands dealt
    and won, Comets played, tricons won; people in ``players``, ordered by net then hands won,
    and the club's bots apart in ``bots``. A hand a ruling voided counts neither as dealt nor
    as won (its chips went back by the ruling)."""
    rows: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"net": 0, "hands_won": 0, "comets": 0, "tricons": 0, "hands": 0})
    bots: set[str] = set()
    names: dict[str, str] = {}
    voided = voided_hands(soiree=soiree)
    parties = Partie.objects.filter(soiree_table__soiree=soiree).prefetch_related(
        "seats__player")
    # A hand counts once it is over: the Comets of a hand in play wait for its end.
    playing = set(Hand.objects.filter(partie__soiree_table__soiree=soiree).exclude(
        status=Hand.Status.OVER).values_list("pk", flat=True))
    for partie in parties:
        seats = {s.number: s for s in partie.seats.all()}
        for s in seats.values():
            names[s.player.get_username()] = (s.player.get_full_name()  # type: ignore[attr-defined]
                                              or s.player.get_username())
            if s.bot:
                bots.add(s.player.get_username())
        by_seat = {n: s.player.get_username() for n, s in seats.items()}
        # Every hand's chips as the ledger moved them (a void's ruling sends them back below).
        for kind, payload in game_selectors.partie_results(partie=partie):
            if kind == "hand_over":
                for seat, net in payload["result"]["net"].items():
                    rows[by_seat[int(seat)]]["net"] += net
        for kind, payload in game_selectors.partie_results(partie=partie,
                                                           without=voided | playing):
            if kind == "comet":
                rows[by_seat[payload["seat"]]]["comets"] += 1
                continue
            result = payload["result"]
            for seat in result["net"]:
                rows[by_seat[int(seat)]]["hands"] += 1
            if result.get("winner") is not None:
                winner = rows[by_seat[result["winner"]]]
                winner["hands_won"] += 1
                if result.get("combination") == "tricon":
                    winner["tricons"] += 1
        shared = ledger_selectors.settlement(
            club_key=soiree.club.slug, since=soiree.opened_at or soiree.starts_at,
            until=at + timedelta(seconds=1), source_prefix=f"partie:{partie.pk}/pot-shared")
        for n in shared.nets:
            if n.account.owner_id:
                rows[n.account.owner.get_username()]["net"] += n.net
    # The rulings: the chips a void sent back, an adjustment's.
    for name, net in rulings_net(soiree=soiree).items():
        rows[name]["net"] += net
    table = [{"player": name, "name": names.get(name, name), **row}
             for name, row in rows.items()]
    table.sort(key=lambda r: (-r["net"], -r["hands_won"], r["player"]))
    return {"players": [r for r in table if r["player"] not in bots],
            "bots": [r for r in table if r["player"] in bots],
            "computed_at": at.isoformat()}

def chips_paid(soiree: Soiree) -> dict[str, tuple[int, int]]:
    """Each player's buy-in and rebuys at the soirée, summed from the ledger's wallet lines
    of its buy-in and rebuy entries (a check-in undone: its reversing entry's too); those
    whose totals are both 0 are left out."""
    buy_in, rebuy = f"soiree:{soiree.pk}/buy-in", f"soiree:{soiree.pk}/rebuy"
    totals = ledger_selectors.source_totals(sources=[buy_in, rebuy], club_key=soiree.club.slug,
                                            by=("owner", "source"), owned_only=True)
    paid: dict[str, tuple[int, int]] = {}
    for (name, source), chips in totals.items():
        first, more = paid.get(name, (0, 0))
        paid[name] = (first + chips, more) if source == buy_in else (first, more + chips)
    return paid

def season_standings(*, season: Any) -> list[dict[str, Any]]:
    totals: dict[str, dict[str, int]] = defaultdict(
        lambda: {"net": 0, "hands_won": 0, "comets": 0, "tricons": 0, "soirees": 0})
    for soiree in season.soirees.filter(status=Soiree.Status.CLOSED):
        for row in (soiree.standings or {}).get("players", []):
            t = totals[row["player"]]
            for key in ("net", "hands_won", "comets", "tricons"):
                t[key] += row[key]
            t["soirees"] += 1
    out = [{"player": name, **row} for name, row in totals.items()]
    out.sort(key=lambda r: (-r["net"], -r["hands_won"], r["player"]))
    return out
