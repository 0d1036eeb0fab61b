"""A soirée for the room and for the record: the room screen, the results sheet (a
print-ready page and its PDF) and the standings and settlement as CSV, seen by whoever sees
the soirée; and the season's standings, by the club's members."""

from __future__ import annotations

import hashlib

from django.contrib.auth.decorators import login_required
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django.utils.cache import get_conditional_response
from django.utils.translation import get_language, pgettext
from django.utils.translation import gettext as _

from tournaments import sheets
from tournaments.models import Soiree
from tournaments.permissions import may_organise
from tournaments.selectors import projection_version, season_standings, soiree_tables

from .access import viewable_season, viewable_soiree
from .ratings import season_ratings


def _words(soiree: Soiree) -> dict[str, str]:
    """The sheet's headings in the reader's language (the soirée page's words)."""
    return {"standings": _("Standings"), "settlement": _("Settlement"),
            "hands_section": _("Hands and their verification digests"),
            "verified_how": _("The service verified each hand's record against HAND_RECORD.md "
                              "once the hand was over; its audit page verifies it again in "
                              "your browser."),
            "nothing": _("nothing to settle"), "pays": _("{payer} pays {payee} {amount}"),
            "correction": _("correction after a ruling"),
            "rank": _("rank"), "player": _("player"), "buy_in": _("buy-in"),
            "rebuys": _("rebuys"), "final_chips": _("final chips"), "net": _("net"),
            "hands_won": _("hands won"), "hands": _("hands"), "comets": _("Comets"),
            "tricons": _("tricons"), "table": _("Table"), "partie": _("partie"),
            "hand": _("hand"), "verified": _("verified"), "digest": _("digest"),
            "id": _("hand id"), "planned": _("planned"), "actual": _("actual"),
            "status": status_word(soiree)}


def status_word(soiree: Soiree) -> str:
    """The soirée's state as the sheets say it: scheduled, in progress, over."""
    return {Soiree.Status.SCHEDULED: pgettext("soirée status", "scheduled"),
            Soiree.Status.OPEN: pgettext("soirée status", "open"),
            Soiree.Status.CLOSED: pgettext("soirée status", "closed")}.get(
                soiree.status, soiree.status)


@login_required
def results_page(request: HttpRequest, soiree_id: int) -> HttpResponse:
    soiree = viewable_soiree(request, soiree_id)
    with timezone.override(soiree.club.zone()):  # the club's times
        return render(request, "frontend/results.html", {
            "soiree": soiree, "players": sheets.standings_rows(soiree),
            "game_column": sheets.GAME_COLUMN.get(soiree.game, "comets"),
            "transfers": sheets.settlement_lines(soiree),
            "hands": sheets.hands_page(soiree, request.GET.get("hands"))})


@login_required
def season_page(request: HttpRequest, season_id: int) -> HttpResponse:
    """The season's standings (every closed soirée of it added up), its ratings and its
    soirées."""
    season = viewable_season(request, season_id)
    people, bots = season_ratings(season)
    with timezone.override(season.club.zone()):
        return render(request, "frontend/season.html", {
            "season": season, "players": season_standings(season=season),
            "ratings": people, "bot_ratings": bots,
            "soirees": season.soirees.order_by("starts_at")})


@login_required
def room_screen(request: HttpRequest, soiree_id: int) -> HttpResponse:
    """The room screen, for a projector: the clock, the tables, the leaders, all live."""
    soiree = viewable_soiree(request, soiree_id)
    return render(request, "frontend/room.html",
                  {"soiree": soiree, "time_zone": soiree.club.time_zone})


@login_required
def seating_sheet(request: HttpRequest, soiree_id: int) -> HttpResponse:
    """The seating to print and pin up, alone: one block per table (its latest partie), in
    large type, with the seed it was drawn from. The manage page links it; its organisers
    read it."""
    soiree = get_object_or_404(Soiree.objects.select_related("club"), pk=soiree_id)
    if not may_organise(request.user, soiree.club_id):
        raise PermissionDenied(_("only the club's organisers may print this soirée's seating"))
    latest = {t["table"]: t for t in soiree_tables(soiree=soiree)}
    with timezone.override(soiree.club.zone()):
        return render(request, "frontend/seating.html", {
            "soiree": soiree, "tables": [latest[n] for n in sorted(latest)]})


#: How long a made results sheet is kept: a newer version of the soirée replaces it sooner.
PDF_KEPT_SECONDS = 24 * 3600


@login_required
def results_pdf(request: HttpRequest, soiree_id: int) -> HttpResponse:
    """The results sheet as a PDF. Made once for each state of the soirée and language, and
    kept in the cache (Redis in a deployment): its hands' list grows with the evening, and the
    organiser and every player download the same document. The key names what the sheet
    shows: the read models' version (hands, rulings, the door), the soirée's state and times,
    and the reader's language; a browser that has it is answered 304."""
    soiree = viewable_soiree(request, soiree_id)
    state = hashlib.sha256(repr((
        soiree.name, soiree.status, soiree.starts_at, soiree.ends_at, soiree.opened_at,
        soiree.closed_at, soiree.club.name, soiree.club.time_zone)).encode()).hexdigest()[:16]
    key = f"results-pdf-{soiree.pk}-{projection_version(soiree=soiree)}-{state}-{get_language()}"
    unchanged = get_conditional_response(request, etag=f'"{key}"')
    if unchanged is not None:
        return unchanged
    pdf = cache.get(key)
    if pdf is None:
        pdf = sheets.results_pdf(soiree, words=_words(soiree))
        cache.set(key, pdf, PDF_KEPT_SECONDS)
    answer = _file(soiree, "results.pdf", "application/pdf", pdf)
    answer["ETag"] = f'"{key}"'
    answer["Cache-Control"] = "private, no-cache"  # asked again each time, 304 if unchanged
    return answer


@login_required
def chips_chart(request: HttpRequest, soiree_id: int) -> HttpResponse:
    """Each player's chips over the evening, hand by hand, as an SVG chart."""
    soiree = viewable_soiree(request, soiree_id)
    # The chart changes only with the soirée's read models: a browser that has this version
    # of it is answered 304, drawing nothing.
    etag = f'"chart-{soiree.pk}-{projection_version(soiree=soiree)}-{get_language()}"'
    unchanged = get_conditional_response(request, etag=etag)
    if unchanged is not None:
        return unchanged
    svg = sheets.chips_chart_svg(soiree, title=_("Chips over the evening"))
    answer = HttpResponse(svg, content_type="image/svg+xml; charset=utf-8")
    answer["ETag"] = etag
    answer["Cache-Control"] = "private, no-cache"  # asked again each time, 304 if unchanged
    return answer


@login_required
def standings_csv(request: HttpRequest, soiree_id: int) -> HttpResponse:
    soiree = viewable_soiree(request, soiree_id)
    return _file(soiree, "standings.csv", "text/csv; charset=utf-8", sheets.standings_csv(soiree))


@login_required
def settlement_csv(request: HttpRequest, soiree_id: int) -> HttpResponse:
    soiree = viewable_soiree(request, soiree_id)
    return _file(soiree, "settlement.csv", "text/csv; charset=utf-8",
                 sheets.settlement_csv(soiree))


def _file(soiree: Soiree, name: str, content_type: str, content: str | bytes) -> HttpResponse:
    """A file of the soirée's to download, named after it."""
    answer = HttpResponse(content, content_type=content_type)
    answer["Content-Disposition"] = f'attachment; filename="soiree-{soiree.pk}-{name}"'
    return answer
