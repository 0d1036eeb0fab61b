"""The soirée's read models: what many people read at once (its standings, the room screen's
leaders, the results sheet's figures and its chart) kept in rows, ``SoireeProjection`` (one a
soirée: its version) and ``SoireeStanding`` (one a soirée and player), so that a page reads
them and never recomputes the evening.

The commands that change those figures update the rows in their own transaction, each adding
what it did to the rows of the players it concerns:

- a hand's end (``games.signals.hand_ended``, sent in the hand's transaction): its result
  for the players of its table;
- a partie's close: the pot shared among its seats (Ma commère, RULES.md §1);
- a ruling (``arbitration.rule``): the chips it moved, and a hand voided, or no longer
  voided, counted out or in again;
- the door (check-in, its undo, a rebuy): the player's buy-in and rebuys.

Each of them first moves the soirée's ``SoireeProjection`` row: that row's lock makes the
writers of one soirée (several tables, a ruling, the door) add to its rows one after the
other, and its ``version`` tells a page that something changed.

``projection_compute`` computes the same rows from the events and the ledger
(``selectors.standings_compute`` and friends, the reference), ``projection_rebuild`` stores
them and ``projection_differences`` compares them with the stored ones:
``manage.py rebuild_projections [--check]``.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from games import selectors as game_selectors
from games.models import Hand, Partie
from ledger import selectors as ledger_selectors

from .models import Ruling, Soiree, SoireeProjection, SoireeStanding, SoireeTable
from .selectors.standings import chips_paid, hand_voided, standings_compute

#: The chart of the evening has at most this many points a line, whatever the number of
#: hands: the planned evening is cut into as many stretches, and each line keeps its net at
#: the end of every stretch in which it moved.
CHART_STRETCHES = 240

#: The figures of a player's row that the hands, the rulings and the door add to.
COUNTS = ("net", "hands", "hands_won", "comets", "tricons")
FIELDS = ("bot", "listed", *COUNTS, "buy_in", "rebuys", "chart")


def chart_stretch(soiree: Soiree, at: datetime) -> int:
    """The stretch of the planned evening ``at`` falls in, 0 to ``CHART_STRETCHES``; what
    comes after the planned end (a hand finishing late, a ruling after the close) falls in
    the last. A soirée's times are fixed once it opens, so a hand keeps its stretch."""
    width = (soiree.ends_at - soiree.starts_at) / CHART_STRETCHES
    if width <= timedelta(0):
        return CHART_STRETCHES
    return max(0, min(CHART_STRETCHES, (at - soiree.starts_at) // width))


def chart_add(points: list[list[int]], stretch: int, delta: int) -> list[list[int]]:
    """A line's ``[[stretch, net], …]`` with ``delta`` chips won at ``stretch``: the point of
    that stretch (made from the net before it if missing) and every later one move. Deltas
    give the same line in whatever order they come, so the hands of several tables leave the
    line ``projection_compute`` draws whatever order their transactions commit in."""
    out = [list(p) for p in points]
    i = bisect_left([p[0] for p in out], stretch)
    if i == len(out) or out[i][0] != stretch:
        out.insert(i, [stretch, out[i - 1][1] if i else 0])
    for point in out[i:]:
        point[1] += delta
    return out


# -- the writers ---------------------------------------------------------------------------------


def _moved(soiree: Soiree, *, at: datetime | None = None, hands: int = 0) -> None:
    """Move the soirée's projection row (made if missing): its version, and ``hands`` more
    hands ended. The UPDATE takes the row's lock, held until the command commits, so that the
    writers of one soirée add to its rows one after the other."""
    changes: dict[str, Any] = {"version": F("version") + 1, "hands": F("hands") + hands}
    if at is not None:
        changes["updated_at"] = at
    if not SoireeProjection.objects.filter(soiree=soiree).update(**changes):
        SoireeProjection.objects.get_or_create(soiree=soiree)
        SoireeProjection.objects.filter(soiree=soiree).update(**changes)


def _rows(soiree: Soiree, players: dict[int, bool]) -> dict[int, SoireeStanding]:
    """The rows of ``players`` (user id: whether a bot plays as him), made if missing. The
    caller holds the projection row's lock, so no other writer makes or changes them."""
    rows = {r.player_id: r for r in SoireeStanding.objects.filter(
        soiree=soiree, player_id__in=list(players))}
    missing = [SoireeStanding(soiree=soiree, player_id=pk, bot=bot)
               for pk, bot in players.items() if pk not in rows]
    if missing:
        SoireeStanding.objects.bulk_create(missing)
        rows.update({r.player_id: r for r in missing})
    for pk, bot in players.items():
        rows[pk].bot = rows[pk].bot or bot
    return rows


def _seats(partie: Partie) -> dict[int, tuple[int, bool]]:
    """Each seat of the partie: (its player's id, whether a bot plays it)."""
    return {int(number): (player_id, bool(bot)) for number, player_id, bot in
            partie.seats.values_list("number", "player_id", "bot")}


def _outcome(hand: Hand) -> tuple[dict[str, Any], list[int]]:
    """The hand's result and the seats that played a Comet (``games.selectors``)."""
    return game_selectors.hand_outcome(hand_id=hand.pk)


def _counted(result: dict[str, Any], comets: list[int],
             seats: dict[int, tuple[int, bool]]) -> dict[int, dict[str, int]]:
    """What a hand counts for each of its players when it stands: dealt, won, a tricon won,
    the Comets he played (``selectors.standings_compute``)."""
    counts: dict[int, dict[str, int]] = defaultdict(lambda: dict.fromkeys(COUNTS[1:], 0))
    for seat in result.get("net", {}):
        counts[seats[int(seat)][0]]["hands"] += 1
    winner = result.get("winner")
    if winner is not None:
        counts[seats[int(winner)][0]]["hands_won"] += 1
        if result.get("combination") == "tricon":
            counts[seats[int(winner)][0]]["tricons"] += 1
    for seat in comets:
        counts[seats[seat][0]]["comets"] += 1
    return counts


def _save(rows: Iterable[SoireeStanding]) -> None:
    SoireeStanding.objects.bulk_update(list(rows), ["bot", "listed", *COUNTS, "chart"])


def hand_add(*, soiree: Soiree, partie: Partie, hand: Hand) -> None:
    """Add a hand that has just ended to its soirée's rows: each of its players' net, hands
    dealt and won, tricons and Comets, and his line of the chart."""
    _moved(soiree, at=hand.ended_at, hands=1)
    seats = _seats(partie)
    result, comets = _outcome(hand)
    counts = _counted(result, comets, seats)
    nets = {seats[int(seat)][0]: int(net) for seat, net in result.get("net", {}).items()}
    rows = _rows(soiree, {pk: bot for pk, bot in seats.values() if pk in {*nets, *counts}})
    stretch = chart_stretch(soiree, hand.ended_at or timezone.now())
    for pk, net in nets.items():
        rows[pk].net += net
        rows[pk].chart = chart_add(rows[pk].chart, stretch, net)
    for pk, count in counts.items():
        for key, n in count.items():
            setattr(rows[pk], key, getattr(rows[pk], key) + n)
    for row in rows.values():
        row.listed = True
    _save(rows.values())


def on_hand_ended(*, partie: Any, hand: Any, **_: Any) -> None:
    """``games.signals.hand_ended``, in the hand's transaction: a soirée's hand is added to
    its read models, so that they commit, or roll back, with the hand's last event. A casual
    table has no soirée: the one query finds none."""
    place = SoireeTable.objects.select_related("soiree").filter(partie_id=partie.pk).first()
    if place is not None:
        hand_add(soiree=place.soiree, partie=partie, hand=hand)


def pot_shared(*, soiree: Soiree, partie: Partie) -> None:
    """Add the pot a closing partie shared among its seats (RULES.md §1) to their nets."""
    shares = ledger_selectors.source_totals(keys=[_pot_key(partie)], by="owner_id",
                                            owned_only=True)
    if not shares:
        return
    _moved(soiree, at=partie.ended_at)
    bots = {pk: bot for pk, bot in _seats(partie).values()}
    rows = _rows(soiree, {pk: bots.get(pk, False) for pk in shares})
    stretch = chart_stretch(soiree, partie.ended_at or timezone.now())
    for pk, amount in shares.items():
        rows[pk].net += amount
        rows[pk].listed = True
        rows[pk].chart = chart_add(rows[pk].chart, stretch, amount)
    _save(rows.values())


def _pot_key(partie: Partie) -> str:
    """The idempotency key of the entry that shares a partie's pot at its close
    (games.services' ``share_pot``): a unique index finds it, where its source would be a
    scan of the club's entries."""
    return f"partie:{partie.pk}:pot-shared"


def on_partie_ended(*, partie: Partie, **_: Any) -> None:
    """A partie closed, in the close's transaction: the pot shared, if any, goes to the
    soirée's rows."""
    place = SoireeTable.objects.select_related("soiree").filter(partie_id=partie.pk).first()
    if place is not None:
        pot_shared(soiree=place.soiree, partie=partie)


def ruling_add(*, ruling: Ruling, hand: Hand, voided_before: bool) -> None:
    """Add a ruling to its soirée's rows: the chips it moved (per player, on his line of the
    chart at the ruling's time), and its hand counted out when it now stands voided, or in
    again when an appeal undid the void (``voided_before``: whether it stood voided before)."""
    soiree = ruling.dispute.soiree
    _moved(soiree, at=ruling.at)
    moved = ledger_selectors.source_totals(entries=list(ruling.entries), by="owner_id",
                                           owned_only=True)
    seats = _seats(hand.partie)
    voided = hand_voided(hand=hand)
    counts = {}
    if voided != voided_before:
        result, comets = _outcome(hand)
        counts = _counted(result, comets, seats)
    bots = {pk: bot for pk, bot in seats.values()}
    rows = _rows(soiree, {pk: bots.get(pk, False) for pk in {*moved, *counts}})
    stretch = chart_stretch(soiree, ruling.at)
    for pk, amount in moved.items():
        rows[pk].net += amount
        rows[pk].listed = True
        rows[pk].chart = chart_add(rows[pk].chart, stretch, amount)
    sign = -1 if voided else 1
    for pk, count in counts.items():
        for key, n in count.items():
            setattr(rows[pk], key, getattr(rows[pk], key) + sign * n)
    _save(rows.values())


def door_add(*, soiree: Soiree, user: Any, stack: Any) -> None:
    """The player's buy-in and rebuys at the soirée, as his stack's entries of the door hold
    them, after a check-in, its undo or a rebuy. Read again rather than added: a request
    repeated (a double click) posts nothing new, and this stays right."""
    _moved(soiree)
    buy_in, rebuy = f"soiree:{soiree.pk}/buy-in", f"soiree:{soiree.pk}/rebuy"
    paid = ledger_selectors.source_totals(sources=[buy_in, rebuy], accounts=[stack.pk],
                                          by="source")
    row = _rows(soiree, {user.pk: False})[user.pk]
    row.buy_in, row.rebuys = paid.get(buy_in, 0), paid.get(rebuy, 0)
    row.save(update_fields=["buy_in", "rebuys"])


# -- the reference: the same rows from the events and the ledger ----------------------------------


def projection_compute(*, soiree: Soiree) -> dict[str, Any]:
    """The soirée's rows computed from its events and the ledger (the standings of
    ``standings_compute``, the door's chips of ``chips_paid``, and the chart below), by
    username, and its hands ended: what the stored rows hold when nothing went wrong."""
    standings = standings_compute(soiree=soiree, at=timezone.now())
    blank = {"bot": False, "listed": False, **dict.fromkeys(COUNTS, 0), "buy_in": 0,
             "rebuys": 0, "chart": []}
    rows: dict[str, dict[str, Any]] = {}
    for bot, listed in ((False, standings["players"]), (True, standings["bots"])):
        for r in listed:
            rows[r["player"]] = {**blank, **{k: r[k] for k in COUNTS}, "bot": bot,
                                 "listed": True}
    for name, (buy_in, rebuys) in chips_paid(soiree).items():
        rows.setdefault(name, dict(blank)).update(buy_in=buy_in, rebuys=rebuys)
    for name, points in chart_compute(soiree=soiree).items():
        rows.setdefault(name, dict(blank))["chart"] = points
    hands = Hand.objects.filter(partie__soiree_table__soiree=soiree,
                                status=Hand.Status.OVER).count()
    return {"rows": rows, "hands": hands}


def chart_compute(*, soiree: Soiree) -> dict[str, list[list[int]]]:
    """Each player's line of the chart from the events and the ledger: every hand's net at
    its end, every pot shared at its partie's close, every ruling's chips at its time, summed
    per stretch of the evening and carried on (``chart_add``'s lines)."""
    parties = list(Partie.objects.filter(soiree_table__soiree=soiree)
                   .prefetch_related("seats__player"))
    names = {p.pk: {s.number: s.player.get_username() for s in p.seats.all()} for p in parties}
    moved: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    for row in game_selectors.hand_results(parties=parties):
        stretch = chart_stretch(soiree, row["ended_at"])
        for seat, net in row["result"]["net"].items():
            moved[names[row["partie"]][int(seat)]][stretch] += net
    closed = {_pot_key(p): p for p in parties if p.status == Partie.Status.OVER}
    for (key, name), amount in ledger_selectors.source_totals(
            keys=list(closed), by=("key", "owner"), owned_only=True).items():
        moved[name][chart_stretch(soiree, closed[key].ended_at or timezone.now())] += amount
    rulings = list(Ruling.objects.filter(dispute__soiree=soiree).values_list("at", "entries"))
    when = {entry: at for at, entries in rulings for entry in entries}
    for (entry, name), amount in ledger_selectors.source_totals(
            entries=list(when), by=("entry", "owner"), owned_only=True).items():
        moved[name][chart_stretch(soiree, when[entry])] += amount
    lines = {}
    for name, by_stretch in moved.items():
        net, points = 0, []
        for stretch in sorted(by_stretch):
            net += by_stretch[stretch]
            points.append([stretch, net])
        lines[name] = points
    return lines


def _stored(soiree: Soiree) -> dict[str, Any]:
    rows = {r.player.get_username(): {f: getattr(r, f) for f in FIELDS}
            for r in SoireeStanding.objects.filter(soiree=soiree).select_related("player")}
    head = SoireeProjection.objects.filter(soiree=soiree).first()
    return {"rows": rows, "hands": head.hands if head else 0}


def projection_differences(*, soiree: Soiree) -> list[str]:
    """Where the stored rows differ from ``projection_compute``'s, each said in a line (an
    empty list when they agree). Writes nothing."""
    stored, computed = _stored(soiree), projection_compute(soiree=soiree)
    found = []
    if stored["hands"] != computed["hands"]:
        found.append(f"soirée {soiree.pk}: hands ended stored {stored['hands']}, "
                     f"computed {computed['hands']}")
    blank = {"bot": False, "listed": False, **dict.fromkeys(COUNTS, 0), "buy_in": 0,
             "rebuys": 0, "chart": []}
    for name in sorted({*stored["rows"], *computed["rows"]}):
        mine = stored["rows"].get(name, blank)
        want = computed["rows"].get(name, blank)
        for field in FIELDS:
            if mine[field] != want[field]:
                found.append(f"soirée {soiree.pk}: {name}'s {field} stored {mine[field]!r}, "
                             f"computed {want[field]!r}")
    return found


def projection_rebuild(*, soiree: Soiree) -> None:
    """Replace the soirée's rows by ``projection_compute``'s, under its projection row's lock
    (a hand ending meanwhile waits, then adds itself to the rebuilt rows)."""
    with transaction.atomic():
        _moved(soiree, at=timezone.now())
        computed = projection_compute(soiree=soiree)
        users = dict(get_user_model().objects.filter(
            username__in=list(computed["rows"])).values_list("username", "pk"))
        SoireeStanding.objects.filter(soiree=soiree).delete()
        SoireeStanding.objects.bulk_create([
            SoireeStanding(soiree=soiree, player_id=users[name], **row)
            for name, row in computed["rows"].items()])
        SoireeProjection.objects.filter(soiree=soiree).update(hands=computed["hands"])
