"""The season ratings on the pages: the season's table (people, then bots apart), and a
player's page with his rating, its history drawn as an SVG chart, and his rated parties. Seen
by whoever sees the season."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.template.defaultfilters import floatformat
from django.utils import timezone
from django.utils.html import escape
from django.utils.translation import gettext as _

from tournaments import ratings
from tournaments.models import RatingChange, Season
from tournaments.sheets import COLOURS

from .access import viewable_season


def season_ratings(season: Season) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The season's ratings ranked by ordinal: the people's, and the bots' apart (each list
    ranked from 1)."""
    bots = ratings.bot_ids(season=season)
    people: list[dict[str, Any]] = []
    machines: list[dict[str, Any]] = []
    for rating in ratings.rating_list(season=season):
        rows = machines if rating.user_id in bots else people
        rows.append({"rank": len(rows) + 1, "rating": rating, "user": rating.user})
    return people, machines


@login_required
def season_player_page(request: HttpRequest, season_id: int, user_id: int) -> HttpResponse:
    """A player's rating in the season: now, over his rated parties, and party by party."""
    season = viewable_season(request, season_id)
    player = get_object_or_404(get_user_model(), pk=user_id)
    history = list(ratings.rating_history(season=season, user=player))
    seated = dict(RatingChange.objects.filter(partie_id__in=[c.partie_id for c in history])
                  .order_by().values("partie_id").annotate(n=Count("id"))
                  .values_list("partie_id", "n"))
    people, bots = season_ratings(season)
    mine = next((row for row in people + bots if row["user"].pk == player.pk), None)
    rows = [{"number": i + 1, "change": c, "players": seated.get(c.partie_id, 0),
             "soiree": c.partie.soiree_table.soiree, "table": c.partie.soiree_table.number}
            for i, c in enumerate(history)]
    with timezone.override(season.club.zone()):
        return render(request, "frontend/season_player.html", {
            "season": season, "player": player, "row": mine,
            "is_bot": player.pk in ratings.bot_ids(season=season),
            "rows": list(reversed(rows))})


@login_required
def rating_chart(request: HttpRequest, season_id: int, user_id: int) -> HttpResponse:
    """A player's rating over his rated parties of the season, as an SVG chart."""
    season = viewable_season(request, season_id)
    player = get_object_or_404(get_user_model(), pk=user_id)
    points = [(ratings.MODEL.mu, ratings.MODEL.sigma, ratings.MODEL.rating().ordinal())]
    points += [(c.mu, c.sigma, c.ordinal)
               for c in ratings.rating_history(season=season, user=player)]
    svg = rating_chart_svg(points, title=_("%(player)s's rating over the season")
                           % {"player": player.get_username()},
                           ordinal=_("ordinal"), band="μ ± σ", parties=_("rated parties"))
    answer = HttpResponse(svg, content_type="image/svg+xml; charset=utf-8")
    answer["Cache-Control"] = "no-store"  # it grows with every rated partie
    return answer


def rating_chart_svg(points: list[tuple[float, float, float]], *, title: str, ordinal: str,
                     band: str, parties: str, width: int = 560, height: int = 260) -> str:
    """The ordinal after each rated partie (point 0: the starting rating) as a line, over the
    band mu ± sigma, drawn here like the soirée's chips chart (no script, no library); the
    legend above the plot, so that the plot keeps the width of a phone."""
    n = len(points)
    values = [v for mu, sigma, o in points for v in (mu + sigma, mu - sigma, o)] + [0.0]
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    left, right, top, bottom = 36, 12, 34, 26
    plot_w, plot_h = width - left - right, height - top - bottom
    line_ink, band_ink = COLOURS[1], "#aec7e8"

    def x(i: int) -> float:
        return left + plot_w * i / max(n - 1, 1)

    def y(v: float) -> float:
        return top + plot_h * (high - v) / span

    def path(values: list[tuple[int, float]]) -> str:
        return " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in values)

    upper = path([(i, mu + sigma) for i, (mu, sigma, _o) in enumerate(points)])
    lower = path([(i, mu - sigma) for i, (mu, sigma, _o) in reversed(list(enumerate(points)))])
    mus = path([(i, mu) for i, (mu, _s, _o) in enumerate(points)])
    line = path([(i, o) for i, (_m, _s, o) in enumerate(points)])
    ticks = [(high, f"{high:.0f}"), (0.0, "0")] + ([(low, f"{low:.0f}")] if low < -1 else [])
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
             f'role="img" aria-label="{escape(title)}" font-family="Georgia, serif" '
             f'font-size="13">',
             f'<title>{escape(title)}</title>',
             f'<line x1="{left}" y1="12" x2="{left + 22}" y2="12" stroke="{line_ink}" '
             f'stroke-width="2"/>',
             f'<text x="{left + 28}" y="16" fill="{line_ink}">{escape(ordinal)} '
             f'{floatformat(points[-1][2], 2)}</text>',  # as the tables round it
             f'<rect x="{left + 230}" y="6" width="22" height="12" fill="{band_ink}"/>',
             f'<text x="{left + 258}" y="16">{escape(band)}</text>',
             f'<polygon points="{upper} {lower}" fill="{band_ink}" fill-opacity="0.6"/>',
             f'<polyline fill="none" stroke="{COLOURS[0]}" stroke-width="1" '
             f'stroke-dasharray="3 3" points="{mus}"/>',
             f'<line x1="{left}" y1="{y(0):.1f}" x2="{left + plot_w}" y2="{y(0):.1f}" '
             f'stroke="#999" stroke-dasharray="4 3"/>']
    parts += [f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{label}</text>'
              for v, label in ticks]
    parts.append(f'<polyline fill="none" stroke="{line_ink}" stroke-width="2" points="{line}"/>')
    parts += [f'<circle cx="{x(i):.1f}" cy="{y(o):.1f}" r="2.5" fill="{line_ink}"/>'
              for i, (_m, _s, o) in enumerate(points) if n <= 40]
    parts += [f'<text x="{left}" y="{height - 8}">0</text>',
              f'<text x="{left + plot_w}" y="{height - 8}" text-anchor="end">{n - 1}</text>',
              f'<text x="{left + plot_w / 2:.1f}" y="{height - 8}" text-anchor="middle">'
              f'{escape(parties)}</text>',
              "</svg>"]
    return "".join(parts)
