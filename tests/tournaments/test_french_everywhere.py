"""French everywhere an organiser or a player reads: every page of a played evening, seen by
its organiser, a player and an arbiter, and the form errors and API refusals they meet, hold no
English sentence of the catalogue whose French differs (frontend/locale/fr)."""

from __future__ import annotations

import re
import uuid
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from tournaments import arbitration, services

from .test_rulings import played as played  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db

PO = Path(settings.BASE_DIR) / "frontend" / "locale" / "fr" / "LC_MESSAGES" / "django.po"
#: A fragment of a sentence this long is English nobody writes in French by chance.
LONGEST = 18


def _catalogue() -> dict[str, str]:
    """msgid -> msgstr of the French catalogue (singular forms), read from the .po file."""
    entries: dict[str, str] = {}
    key, field, parts = None, None, {"msgid": [], "msgstr": []}
    for line in PO.read_text(encoding="utf-8").splitlines() + [""]:
        match = re.match(r'^(msgid|msgstr|msgstr\[0\]|msgid_plural|msgctxt) "(.*)"$', line)
        if match:
            field = {"msgstr[0]": "msgstr"}.get(match[1], match[1])
            if field == "msgid":
                parts = {"msgid": [], "msgstr": []}
            if field in parts:
                parts[field].append(match[2])
            continue
        if line.startswith('"') and field in parts:
            parts[field].append(line[1:-1])
            continue
        if not line.strip() and parts["msgid"]:
            key = "".join(parts["msgid"]).replace('\\"', '"').replace("\\n", "\n")
            value = "".join(parts["msgstr"]).replace('\\"', '"').replace("\\n", "\n")
            if key and value:
                entries[key] = value
            parts, field = {"msgid": [], "msgstr": []}, None
    return entries


def _english_fragments() -> dict[str, str]:
    """For each sentence whose French differs, its longest fragment between placeholders (a
    page shows it with the placeholders filled), when long enough to be telling."""
    found = {}
    for msgid, msgstr in _catalogue().items():
        if msgid == msgstr:
            continue
        pieces = re.split(r"%\([a-z_]+\)[sd]|\{[a-z_]+\}|%[sd]|<[^>]*>", msgid)
        longest = max(pieces, key=len).strip()
        if len(longest) >= LONGEST and " " in longest and longest not in msgstr:
            found[longest] = msgid
    return found


def _visible(html: str) -> str:
    """The page's text and its attributes' words, as a reader (or its script) meets them."""
    return unescape(re.sub(r"\s+", " ", html))


def _assert_french(what: str, text: str, fragments: dict[str, str]) -> None:
    english = sorted({msgid for fragment, msgid in fragments.items() if fragment in text})
    assert not english, f"{what} shows English: {english[:5]}"


def test_every_page_and_refusal_of_a_played_evening_is_french(played, client):  # noqa: F811
    fragments = _english_fragments()
    assert len(fragments) > 200  # the catalogue was read
    soiree, hand, alice = played["soiree"], played["hand"], played["alice"]
    organiser = soiree.club.memberships.get(role="organiser").user
    dispute = arbitration.dispute_open(hand=hand, user=alice, reason="une renonce",
                                       request_id=uuid.uuid4(), at=soiree.closed_at)
    arbitration.rule(dispute=dispute, arbiter=played["arbiter"], kind="void",
                     reason="donne nulle", request_id=uuid.uuid4(), at=soiree.closed_at)
    headers: dict[str, Any] = {"HTTP_ACCEPT_LANGUAGE": "fr-FR,fr;q=0.9"}

    pages = {
        organiser: ["/", "/soirees/new", f"/soirees/{soiree.pk}/", f"/soirees/{soiree.pk}/manage",
                    f"/soirees/{soiree.pk}/edit", f"/soirees/{soiree.pk}/room",
                    f"/soirees/{soiree.pk}/seating", f"/soirees/{soiree.pk}/results",
                    f"/soirees/{soiree.pk}/standings.csv", f"/soirees/{soiree.pk}/settlement.csv",
                    f"/clubs/{soiree.club_id}/members", "/accounts/password/change/"],
        alice: ["/", f"/soirees/{soiree.pk}/", f"/hands/{hand.pk}/", f"/hands/{hand.pk}/replay",
                f"/hands/{hand.pk}/audit", "/hands/"],
        played["arbiter"]: [f"/hands/{hand.pk}/audit"],
    }
    # The check sees English where there is some: the same page asked in English.
    client.force_login(organiser)
    english = _visible(client.get(f"/soirees/{soiree.pk}/manage",
                                  HTTP_ACCEPT_LANGUAGE="en").content.decode())
    assert any(fragment in english for fragment in fragments)
    for user, paths in pages.items():
        client.force_login(user)
        for path in paths:
            answer = client.get(path, **headers)
            assert answer.status_code == 200, path
            _assert_french(f"{path} for {user.username}", _visible(answer.content.decode()),
                           fragments)
    # A page refused and a page not found say so in French, with a way back.
    client.force_login(alice)
    for path, status in ((f"/soirees/{soiree.pk}/manage", 403), ("/nowhere/", 404)):
        answer = client.get(path, **headers)
        assert answer.status_code == status
        _assert_french(path, _visible(answer.content.decode()), fragments)

    # Signed out: the sign-in page and its error, the password reset.
    client.logout()
    for path in ("/accounts/login/", "/accounts/password/reset/"):
        _assert_french(path, _visible(client.get(path, **headers).content.decode()), fragments)
    wrong = client.post("/accounts/login/", {"username": alice.username, "password": "no"},
                        **headers)
    assert wrong.status_code == 200
    _assert_french("a wrong password", _visible(wrong.content.decode()), fragments)

    # The API's refusals, in the language the page asked for.
    client.force_login(organiser)
    refusals = [
        ("post", f"/api/soirees/{soiree.pk}/checkin", {"player": alice.username}),
        ("post", f"/api/soirees/{soiree.pk}/rebuy", {"player": "nobody", "request_id": "x"}),
        ("post", f"/api/soirees/{soiree.pk}/announcements", {"text": ""}),
        ("post", f"/api/soirees/{soiree.pk}/cancel", {}),
        ("post", "/api/soirees/", {"name": "x"}),
    ]
    for method, path, body in refusals:
        answer = getattr(client, method)(path, body, content_type="application/json", **headers)
        assert 400 <= answer.status_code < 500, (path, answer.status_code)
        _assert_french(f"{path} refused", answer.json().get("detail", "") if isinstance(
            answer.json().get("detail"), str) else str(answer.json()), fragments)
    client.force_login(played["arbiter"])
    effect = client.post(f"/api/disputes/{dispute.pk}/rulings/effect",
                         {"kind": "adjusted", "corrections": {alice.username: 5}},
                         content_type="application/json", **headers)
    assert effect.status_code == 400
    assert "totaliser zéro" in effect.json()["detail"]
    assert services.stack(soiree, alice).balance >= 0
