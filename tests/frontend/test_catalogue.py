"""The French catalogue: every message of the pages is translated, none is left fuzzy, and the
compiled catalogue (django.mo, committed: a fresh machine has no msgfmt) says what django.po
says, so that an edit of the .po is not forgotten by compilemessages."""

from __future__ import annotations

import ast
import gettext
import re
from pathlib import Path

import pytest

CATALOGUE = Path(__file__).resolve().parents[2] / "frontend" / "locale" / "fr" / "LC_MESSAGES"
FIELD = re.compile(r'^(msgctxt|msgid|msgid_plural|msgstr(?:\[\d+\])?) (".*")$')


def _entries() -> list[dict[str, object]]:
    """The .po's entries (the header left out): their fields, strings unquoted, and flags."""
    entries = []
    for block in (CATALOGUE / "django.po").read_text().split("\n\n"):
        fields: dict[str, str] = {}
        flags: list[str] = []
        current = None
        for line in block.splitlines():
            if line.startswith("#,"):
                flags += [f.strip() for f in line[2:].split(",")]
            elif (found := FIELD.match(line)) is not None:
                current = found.group(1)
                fields[current] = ast.literal_eval(found.group(2))
            elif line.startswith('"') and current is not None:
                fields[current] += ast.literal_eval(line)
        if fields.get("msgid"):
            entries.append({**fields, "flags": flags})
    return entries


def test_every_message_is_translated_and_none_is_fuzzy() -> None:
    entries = _entries()
    untranslated = [e["msgid"] for e in entries
                    if any(not v for k, v in e.items() if k.startswith("msgstr"))]
    fuzzy = [e["msgid"] for e in entries if "fuzzy" in e["flags"]]

    assert len(entries) > 50
    assert untranslated == [] and fuzzy == []


def test_the_compiled_catalogue_says_what_the_po_says() -> None:
    with (CATALOGUE / "django.mo").open("rb") as compiled:
        catalog = gettext.GNUTranslations(compiled)._catalog  # type: ignore[attr-defined]

    stale = []
    for entry in _entries():
        key = (f"{entry['msgctxt']}\x04{entry['msgid']}" if "msgctxt" in entry
               else entry["msgid"])
        if "msgid_plural" in entry:
            wanted = {(key, n): entry[f"msgstr[{n}]"] for n in (0, 1)}
        else:
            wanted = {key: entry["msgstr"]}
        stale += [k for k, v in wanted.items() if catalog.get(k) != v]

    assert stale == [], "run manage.py compilemessages"


@pytest.mark.django_db
def test_the_scripts_count_with_french_plurals(client) -> None:
    """ngettext in the pages' scripts (Django's JavaScript catalogue): one and many, in the
    French way (0 and 1 singular)."""
    french = client.get("/jsi18n/", HTTP_ACCEPT_LANGUAGE="fr").content.decode()
    assert "%(n)s tables en jeu" in french and "%(n)s table en jeu" in french
    assert "n > 1" in french.replace(" ", " ")
    english = client.get("/jsi18n/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "tables en jeu" not in english
