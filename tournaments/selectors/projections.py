"""Reads of a soirée's read models (tournaments/projections.py): its standings, the buy-ins and
rebuys of its results sheet, the lines of its chart and its version. Each is one query or two
over the soirée's players, however many hands it has had."""

from __future__ import annotations

from typing import Any

from ..models import Soiree, SoireeProjection, SoireeStanding


def projection_version(*, soiree: Soiree) -> int:
    """A number that moves whenever the soirée's figures do (0 before anything happened)."""
    found = (SoireeProjection.objects.filter(soiree=soiree)
             .values_list("version", flat=True).first())
    return found or 0


def projection_hands(*, soiree: Soiree) -> int | None:
    """The soirée's hands ended, as stored (None when it has no read model yet)."""
    return (SoireeProjection.objects.filter(soiree=soiree)
            .values_list("hands", flat=True).first())


def standings_read(*, soiree: Soiree) -> dict[str, Any]:
    """The standings as ``standings_compute`` gives them (the people by net then hands won,
    the club's bots apart), read from the stored rows."""
    head = SoireeProjection.objects.filter(soiree=soiree).first()
    rows = sorted(SoireeStanding.objects.filter(soiree=soiree, listed=True)
                  .select_related("player"),
                  key=lambda r: (-r.net, -r.hands_won, r.player.get_username()))

    def line(r: SoireeStanding) -> dict[str, Any]:
        return {"player": r.player.get_username(),
                "name": r.player.get_full_name() or r.player.get_username(),
                "net": r.net, "hands_won": r.hands_won, "comets": r.comets,
                "tricons": r.tricons, "hands": r.hands}

    at = (head.updated_at if head and head.updated_at
          else soiree.opened_at or soiree.starts_at)
    return {"players": [line(r) for r in rows if not r.bot],
            "bots": [line(r) for r in rows if r.bot],
            "computed_at": at.isoformat()}


def soiree_standings(*, soiree: Soiree) -> dict[str, Any] | None:
    """What the soirée's pages show as its standings: once closed, those stored at its close
    (which its rulings keep up to date, and its settlement nets); while it is open, its read
    model; before it opens, none."""
    if soiree.standings is not None:
        return dict(soiree.standings)
    if soiree.status == Soiree.Status.SCHEDULED:
        return None
    return standings_read(soiree=soiree)


def paid_read(*, soiree: Soiree) -> dict[str, tuple[int, int]]:
    """Each player's buy-in and rebuys at the soirée (``chips_paid``), those who hold some."""
    return {username: (buy_in, rebuys) for username, buy_in, rebuys in
            SoireeStanding.objects.filter(soiree=soiree).exclude(buy_in=0, rebuys=0)
            .values_list("player__username", "buy_in", "rebuys")}


def chart_read(*, soiree: Soiree) -> dict[str, list[int]]:
    """Each player's net at the end of every stretch of the evening in which someone's moved,
    in order: the lines of the chart, all of one length, each at 0 until its player's first
    hand and ending at his net."""
    lines = {name: points for name, points in SoireeStanding.objects.filter(soiree=soiree)
             .values_list("player__username", "chart") if points}
    stretches = sorted({stretch for points in lines.values() for stretch, _ in points})
    out = {}
    for name, points in lines.items():
        at = dict(points)
        net, line = 0, []
        for stretch in stretches:
            net = at.get(stretch, net)
            line.append(net)
        out[name] = line
    return out
