"""A soirée for the room and for the record: the room screen, the results sheet (a
print-ready page and its PDF) and the standings and settlement as CSV, seen by whoever sees
the soirée; and the season's standings, by the club's members."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext as _

from tournaments import sheets
from tournaments.models import Soiree
from tournaments.services import season_standings

from .access import viewable_season, viewable_soiree
from .ratings import season_ratings


def _words() -> dict[str, str]:
    """The sheet's headings in the reader's language (the soirée page's words)."""
    return {"standings": _("Standings"), "settlement": _("Settlement"),
            "hands_section": _("Hands and their verification digests"),
            "nothing": _("nothing to settle"), "pays": _("{payer} pays {payee} {amount}"),
            "player": _("player"), "net": _("net"), "hands_won": _("hands won"),
            "hands": _("hands"), "comets": _("Comets"), "tricons": _("tricons")}


@login_required
def results_page(request: HttpRequest, soiree_id: int) -> HttpResponse:
    soiree = viewable_soiree(request, soiree_id)
    with timezone.override(soiree.club.zone()):  # the club's times
        return render(request, "frontend/results.html", {
            "soiree": soiree, "players": (soiree.standings or {}).get("players", []),
            "transfers": (soiree.settlement or {}).get("transfers", []),
            "hands": sheets.hands_of(soiree)})


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
def results_pdf(request: HttpRequest, soiree_id: int) -> HttpResponse:
    soiree = viewable_soiree(request, soiree_id)
    return _file(soiree, "results.pdf", "application/pdf",
                 sheets.results_pdf(soiree, words=_words()))


@login_required
def chips_chart(request: HttpRequest, soiree_id: int) -> HttpResponse:
    """Each player's chips over the evening, hand by hand, as an SVG chart."""
    soiree = viewable_soiree(request, soiree_id)
    svg = sheets.chips_chart_svg(soiree, title=_("Chips over the evening"))
    answer = HttpResponse(svg, content_type="image/svg+xml; charset=utf-8")
    answer["Cache-Control"] = "no-store"  # it grows with every hand
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
