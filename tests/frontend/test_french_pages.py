"""Every page, read in French, says nothing in English: no string of the French catalogue whose
French differs (an English msgid) reaches a French page, in its visible text, the words its
attributes carry (title, aria-label, the data-* phrases scripts show) or the JSON words blobs
it ships to its scripts (json_script). Each page is rendered through the test client as the
person who may see it: a player, the club's organiser, its auditor, a spectator, or nobody.

Only whole phrases count: an msgid is looked for when what it says besides its placeholders
has at least two words ("{name} plays {card}." is; "Table", "Comet" or "{n} chips" are not,
being names, French words too, or too short to tell). Placeholders match anything short, so
an English sentence is found with its values filled in, and a blob's raw phrase with its
``{name}`` left as it is."""

from __future__ import annotations

import ast
import json
import re
import uuid
from dataclasses import dataclass
from datetime import timedelta
from functools import cache
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from games.models import Hand
from games.services import casual_table_create, deadline_fire, partie_start, share_send
from tournaments.arbitration import dispute_open, rule
from tournaments.calendar import calendar_token_get
from tournaments.invitations import invitation_create
from tournaments.models import Membership, Season
from tournaments.services import (
    checkin,
    club_create,
    membership_add,
    registration_add,
    soiree_create,
    soiree_open,
)

pytestmark = pytest.mark.django_db

CATALOGUE = Path(__file__).resolve().parents[2] / "frontend" / "locale" / "fr" / "LC_MESSAGES"
FIELD = re.compile(r'^(msgctxt|msgid|msgid_plural|msgstr(?:\[\d+\])?) (".*")$')
#: What a phrase says besides its values: Python's, Django's and the scripts' placeholders.
PLACEHOLDER = re.compile(r"%\(\w+\)[sdif]|%[sdif]|\{\{?\s*\w*\s*\}?\}")
WORD = re.compile(r"[^\W\d_]{2,}")
#: English phrases that a French page may show as they are: none so far.
ALLOWED: frozenset[str] = frozenset()
PASSWORD = "pw-for-tests"


# -- The catalogue's English phrases, and where a text shows one ---------------------------------

def _po_entries(path: Path) -> list[dict[str, str]]:
    """The entries of a .po file (its header left out), their strings unquoted."""
    entries = []
    for block in path.read_text().split("\n\n"):
        fields: dict[str, str] = {}
        current = None
        for line in block.splitlines():
            if (found := FIELD.match(line)) is not None:
                current = found.group(1)
                fields[current] = ast.literal_eval(found.group(2))
            elif line.startswith('"') and current is not None:
                fields[current] += ast.literal_eval(line)
        if fields.get("msgid"):
            entries.append(fields)
    return entries


@dataclass(frozen=True)
class English:
    msgid: str
    #: The phrase with its values filled in (None: too short to tell from a French text).
    pattern: re.Pattern[str] | None
    #: The phrase as a script receives it, placeholders and all (None: it has none).
    raw: str | None


def _pattern(msgid: str) -> re.Pattern[str]:
    """``msgid`` as a regular expression: its placeholders match any short value, its spaces
    any spaces, and it neither starts nor ends inside a word."""
    parts = []
    for literal in PLACEHOLDER.split(" ".join(msgid.split())):
        parts.append("".join(r"\s+" if piece.isspace() else re.escape(piece)
                             for piece in re.split(r"(\s+)", literal) if piece))
    body = r".{1,120}?".join(parts)
    head = r"(?<!\w)" if re.match(r"\w", msgid.strip()) else ""
    tail = r"(?!\w)" if re.search(r"\w$", msgid.strip()) else ""
    return re.compile(head + body + tail, re.IGNORECASE)


@cache
def english_phrases() -> tuple[English, ...]:
    """The catalogues' msgids (singular and plural, pages' and scripts') that French says
    otherwise: looked for filled in when they say two words or more besides their
    placeholders, and as they are when they hold a placeholder and a word."""
    found: dict[str, English] = {}
    for name in ("django.po", "djangojs.po"):
        for entry in _po_entries(CATALOGUE / name):
            french = {v.casefold() for k, v in entry.items() if k.startswith("msgstr")}
            for msgid in filter(None, (entry.get("msgid"), entry.get("msgid_plural"))):
                if msgid.casefold() in french or msgid in ALLOWED:
                    continue
                words = len(WORD.findall(" ".join(PLACEHOLDER.split(msgid))))
                raw = " ".join(msgid.split()) if PLACEHOLDER.search(msgid) and words else None
                if words >= 2 or raw:
                    found[msgid] = English(msgid, _pattern(msgid) if words >= 2 else None, raw)
    return tuple(found.values())


def english_in(text: str) -> list[str]:
    """The English phrases of the catalogue that ``text`` shows (each line of it apart)."""
    return [e.msgid for e in english_phrases()
            if (e.pattern and e.pattern.search(text)) or (e.raw and e.raw in text)]


class _PageText(HTMLParser):
    """A page's words: its visible text, its attributes' words and its JSON blobs' strings."""

    ATTRIBUTES = {"title", "aria-label", "placeholder", "alt", "value", "label", "summary"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.text: list[str] = []
        self.lines: list[str] = []
        self.inside: str | None = None  # "script", "json" or "style" while in one

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            json_blob = tag == "script" and dict(attrs).get("type") == "application/json"
            self.inside = "json" if json_blob else tag
        self.lines += [value for name, value in attrs
                       if value and (name in self.ATTRIBUTES or name.startswith("data-"))]
        if tag in ("p", "div", "li", "br", "tr", "h1", "h2", "h3", "section", "option"):
            self.text.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self.inside = None

    def handle_data(self, data: str) -> None:
        if self.inside == "json":
            self.lines += _strings(json.loads(data))
        elif self.inside is None:
            self.text.append(data)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def page_words(html: str) -> str:
    """What a page says, one line per piece (its text, an attribute, a blob's string). Of a
    calendar feed, what a calendar app shows: its name and its events' titles."""
    if html.startswith("BEGIN:VCALENDAR"):
        return "\n".join(line.split(":", 1)[1] for line in html.splitlines()
                         if line.startswith(("NAME:", "X-WR-CALNAME:", "SUMMARY:",
                                             "DESCRIPTION:")))
    parser = _PageText()
    parser.feed(html)
    parser.close()
    pieces = "".join(parser.text).split("\n") + parser.lines
    return "\n".join(" ".join(piece.split()) for piece in pieces if piece.strip())


def test_the_check_finds_an_english_phrase_with_its_values_and_not_french() -> None:
    assert "{name} offers {card} to {to}." in english_in(
        "Voltaire offers the ten of hearts to Diderot.")
    assert english_in("Voltaire offre le dix de cœur à Diderot.") == []
    # A blob's raw phrase, placeholders and all; a script's data-* phrase.
    assert set(english_in(page_words(
        '<script type="application/json">{"a": ["{name} plays {card}."]}</script>'
        '<div data-x="Waiting for {names}."></div>'))) == {
        "{name} plays {card}.", "Waiting for {names}."}
    # Names and one-word phrases are not looked for; nor is a script's code.
    assert english_in(page_words(
        "<p>Comet · Table 3 · Audit</p><script>'Your turn'</script>")) == []


# -- Every page, in French ----------------------------------------------------------------------

def _played_out(hand: Hand) -> Hand:
    """The hand played to its end by its deadlines (the time-out rule, the bots), now."""
    for _ in range(500):
        hand.refresh_from_db()
        if hand.status == Hand.Status.OVER:
            return hand
        assert hand.deadline is not None, "the hand waits for nothing"
        deadline_fire(hand_id=hand.pk, seq=hand.last_seq, at=hand.deadline)
    raise AssertionError("the hand did not end")


@pytest.fixture
def club_evening(django_user_model: Any, organiser: Any) -> dict[str, Any]:
    """A club (olga organises it; alice and bruno play, arbitre audits) with a season; a soirée
    under way whose first hand alice and bruno played (alice sent her share) and alice disputed,
    and the arbiter ruled; a soirée to come that alice registered for; denis's casual table in
    play, and bruno's waiting for eve's answer; a Ma commère hand of bots only, which staff
    (sam) may see."""
    organiser.first_name, organiser.last_name = "Olga", "Lemaire"
    organiser.save()
    club = club_create(name="Cercle des Lumières", slug="lumieres", organiser=organiser)
    people = {name: django_user_model.objects.create_user(name, password=PASSWORD,
                                                          first_name=name.capitalize())
              for name in ("alice", "bruno", "arbitre", "denis", "eve")}
    for name in ("alice", "bruno", "arbitre"):
        membership_add(club=club, user=people[name], role=(
            Membership.Role.AUDITOR if name == "arbitre" else Membership.Role.PLAYER))
    today, now = timezone.localdate(), timezone.now()
    season = Season.objects.create(club=club, name="Saison d’hiver",
                                   starts_on=today - timedelta(days=9),
                                   ends_on=today + timedelta(days=90))
    soiree = soiree_create(club=club, name="Jeudi de la Comète", game="comet", starts_at=now,
                           ends_at=now + timedelta(hours=2), season=season,
                           move_timeout=timedelta(seconds=20), deals_per_partie=1,
                           pause_between_hands=timedelta(hours=1),
                           share_window=timedelta(seconds=3))
    for name in ("alice", "bruno"):
        checkin(soiree=soiree, user=people[name], at=now)
    (table,) = soiree_open(soiree=soiree, at=now)
    hand = table.partie.hands.get()
    share_send(hand_id=hand.pk, user=people["alice"], share="ab" * 32, at=now)
    hand = _played_out(hand)
    dispute = dispute_open(hand=hand, user=people["alice"], reason="Mon temps a expiré trop tôt.",
                           request_id=uuid.uuid4(), at=timezone.now(), event_seq=3)
    rule(dispute=dispute, arbiter=people["arbitre"], kind="stands", request_id=uuid.uuid4(),
         reason="Le temps de jeu était celui annoncé.", at=timezone.now())
    dispute_open(hand=hand, user=people["alice"], reason="Et la mise ?",
                 request_id=uuid.uuid4(), at=timezone.now())
    later = soiree_create(club=club, name="Mardi de Ma commère", game="commere",
                          starts_at=now + timedelta(days=5),
                          ends_at=now + timedelta(days=5, hours=3), season=season)
    registration_add(soiree=later, user=people["alice"])
    casual = casual_table_create(creator=people["denis"], game="comet", players=[people["denis"]],
                                 bots=["heuristic", "heuristic"], at=now,
                                 move_timeout=timedelta(minutes=5))
    casual_table_create(creator=people["bruno"], game="commere",
                        players=[people["bruno"], people["eve"]], bots=["heuristic"] * 2, at=now)
    bots_only = partie_start(game="commere", players=[], bots=["heuristic"] * 4, at=now,
                             options={"rounds": 1})
    return {"club": club, "season": season, "soiree": soiree, "later": later, "hand": hand,
            "casual": Hand.objects.get(partie=casual), "organiser": organiser,
            "commere": Hand.objects.get(partie=bots_only),
            "staff": django_user_model.objects.create_user("sam", is_staff=True), **people}


def _read(client: Client, path: str, *, post: dict[str, str] | None = None) -> tuple[int, str]:
    answer = (client.post(path, post, HTTP_ACCEPT_LANGUAGE="fr") if post is not None
              else client.get(path, HTTP_ACCEPT_LANGUAGE="fr"))
    return answer.status_code, answer.content.decode()


def test_no_french_page_shows_an_english_phrase_of_the_catalogue(club_evening: Any) -> None:
    e = club_evening
    soiree, later, hand, club, season = (e["soiree"], e["later"], e["hand"], e["club"],
                                         e["season"])
    _invitation, secret = invitation_create(club=club, by=e["organiser"], at=timezone.now())
    pages: dict[str, str] = {}
    statuses: dict[str, tuple[int, int]] = {}  # page: (status expected, status answered)

    def read_as(user: Any, paths: list[str | tuple[str, int]]) -> None:
        client = Client()
        if user is not None:
            client.force_login(user)
        for path in paths:
            path, expected = path if isinstance(path, tuple) else (path, 200)
            page = f"{user or 'nobody'} {path}"
            status, pages[page] = _read(client, path)
            statuses[page] = (expected, status)

    read_as(e["alice"], [
        "/", f"/soirees/{soiree.pk}/", f"/soirees/{later.pk}/", f"/soirees/{soiree.pk}/room",
        f"/soirees/{soiree.pk}/results",
        f"/soirees/{soiree.pk}/standings.csv", f"/soirees/{soiree.pk}/settlement.csv",
        f"/soirees/{soiree.pk}/chips.svg", f"/seasons/{season.pk}/",
        f"/seasons/{season.pk}/players/{e['alice'].pk}/",
        f"/seasons/{season.pk}/players/{e['alice'].pk}/rating.svg",
        f"/hands/{hand.pk}/audit", f"/hands/{hand.pk}/replay", f"/hands/{hand.pk}/",
        "/hands/", "/hands/?player=bruno&game=comet&disputed=1",
        "/accounts/password/change/", "/accounts/password/change/done/",
        (f"/soirees/{soiree.pk}/manage", 403), ("/soirees/999999/", 404),
        (f"/hands/{e['casual'].pk}/", 403), (f"/clubs/{club.pk}/members", 403),
        (f"/accounts/invitation/{secret}/", 200)])
    read_as(e["organiser"], [
        "/", "/soirees/new", f"/soirees/{later.pk}/edit", f"/soirees/{later.pk}/manage",
        f"/soirees/{soiree.pk}/manage", f"/soirees/{soiree.pk}/seating",
        f"/clubs/{club.pk}/members", f"/hands/{hand.pk}/audit",
        f"/calendar/{calendar_token_get(club=club, user=e['organiser'])}.ics"])
    read_as(e["arbitre"], ["/", "/hands/", f"/hands/{hand.pk}/audit",
                           f"/hands/{hand.pk}/replay", f"/hands/{hand.pk}/"])
    read_as(e["denis"], ["/", f"/hands/{e['casual'].pk}/", (f"/soirees/{soiree.pk}/", 403)])
    read_as(e["eve"], ["/"])
    read_as(e["staff"], ["/", "/hands/", f"/hands/{e['commere'].pk}/audit",
                         f"/hands/{e['commere'].pk}/replay", f"/hands/{e['casual'].pk}/"])
    read_as(None, [
        "/accounts/login/", "/accounts/password/reset/", "/accounts/password/reset/sent/",
        "/accounts/password/reset/MQ/set-password/", "/accounts/password/reset/done/",
        f"/accounts/invitation/{secret}/", ("/accounts/invitation/not-a-link/", 404),
        ("/nowhere/at/all", 404)])
    client = Client()  # forms refused, in French
    for page, path, post in [
            ("nobody login refused", "/accounts/login/",
             {"username": "alice", "password": "not-her-password"}),
            ("nobody sign-up refused", f"/accounts/invitation/{secret}/",
             {"username": "alice", "password1": "1234", "password2": "5678"}),
            ("olga new link", f"/clubs/{club.pk}/members", {"email": ""})]:
        if page.startswith("olga"):
            client.force_login(e["organiser"])
        status, pages[page] = _read(client, path, post=post)
        statuses[page] = (200, status)

    leaks = {page: found for page, html in pages.items() if (found := english_in(page_words(html)))}

    assert {page: s for page, s in statuses.items() if s[0] != s[1]} == {}
    assert leaks == {}
    # A table of bots started without a creator is named in French too.
    assert "free table" not in page_words(pages["sam /hands/"])
    # The same check finds the English of a page read in English.
    client.force_login(e["arbitre"])
    english = client.get(f"/hands/{hand.pk}/audit", HTTP_ACCEPT_LANGUAGE="en")
    assert len(english_in(page_words(english.content.decode()))) > 100
