"""Reads: who may do what in a club, a soirée's tables, standings."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import OuterRef, Q, QuerySet, Subquery
from django.utils.translation import gettext as _

from games import selectors as game_selectors
from games.models import Hand, Seat
from ledger import selectors as ledger_selectors

from ..models import (
    Announcement,
    Dispute,
    Membership,
    Registration,
    Soiree,
    SoireeTable,
)
from ..permissions import sees_all
from ..seating import SeatingError, draw
from .projections import (  # noqa: F401  (the package's face: its reads of the read models)
    chart_read,
    paid_read,
    projection_hands,
    projection_version,
    soiree_standings,
    standings_read,
)
from .standings import (  # noqa: F401  (the package's face: its reads of standings)
    CLUB,
    chips_paid,
    hand_voided,
    party_nets,
    rulings_net,
    season_standings,
    settlement_corrected,
    settlement_of,
    standings_compute,
    voided_hands,
)


def registration_list(*, soiree: Soiree) -> QuerySet[Registration]:
    """The soirée's registrations with their players, in the order they registered."""
    return (Registration.objects.filter(soiree=soiree).select_related("user")
            .order_by("registered_at", "pk"))


def stacks(*, soiree: Soiree) -> dict[int, int]:
    """Each player's chips at the soirée (his stack), by user id."""
    return dict(ledger_selectors.club_accounts(club_key=soiree.club.slug, kind="wallet")
                .filter(ref=soiree.stack_ref).values_list("owner_id", "balance"))


def opening_problems(*, soiree: Soiree) -> list[str]:
    """Why the soirée would not open now, and for whom, in the reader's language: the players
    who hold less than the ante (they sit out until a rebuy), and a seating its game refuses.
    Empty when it opens (or nobody is checked in yet, which its page says on its own)."""
    if soiree.status != Soiree.Status.SCHEDULED:
        return []
    present = [r.user for r in soiree.registrations.filter(checked_in_at__isnull=False)
               .select_related("user").order_by("checked_in_at", "pk")]
    if not present:
        return []
    chips = stacks(soiree=soiree)
    ante = int((soiree.options or {}).get("ante", 1))
    problems = [_("%(name)s holds %(chips)s chips, fewer than the ante (%(ante)s): he sits out "
                  "until a rebuy.") % {"name": u.get_full_name() or u.get_username(),
                                       "chips": chips.get(u.pk, 0), "ante": ante}
                for u in present if chips.get(u.pk, 0) < ante]
    seated = [u for u in present if chips.get(u.pk, 0) >= ante]
    try:
        draw(soiree.game, seated, seed="a dry run: only whether it seats",
             bots_allowed=soiree.bots_allowed, min_tables=soiree.min_tables)
    except SeatingError as exc:
        problems.append(str(exc))
    return problems


def soiree_list(*, user: AbstractBaseUser | AnonymousUser) -> QuerySet[Soiree]:
    """The soirées of the clubs the user belongs to (staff see all)."""
    qs = Soiree.objects.select_related("club").order_by("-starts_at")
    if sees_all(user):
        return qs
    return qs.filter(club__memberships__user_id=user.pk).distinct()


def soiree_tables(*, soiree: Soiree, partie: Any = None,
                  history: bool = True) -> list[dict[str, Any]]:
    """The evening's tables: each partie, its seats, its hand in progress (public facts
    only); ``partie``: that partie's table only (a page follows the table that changed);
    ``history=False``: each table's latest partie only (what a page of the room shows). A few
    queries, each of a row a partie: the hands are not counted but read off the latest one."""
    found = (SoireeTable.objects.filter(soiree=soiree).select_related("partie")
             .annotate(last=Subquery(Hand.objects.filter(partie=OuterRef("partie"))
                                     .order_by("-number").values("number")[:1])))
    if partie is not None:
        found = found.filter(partie_id=partie)
    if not history:
        found = found.filter(round=Subquery(
            SoireeTable.objects.filter(soiree=soiree, number=OuterRef("number"))
            .order_by("-round").values("round")[:1]))
    tables = list(found.order_by("number", "round"))
    seats: dict[Any, list[Seat]] = defaultdict(list)
    for seat in (Seat.objects.filter(partie__in=[t.partie_id for t in tables])
                 .select_related("player", "partie").order_by("number")):
        seats[seat.partie_id].append(seat)
    chips = game_selectors.seats_chips(seats=[s for row in seats.values() for s in row])
    latest = Q(pk__in=[])
    for t in tables:
        if t.last is not None:  # type: ignore[attr-defined]
            latest |= Q(partie_id=t.partie_id, number=t.last)  # type: ignore[attr-defined]
    current = {h.partie_id: h for h in Hand.objects.filter(latest)}
    out = []
    for t in tables:
        hand = current.get(t.partie_id)
        out.append({
            "table": t.number,
            "round": t.round,
            "partie": str(t.partie_id),
            "status": t.partie.status,
            "seats": [{"seat": s.number, "player": s.player.get_username(),
                       "name": s.player.get_full_name() or s.player.get_username(),
                       "bot": s.bot or None, "chips": chips[s.pk], "away": s.away}
                      for s in seats[t.partie_id]],
            # Hands are numbered from 1 and dealt one after the other: all but one in play
            # are over.
            "hands_played": 0 if hand is None else hand.number - (
                hand.status != Hand.Status.OVER),
            "current_hand": None if hand is None else {
                "hand": str(hand.pk), "number": hand.number, "status": hand.status,
                "seq": hand.last_seq, "deadline": hand.deadline,
            },
        })
    return out


def table_of(*, soiree: Soiree, user: AbstractBaseUser) -> dict[str, Any] | None:
    """The latest table of the evening where ``user`` sits, if any."""
    found = None
    for table in soiree_tables(soiree=soiree):
        if any(seat["player"] == user.get_username() for seat in table["seats"]):
            found = table
    return found


def announcement_text(a: Announcement) -> str:
    """The announcement in the active language."""
    values = {"player": a.player.get_username() if a.player else "", "from": a.from_table,
              "to": a.to_table}
    if a.kind == Announcement.Kind.MESSAGE:
        return a.text
    if a.kind == Announcement.Kind.MOVE:
        phrase = (_("%(player)s moves from table %(from)s to table %(to)s") if a.done_at
                  else _("After the hand in play, %(player)s moves from table %(from)s to "
                         "table %(to)s"))
    elif a.kind == Announcement.Kind.JOIN:
        phrase = (_("%(player)s takes a seat at table %(to)s") if a.done_at
                  else _("After the hand in play, %(player)s takes a seat at table %(to)s"))
    elif a.kind == Announcement.Kind.REPLACE:
        phrase = (_("A bot takes %(player)s's seat at table %(from)s") if a.done_at
                  else _("After the hand in play, a bot takes %(player)s's seat at table "
                         "%(from)s"))
    else:
        phrase = (_("%(player)s leaves table %(from)s") if a.done_at
                  else _("After the hand in play, %(player)s leaves table %(from)s"))
    return phrase % values


def announcement_row(a: Announcement) -> dict[str, Any]:
    return {"id": a.pk, "at": a.at, "kind": a.kind, "reason": a.reason,
            "player": a.player.get_username() if a.player else None,
            "from_table": a.from_table, "to_table": a.to_table,
            "text": announcement_text(a), "done": a.done_at is not None}


def announcements(*, soiree: Soiree, limit: int = 20) -> list[dict[str, Any]]:
    """The latest announcements, newest first."""
    return [announcement_row(a) for a in soiree.announcements.select_related("player")
            .order_by("-at", "-pk")[:limit]]


def dispute_row(d: Any) -> dict[str, Any]:
    """A dispute, its rulings (oldest first; the latest stands) and where its hand was played."""
    rulings = [{"id": r.pk, "kind": r.kind, "reason": r.reason, "at": r.at,
                "arbiter": r.arbiter.get_username(),
                "arbiter_name": r.arbiter.get_full_name() or r.arbiter.get_username(),
                "corrections": r.corrections,
                "entries": r.entries, "shortfall": r.shortfall, "cites": r.cites}
               for r in d.rulings.select_related("arbiter").order_by("at", "pk")]
    whatifs = [{"id": w.pk, "author": w.author.get_username(),
                "author_name": w.author.get_full_name() or w.author.get_username(),
                "created_at": w.created_at,
                "from_seq": w.from_seq, "moves": w.moves, "played_out": w.played_out,
                "result": w.result, "note": w.note}
               for w in d.whatifs.select_related("author").order_by("created_at", "pk")]
    return {"id": d.pk, "hand": str(d.hand_id), "hand_number": d.hand.number,
            "table": d.hand.partie.table_label, "soiree": d.soiree_id,
            "opened_by": d.opened_by.get_username(),
            "opened_by_name": d.opened_by.get_full_name() or d.opened_by.get_username(),
            "opened_at": d.opened_at,
            "reason": d.reason, "event": d.event_seq,
            "status": "ruled" if rulings else "open",
            "ruling": rulings[-1] if rulings else None, "rulings": rulings,
            "whatifs": whatifs}


def disputes_of_hand(*, hand: Any) -> list[dict[str, Any]]:
    return [dispute_row(d) for d in Dispute.objects.filter(hand=hand).select_related(
        "hand__partie", "opened_by").order_by("opened_at", "pk")]


def arbiter_queue(*, user: Any, status: str = "open") -> list[dict[str, Any]]:
    """The disputes of the clubs ``user`` audits (all of them for staff), oldest first."""
    disputes = Dispute.objects.select_related("hand__partie", "opened_by", "soiree")
    if not sees_all(user):
        disputes = disputes.filter(soiree__club__memberships__user=user,
                                   soiree__club__memberships__role=Membership.Role.AUDITOR)
    if status == "open":
        disputes = disputes.filter(rulings__isnull=True)
    elif status == "ruled":
        disputes = disputes.filter(rulings__isnull=False)
    return [dispute_row(d) for d in disputes.distinct().order_by("opened_at", "pk")]


def disputes_of_player(*, user: Any, limit: int = 10) -> list[dict[str, Any]]:
    """The disputes on hands ``user`` played, newest first: his page tells him of them."""
    return [dispute_row(d) for d in Dispute.objects.filter(
        hand__partie__seats__player=user).select_related("hand__partie", "opened_by")
        .distinct().order_by("-opened_at", "-pk")[:limit]]
