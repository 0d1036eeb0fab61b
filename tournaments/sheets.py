"""A soirée's results to print and to keep: its standings, its settlement and its hands with
their verification digests, as CSV and as a PDF (fpdf2, pure Python: a fresh machine with only
Python makes it)."""

from __future__ import annotations

import csv
import io
from datetime import datetime
from pathlib import Path
from typing import Any

from django.core.paginator import Page, Paginator
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.functional import cached_property
from django.utils.html import escape
from django.utils.translation import gettext as _
from fpdf import FPDF

from games import selectors as game_selectors
from games.models import Hand

from .models import Soiree
from .selectors import CLUB, chart_read, paid_read, projection_hands, soiree_standings

#: The hands the results page lists at a time: a page of the sheet costs the same at the
#: evening's 50th hand as at its 5,000th. The PDF lists them all.
HANDS_PER_PAGE = 50


def _finished_hands(soiree: Soiree) -> QuerySet[Hand]:
    return (Hand.objects.filter(partie__soiree_table__soiree=soiree, status=Hand.Status.OVER)
            .select_related("partie__soiree_table")
            .order_by("partie__soiree_table__number", "partie__soiree_table__round", "number"))


def hands_of(soiree: Soiree) -> list[dict[str, Any]]:
    """Every finished hand of the evening, table by table, with the service's verdict on its
    record and its verification digest: the verdict the clock kept when the hand ended, or
    one made now for a hand it has not verified yet (``game_selectors.hand_verdict``)."""
    out = []
    # Columns, not model instances: a sheet of 5,000 hands spent most of its time building them.
    for pk, number, table, round_, verdict, last_hash in _finished_hands(soiree).values_list(
            "pk", "number", "partie__soiree_table__number", "partie__soiree_table__round",
            "verdict", "last_hash"):
        checked = game_selectors.verdict_of(hand_id=pk, verdict=verdict, last_hash=last_hash)
        out.append({"table": table, "partie": round_, "hand": number, "id": str(pk),
                    "ok": checked["ok"], "digest": checked["digest"]})
    return out


class _Counted(Paginator):
    """A paginator told how many there are (a stored count), rather than counting them."""

    def __init__(self, object_list: Any, per_page: int, *, count: int | None) -> None:
        super().__init__(object_list, per_page)
        self._count = count

    @cached_property
    def count(self) -> int:
        return super().count if self._count is None else self._count


def hands_page(soiree: Soiree, number: Any) -> Page[dict[str, Any]]:
    """A page of the evening's finished hands (``HANDS_PER_PAGE``, the first if ``number``
    is not one), each with its digest: the hash its record's chain ends with, as the hand's
    row keeps it. Verifying a record replays it (milliseconds a hand): the audit page does,
    for one hand, and the PDF for all of them; a page read many times does not."""
    page = _Counted(_finished_hands(soiree), HANDS_PER_PAGE,
                    count=projection_hands(soiree=soiree)).get_page(number)
    page.object_list = [{"table": hand.partie.soiree_table.number,
                         "partie": hand.partie.soiree_table.round, "hand": hand.number,
                         "id": str(hand.pk), "digest": hand.last_hash}
                        for hand in page.object_list]
    return page


def _csv_columns() -> dict[str, str]:
    """The CSV's headers, in the reader's language (the request's, or the site's)."""
    return {"rank": _("rank"), "player": _("player"), "name": _("name"), "kind": _("kind"),
            "net": _("net"), "hands_won": _("hands won"), "hands": _("hands"),
            "comets": _("Comets"), "tricons": _("tricons"), "buy_in": _("buy-in"),
            "rebuys": _("rebuys"), "final_chips": _("final chips"), "from": _("from"),
            "to": _("to"), "amount": _("amount")}


def standings_csv(soiree: Soiree) -> str:
    """The people's standings, then the club's bots apart (their kind says which)."""
    words = _csv_columns()
    columns = ("rank", "player", "name", "kind", "buy_in", "rebuys", "final_chips", "net",
               "hands_won", "hands", GAME_COLUMN.get(soiree.game, "comets"))
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow([words[k] for k in columns])
    for row in standings_rows(soiree):
        writer.writerow(["" if row[k] is None else row[k] for k in columns])
    return out.getvalue()


def settlement_lines(soiree: Soiree) -> list[dict[str, Any]]:
    """Who pays whom: the transfers shown at the close, then each correction a ruling added
    (never a rewrite), the parties by their names and the club as "the club"."""
    settlement = soiree.settlement or {}
    names = {row["player"]: row.get("name") or row["player"]
             for row in (soiree.standings or {}).get("players", [])}
    names[CLUB] = _("the club")

    def line(t: dict[str, Any], kind: str) -> dict[str, Any]:
        payer, payee = names.get(t["from"], t["from"]), names.get(t["to"], t["to"])
        values = {"payer": payer, "payee": payee, "amount": t["amount"]}
        if t["to"] == CLUB:
            text = _("%(payer)s pays the club %(amount)s") % values
        elif t["from"] == CLUB:
            text = _("The club pays %(payee)s %(amount)s") % values
        else:
            text = _("%(payer)s pays %(payee)s %(amount)s") % values
        return {"kind": kind, "from": payer, "to": payee, "amount": t["amount"],
                "at": t.get("at"), "text": text}

    return ([line(t, "transfer") for t in settlement.get("transfers", [])]
            + [line(t, "correction") for t in settlement.get("corrections", [])])


def settlement_csv(soiree: Soiree) -> str:
    words = _csv_columns()
    kinds = {"transfer": _("transfer"), "correction": _("correction after a ruling")}
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow((words["from"], words["to"], words["amount"], words["kind"]))
    for t in settlement_lines(soiree):
        writer.writerow((t["from"], t["to"], t["amount"], kinds[t["kind"]]))
    return out.getvalue()


#: The PDF's fonts (DejaVu, tournaments/fonts/README.md): fpdf2's core fonts hold Latin-1
#: only, and a French sheet needs its dashes and quotes.
FONTS = Path(__file__).resolve().parent / "fonts"
#: Each game's own counted column of the standings (RULES.md: a Comet at Comet, a tricon at
#: Ma commère); the other game's is never shown.
GAME_COLUMN = {"comet": "comets", "commere": "tricons"}


def standings_rows(soiree: Soiree) -> list[dict[str, Any]]:
    """The people's standings with each one's rank, buy-in, rebuys and final chips (buy-in +
    rebuys + net), then the club's bots apart (``kind`` "bot", no rank): a bot plays the
    club's chips, with neither buy-in nor rebuy (``None``)."""
    standings = soiree_standings(soiree=soiree) or {}
    paid = paid_read(soiree=soiree)
    rows = []
    for rank, row in enumerate(standings.get("players", []), start=1):
        buy_in, rebuys = paid.get(row["player"], (None, None))
        final = None if buy_in is None else buy_in + (rebuys or 0) + row["net"]
        rows.append({**row, "name": row.get("name") or row["player"], "rank": rank,
                     "kind": _("person"), "buy_in": buy_in, "rebuys": rebuys,
                     "final_chips": final})
    for row in standings.get("bots", []):
        rows.append({**row, "name": row.get("name") or row["player"], "rank": None,
                     "kind": _("bot of the club"), "buy_in": None, "rebuys": None,
                     "final_chips": None})
    return rows


def _unicode_pdf() -> FPDF:
    pdf = FPDF(format="A4")
    pdf.add_font("DejaVu", "", FONTS / "DejaVuSans.ttf")
    pdf.add_font("DejaVu", "B", FONTS / "DejaVuSans-Bold.ttf")
    pdf.add_font("DejaVuMono", "", FONTS / "DejaVuSansMono.ttf")
    pdf.set_auto_page_break(auto=True, margin=15)
    return pdf


def _span(start: datetime | None, end: datetime | None, zone: Any) -> str:
    if start is None:
        return "–"
    first = timezone.localtime(start, zone)
    last = "…" if end is None else f"{timezone.localtime(end, zone):%H:%M}"
    return f"{first:%d/%m/%Y %H:%M}–{last}"


#: The sheet's words where the caller gives none (frontend.results gives them translated).
PDF_WORDS = {"rank": "rank", "buy_in": "buy-in", "rebuys": "rebuys", "final_chips": "final chips",
             "table": "table", "partie": "partie", "hand": "hand", "verified": "verified",
             "digest": "digest", "id": "hand id", "planned": "planned", "actual": "actual",
             "status": "", "correction": "correction after a ruling", "verified_how": ""}


def results_pdf(soiree: Soiree, *, words: dict[str, str]) -> bytes:
    """The results sheet: ``words`` are its headings, in the reader's language."""
    words = {**PDF_WORDS, **words}
    pdf = _unicode_pdf()
    pdf.add_page()
    pdf.set_font("DejaVu", "B", 16)
    pdf.multi_cell(0, 9, soiree.name, new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("DejaVu", size=10)
    zone = soiree.club.zone()
    facts = [soiree.club.name, soiree.get_game_display(), words["status"]]
    pdf.cell(0, 6, " — ".join(f for f in facts if f), new_x="LMARGIN", new_y="NEXT")
    pdf.cell(0, 6, f"{words['planned']} : {_span(soiree.starts_at, soiree.ends_at, zone)}",
             new_x="LMARGIN", new_y="NEXT")
    pdf.cell(0, 6, f"{words['actual']} : {_span(soiree.opened_at, soiree.closed_at, zone)}",
             new_x="LMARGIN", new_y="NEXT")

    def heading(text: str) -> None:
        pdf.ln(4)
        pdf.set_font("DejaVu", "B", 12)
        pdf.cell(0, 8, text, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("DejaVu", size=9)

    heading(words["standings"])
    columns = ("rank", "player", "buy_in", "rebuys", "final_chips", "net", "hands_won", "hands",
               GAME_COLUMN.get(soiree.game, "comets"))
    widths = (10, 38, 13, 17, 27, 13, 30, 16, 20)
    aligns = ("RIGHT", "LEFT", *["RIGHT"] * 7)
    pdf.set_font("DejaVu", size=8.5)
    with pdf.table(col_widths=widths, text_align=aligns, first_row_as_headings=True) as table:
        table.row([words[k] for k in columns])
        for row in standings_rows(soiree):
            table.row(["–" if row[k] is None else str(row[k])
                       for k in ("rank", "name", *columns[2:])])
    heading(words["settlement"])
    lines = settlement_lines(soiree)
    if not lines:
        pdf.cell(0, 6, words["nothing"], new_x="LMARGIN", new_y="NEXT")
    for t in lines:
        text = t["text"]
        if t["kind"] == "correction":
            text = f"{words['correction']} : {text}"
        pdf.cell(0, 6, text, new_x="LMARGIN", new_y="NEXT")
    heading(words["hands_section"])
    if words.get("verified_how"):
        pdf.multi_cell(0, 5, words["verified_how"], new_x="LMARGIN", new_y="NEXT")
    pdf.set_font("DejaVuMono", size=6.5)
    # Fixed-width columns in a fixed-width font: each field right-aligned to the widest of its
    # heading and its values, so that partie 10 and hand 100 stay in line.
    hands = hands_of(soiree)
    fields = [("table", [str(h["table"]) for h in hands]),
              ("partie", [str(h["partie"]) for h in hands]),
              ("hand", [str(h["hand"]) for h in hands]),
              ("verified", ["OK" if h["ok"] else "✗" for h in hands]),
              ("digest", [h["digest"] or "–" for h in hands]),
              ("id", [h["id"] for h in hands])]
    sizes = [max([len(words[k]), *map(len, values)]) for k, values in fields]

    def line(cells: list[str]) -> None:
        text = "  ".join(c.rjust(n) if i < 4 else c.ljust(n)
                         for i, (c, n) in enumerate(zip(cells, sizes, strict=True)))
        pdf.cell(0, 3.6, text.rstrip(), new_x="LMARGIN", new_y="NEXT")

    line([words[k] for k, _ in fields])
    for i in range(len(hands)):
        line([values[i] for _, values in fields])
    return bytes(pdf.output())


#: The chart's lines, one colour a player (repeated beyond ten).
COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b",
           "#e377c2", "#7f7f7f", "#bcbd22")


def chips_over_the_evening(soiree: Soiree) -> dict[str, list[int]]:
    """Each player's net chips over the evening (its read model, ``chart_read``): a point at
    the end of every stretch of it in which a hand ended or a ruling moved chips, the lines
    ending at the standings' nets. The hands stay as they were played, a voided one too; a
    ruling's chips move the lines at its time (after the close: at the end)."""
    return chart_read(soiree=soiree)


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
    standings = soiree_standings(soiree=soiree) or {}
    names = {r["player"]: r.get("name") or r["player"]
             for r in standings.get("players", []) + standings.get("bots", [])}
    for k, (player, points) in enumerate(ranked):
        name = names.get(player, player)
        colour = COLOURS[k % len(COLOURS)]
        start = hands - len(points)
        path = " ".join(f"{x(start + i):.1f},{y(v):.1f}" for i, v in enumerate(points))
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" '
                     f'points="{path}"/>')
        parts.append(f'<text x="{left + plot_w + 8}" y="{top + 14 * k + 10}" fill="{colour}">'
                     f'{escape(name)} {points[-1] if points else 0:+d}</text>')
    parts.append("</svg>")
    return "".join(parts)
