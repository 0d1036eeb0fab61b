"""The web pages: lobby, soirée (live tables and standings), table (play), audit replay.

Pages are thin: they render a shell and read everything through the same API as any client,
so that a page can never show more than the API lets the viewer see.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import date, datetime, time
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.urls import reverse
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext as _

from games.engine.registry import get_game
from games.models import Game, Hand, Partie, Seat
from games.selectors import hand_record, invitations_pending, seat_of
from games.services import ASK_WINDOW_MIN, casual_max_buy_in
from tournaments.arbitration import may_rule, window_end
from tournaments.models import Dispute, Membership, Registration, Soiree, SoireeTable
from tournaments.permissions import has_role, may_audit, may_create_soirees, may_organise
from tournaments.selectors import arbiter_queue, disputes_of_hand, disputes_of_player, soiree_list

from . import selectors as lobby_reads
from .access import viewable_hand, viewable_soiree
from .accounts import club_links
from .calendar import calendar_links
from .words import audit_words, bot_levels, table_words

#: A placeholder hand id in the URL the page's script fills in (the next hand's).
UUID_ZERO = "00000000-0000-0000-0000-000000000000"


@login_required
def lobby(request: HttpRequest) -> HttpResponse:
    """Where the user sits now (and the tables he has left, to come back to), the casual tables
    waiting for his answer, the day's soirées of his clubs, the casual tables he may watch, and
    the form that makes one (its script posts to the API, as any client would)."""
    user, now = request.user, timezone.now()
    tables_now = list(lobby_reads.tables_now(user=user))
    away = away_from(user, tables_now)
    left = {a["partie"].pk for a in away}
    return render(request, "frontend/lobby.html", {
        # A table he has left is said once, with its way back (``away_from``).
        "tables_now": [p for p in tables_now if p.pk not in left],
        "away_from": away,
        # A soirée's seat, which waits for nobody: the forms that seat him elsewhere say so.
        "soiree_seat": next((p for p in tables_now if p.soiree_id), None),
        "invitations": invitations_pending(user=user),
        "soirees": with_registrations(user, lobby_reads.soirees_of_the_day(user=user, at=now)),
        "other_soirees": with_registrations(user, lobby_reads.other_soirees(user=user, at=now)),
        "seasons": lobby_reads.seasons_of(user=user, at=now)[:5],
        "casual_tables": lobby_reads.casual_tables(user=user),
        "games": Game.choices,
        "max_bots": max(get_game(game).MAX_SEATS for game in Game.values) - 1,
        "bot_levels": bot_levels(),
        "max_buy_in": casual_max_buy_in(),
        "time_zone": settings.TIME_ZONE,
        "organises": may_create_soirees(user),
        "clubs_organised": club_links(user),
        "my_disputes": disputes_of_player(user=user),
        "calendars": calendar_links(request),
    })


@login_required
def soiree_page(request: HttpRequest, soiree_id: int) -> HttpResponse:
    """The soirée's live tables and standings; for a member, his own registration (the
    button that registers him or takes his name off, or where he stands)."""
    soiree = viewable_soiree(request, soiree_id)
    with timezone.override(soiree.club.zone()):  # the club's times
        return render(request, "frontend/soiree.html", {
            "soiree": soiree, "may_manage": may_organise(request.user, soiree.club_id),
            "registration": Registration.objects.filter(soiree=soiree,
                                                        user_id=request.user.pk).first(),
            "member": has_role(request.user, soiree.club_id)})


def away_from(user: Any, tables: Iterable[Any]) -> list[dict[str, Any]]:
    """The tables of ``tables`` (``tables_now``, their seats fetched) that ``user`` has left,
    each with whether it waits for him (``pauses``) or the time-out rule plays for him."""
    out = []
    for partie in tables:
        seat = next((s for s in partie.seats.all() if s.player_id == user.pk), None)
        if seat is not None and seat.away:
            out.append({"partie": partie, "pauses": seat.pauses})
    return out


def with_registrations(user: Any, soirees: Iterable[Soiree]) -> list[Soiree]:
    """``soirees`` as a list, each with ``my_registration`` (``user``'s, or None) and
    ``i_am_member`` (whether he belongs to its club), for the lobby's buttons: two queries."""
    soirees = list(soirees)
    mine = {r.soiree_id: r for r in Registration.objects.filter(
        user_id=user.pk, soiree__in=[s.pk for s in soirees])}
    clubs = set(Membership.objects.filter(user_id=user.pk).values_list("club_id", flat=True))
    for soiree in soirees:
        soiree.my_registration = mine.get(soiree.pk)  # type: ignore[attr-defined]
        soiree.i_am_member = soiree.club_id in clubs  # type: ignore[attr-defined]
    return soirees


def favicon(request: HttpRequest) -> HttpResponse:
    return redirect(static("frontend/favicon.svg"), permanent=True)


@login_required
def table_page(request: HttpRequest, hand_id: str) -> HttpResponse:
    """The card table. The page gets the seats' names and the words it speaks here; the hand
    itself it reads through the API and its live channel, as any client would."""
    hand = viewable_hand(request, hand_id)
    # A seated viewer follows his seat's frames (his cards), anyone else the public ones.
    seat = seat_of(hand, request.user)
    live_path = (f"/ws/parties/{hand.partie_id}/" if seat is None
                 else f"/ws/parties/{hand.partie_id}/seats/{seat}/")
    partie = hand.partie
    place = SoireeTable.objects.filter(partie=partie).select_related("soiree__club").first()
    table = {
        "hand": str(hand.pk), "number": hand.number, "game": partie.game,
        "live_path": live_path, "your_seat": seat,
        "soiree": place.soiree_id if place else None,
        "table_number": place.number if place else None,
        # Deadlines in the club's time zone (a casual table: the service's).
        "time_zone": place.soiree.club.time_zone if place else settings.TIME_ZONE,
        "seats": [{"number": s.number, "name": s.player.get_full_name() or s.player.get_username(),
                   "bot": bool(s.bot),
                   "level": s.bot, "away": s.away}
                  for s in partie.seats.select_related("player").order_by("number")],
        "comet_order": _comet_order(partie, seat),
        "comet_window": partie.comet_window.total_seconds(),
        "urls": {"table": reverse("table-page", args=[UUID_ZERO]),
                 "audit": reverse("audit-page", args=[hand.pk]), "lobby": reverse("lobby"),
                 "results": (reverse("soiree-results", args=[place.soiree_id])
                             if place else None)},
        "partie": str(partie.pk),
        # The partie's last hand, opened after its end: the page says where to go next.
        "partie_over": (partie.status == Partie.Status.OVER
                        and not partie.hands.filter(number__gt=hand.number).exists()),
    }
    return render(request, "frontend/table.html", {
        "hand": hand, "partie": partie, "table": table, "words": table_words()})


def _comet_order(partie: Any, seat: int | None) -> dict[str, Any] | None:
    """A seated Comet player's standing order and the orders he may choose, in words."""
    if seat is None or partie.game != "comet":
        return None
    mine = partie.seats.get(number=seat)
    window = partie.comet_window
    return {"order": mine.comet_order,
            # "Ask me" only where a chance gives a person the time to decide.
            "ask_refused": window < ASK_WINDOW_MIN,
            "ask_from": int(ASK_WINDOW_MIN.total_seconds()),
            "choices": [{"value": v, "label": str(label)} for v, label in
                        Seat.CometOrder.choices]}


@login_required
def replay_page(request: HttpRequest, hand_id: str) -> HttpResponse:
    """A finished hand replayed on the card table, step by step (``#seq=17`` names a step):
    the table page in its replay mode, reading ``/api/hands/{id}/replay``."""
    hand = viewable_hand(request, hand_id)
    partie = hand.partie
    # An arbiter of one of its disputes may branch it (the latest dispute he may rule on).
    ruled_by_him = [d for d in Dispute.objects.filter(hand=hand).select_related(
        "soiree", "hand__partie").order_by("-opened_at") if may_rule(request.user, d)]
    table = {
        "hand": str(hand.pk), "number": hand.number, "game": partie.game, "replay": True,
        "dispute": ruled_by_him[0].pk if ruled_by_him else None,
        "your_seat": None, "soiree": None, "table_number": None,
        "time_zone": settings.TIME_ZONE, "live_path": "", "partie": str(partie.pk),
        "seats": [{"number": s.number, "name": s.player.get_full_name() or s.player.get_username(),
                   "bot": bool(s.bot),
                   "level": s.bot, "away": False}
                  for s in partie.seats.select_related("player").order_by("number")],
        "urls": {"table": reverse("table-page", args=[UUID_ZERO]),
                 "audit": reverse("audit-page", args=[hand.pk]), "lobby": reverse("lobby")},
    }
    return render(request, "frontend/table.html", {
        "hand": hand, "partie": partie, "table": table,
        # The replay says the events only a record shows (shares, deal, end) as the audit does.
        "words": {**table_words(), "record_event": audit_words([])["event"]},
        "replay": True})


@login_required
def audit_page(request: HttpRequest, hand_id: str) -> HttpResponse:
    """The hand replayed and verified in the browser; its disputes and rulings, the form that
    opens one (its players, the organiser) and the one that rules (the club's arbiters)."""
    hand = viewable_hand(request, hand_id)
    place = SoireeTable.objects.filter(partie=hand.partie).select_related("soiree__club").first()
    # The seats named as the table names them, for the hand told event by event.
    seats = [{"name": s.player.get_full_name() or s.player.get_username(), "bot": bool(s.bot)}
             for s in hand.partie.seats.select_related("player").order_by("number")]
    context: dict[str, Any] = {"hand": hand, "soiree": place.soiree if place else None,
                               "words": audit_words(seats)}
    if place is not None:
        soiree = place.soiree
        players = set(hand.partie.seats.filter(bot="").values_list("player_id", flat=True))
        window = window_end(soiree)
        # (username, name): the corrections are keyed by username, labelled by name.
        names = [(s.player.get_username(), s.player.get_full_name() or s.player.get_username())
                 for s in hand.partie.seats.select_related("player").order_by("number")]
        disputes = disputes_of_hand(hand=hand)
        for dispute in disputes:  # a branch's result by player, not by seat
            for w in dispute["whatifs"]:
                w["nets"] = [(names[int(seat)][1], net) for seat, net in
                             (w["result"] or {}).get("net", {}).items()]
        context.update({
            "disputes": disputes,
            "may_dispute": hand.status == Hand.Status.OVER
            and (window is None or timezone.now() <= window)
            and (request.user.pk in players or may_organise(request.user, soiree.club_id)),
            "window_end": window,
            "may_rule": request.user.pk not in players and may_audit(request.user,
                                                                     soiree.club_id),
            "seat_names": names,
            "time_zone": soiree.club.time_zone,
        })
    return render(request, "frontend/audit.html", context)


@login_required
def record_download(request: HttpRequest, hand_id: str) -> HttpResponse:
    """The hand's record as a file, exactly HAND_RECORD.md's JSON, which
    ``python -m games.engine.verify`` reads; published once the hand is over."""
    hand = viewable_hand(request, hand_id, "secret")
    if hand.status != Hand.Status.OVER:
        return HttpResponse(_("The record is published once the hand is over."), status=409,
                            content_type="text/plain; charset=utf-8")
    record = hand_record(hand=hand)
    place = (SoireeTable.objects.filter(partie=hand.partie).select_related("soiree").first())
    if place is not None:
        name = f"{slugify(place.soiree.name)}-table{place.number}-hand{hand.number}.json"
    else:
        name = f"{slugify(hand.partie.table_label) or 'table'}-hand{hand.number}.json"
    answer = HttpResponse(json.dumps(record, ensure_ascii=False, indent=1),
                          content_type="application/json; charset=utf-8")
    answer["Content-Disposition"] = f'attachment; filename="{name}"'
    return answer


@login_required
def hands_search(request: HttpRequest) -> HttpResponse:
    """The arbiter's room: his queue of open disputes (oldest first), and the search of every
    finished hand the user may see, by soirée, table, player, game, day and dispute, a page of
    50 at a time, each with its audit page and its record."""
    form = request.GET
    soiree = form.get("soiree", "")
    day_text = form.get("day", "")
    try:
        day = (timezone.make_aware(datetime.combine(date.fromisoformat(day_text), time(12)))
               if day_text else None)
    except ValueError:
        day = None
    table = form.get("table", "")
    hands = lobby_reads.hands_found(
        user=request.user, soiree=int(soiree) if soiree.isdigit() else None,
        table=int(table) if table.isdigit() and len(table) < 4 else None,
        disputed=form.get("disputed") == "1",
        player=form.get("player", "").strip()[:150],
        game=form.get("game", "") if form.get("game") in Game.values else "", day=day)
    page = Paginator(hands, 50).get_page(form.get("page"))
    return render(request, "frontend/hands.html", {
        "page": page, "games": Game.choices, "form": form,
        "soirees": soiree_list(user=request.user)[:100],
        "queue": arbiter_queue(user=request.user)})
