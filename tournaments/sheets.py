"""A soirée's results to print and to keep: its standings, its settlement and its hands with
their verification digests, as CSV and as a PDF (fpdf2, pure Python: a fresh machine with only
Python makes it)."""

from __future__ import annotations

import csv
import io
from typing import Any

from django.utils import timezone
from django.utils.html import escape
from fpdf import FPDF

from games import selectors as game_selectors
from games.models import Hand, Partie

from .models import Soiree

STANDINGS_COLUMNS = ("player", "net", "hands_won", "hands", "comets", "tricons")


def hands_of(soiree: Soiree) -> list[dict[str, Any]]:
    """Every finished hand of the evening, table by table, with its verification digest."""
    hands = (Hand.objects.filter(partie__soiree_table__soiree=soiree, status=Hand.Status.OVER)
             .select_related("partie", "partie__soiree_table", "secret")
             .prefetch_related("partie__seats")
             .order_by("partie__soiree_table__number", "partie__soiree_table__round", "number"))
    out = []
    for hand in hands:
        checked = game_selectors.hand_verification(hand=hand)
        table = hand.partie.soiree_table
        out.append({"table": table.number, "partie": table.round, "hand": hand.number,
                    "id": str(hand.pk), "ok": checked["ok"], "digest": checked["digest"]})
    return out


def standings_csv(soiree: Soiree) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(STANDINGS_COLUMNS)
    for row in (soiree.standings or {}).get("players", []):
        writer.writerow([row[k] for k in STANDINGS_COLUMNS])
    return out.getvalue()


def settlement_csv(soiree: Soiree) -> str:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(("from", "to", "amount"))
    for t in (soiree.settlement or {}).get("transfers", []):
        writer.writerow((t["from"], t["to"], t["amount"]))
    return out.getvalue()


def _latin1(text: object) -> str:
    """The PDF's core fonts hold Latin-1: other characters (œ, ’) are spelled near enough."""
    spelled = str(text).replace("œ", "oe").replace("’", "'").replace("…", "...")
    return spelled.encode("latin-1", "replace").decode("latin-1")


def results_pdf(soiree: Soiree, *, words: dict[str, str]) -> bytes:
    """The results sheet: ``words`` are its headings, in the reader's language."""
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(auto=True, margin=15)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 16)
    pdf.cell(0, 10, _latin1(soiree.name), new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("Helvetica", size=10)
    start = timezone.localtime(soiree.opened_at or soiree.starts_at, soiree.club.zone())
    end = timezone.localtime(soiree.closed_at or soiree.ends_at, soiree.club.zone())
    pdf.cell(0, 6, _latin1(f"{soiree.club.name} - {soiree.get_game_display()} - "
                           f"{start:%d/%m/%Y %H:%M} - {end:%H:%M}"),
             new_x="LMARGIN", new_y="NEXT")

    def heading(text: str) -> None:
        pdf.ln(4)
        pdf.set_font("Helvetica", "B", 12)
        pdf.cell(0, 8, _latin1(text), new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", size=9)

    heading(words["standings"])
    with pdf.table(col_widths=(50, 20, 25, 20, 20, 20), text_align="LEFT") as table:
        table.row([_latin1(words[k]) for k in STANDINGS_COLUMNS])
        for row in (soiree.standings or {}).get("players", []):
            table.row([_latin1(row[k]) for k in STANDINGS_COLUMNS])
    heading(words["settlement"])
    transfers = (soiree.settlement or {}).get("transfers", [])
    if not transfers:
        pdf.cell(0, 6, _latin1(words["nothing"]), new_x="LMARGIN", new_y="NEXT")
    for t in transfers:
        pdf.cell(0, 6, _latin1(words["pays"].format(payer=t["from"], payee=t["to"],
                                                    amount=t["amount"])),
                 new_x="LMARGIN", new_y="NEXT")
    heading(words["hands_section"])
    pdf.set_font("Courier", size=7)
    for h in hands_of(soiree):
        mark = "OK" if h["ok"] else "FAIL"
        pdf.cell(0, 4, _latin1(f"T{h['table']} P{h['partie']} #{h['hand']:<3} {mark:4} "
                               f"{h['digest'] or '-'}  {h['id']}"),
                 new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


#: The chart's lines, one colour a player (repeated beyond ten).
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b",
           "#e377c2", "#7f7f7f", "#bcbd22")


def chips_over_the_evening(soiree: Soiree) -> dict[str, list[int]]:
    """Each player's net chips after each hand of the evening (every table's hands, in the
    order they ended): the standings' net, hand by hand."""
    parties = list(Partie.objects.filter(soiree_table__soiree=soiree)
                   .prefetch_related("seats__player"))
    names = {p.pk: {s.number: s.player.get_username() for s in p.seats.all()} for p in parties}
    lines: dict[str, list[int]] = {}
    running: dict[str, int] = {}
    results = game_selectors.hand_results(parties=parties)
    for i, row in enumerate(results):
        for seat, net in row["result"]["net"].items():
            name = names[row["partie"]][int(seat)]
            if name not in lines:
                lines[name] = [0] * i
            running[name] = running.get(name, 0) + net
        for name in lines:
            lines[name].append(running.get(name, 0))
    return lines


def chips_chart_svg(soiree: Soiree, *, title: str, width: int = 640,
                    height: int = 260) -> str:
    """The chips over the evening as an SVG line chart, drawn here (no script, no library)."""
    lines = chips_over_the_evening(soiree)
    hands = max((len(v) for v in lines.values()), default=0)
    values = [n for v in lines.values() for n in v] or [0]
    low, high = min(min(values), 0), max(max(values), 0)
    span = (high - low) or 1
    left, right, top, bottom = 40, 150, 24, 20
    plot_w, plot_h = width - left - right, height - top - bottom

    def x(i: int) -> float:
        return left + (plot_w * i / max(hands - 1, 1))

    def y(v: int) -> float:
        return top + plot_h * (high - v) / span

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
             f'role="img" aria-label="{escape(title)}" font-family="Georgia, serif" '
             f'font-size="12">',
             f'<title>{escape(title)}</title>',
             f'<line x1="{left}" y1="{y(0):.1f}" x2="{left + plot_w}" y2="{y(0):.1f}" '
             f'stroke="#999" stroke-dasharray="4 3"/>',
             f'<text x="{left - 6}" y="{y(high) + 4:.1f}" text-anchor="end">{high}</text>',
             f'<text x="{left - 6}" y="{y(low) + 4:.1f}" text-anchor="end">{low}</text>']
    ranked = sorted(lines.items(), key=lambda item: -item[1][-1] if item[1] else 0)
    for k, (name, points) in enumerate(ranked):
        colour = COLOURS[k % len(COLOURS)]
        start = hands - len(points)
        path = " ".join(f"{x(start + i):.1f},{y(v):.1f}" for i, v in enumerate(points))
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" '
                     f'points="{path}"/>')
        parts.append(f'<text x="{left + plot_w + 8}" y="{top + 14 * k + 10}" fill="{colour}">'
                     f'{escape(name)} {points[-1] if points else 0:+d}</text>')
    parts.append("</svg>")
    return "".join(parts)
