"""Club staff read the admin site in French: every page of the tournaments, ledger and games
models (each list, each add form, each object's page), its actions' pages and its messages show
none of the English labels and sentences of those apps' admin and models whose French differs
(frontend/locale/fr), and the same page asked in English is in English."""

from __future__ import annotations

import ast
import re
import uuid
from datetime import date
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps
from django.conf import settings
from django.contrib import admin
from django.db import models
from django.urls import reverse
from django.utils import translation
from django.utils.text import capfirst

from games import signing
from games.models import Hand
from tests.tournaments.conftest import clock as clock  # noqa: F401  (the fixtures)
from tests.tournaments.conftest import club as club  # noqa: F401
from tests.tournaments.conftest import members as members  # noqa: F401
from tests.tournaments.test_french_everywhere import (
    _assert_french,
    _catalogue,
    _english_fragments,
)
from tests.tournaments.test_rulings import played as played  # noqa: F401
from tournaments import arbitration
from tournaments.models import Season

pytestmark = pytest.mark.django_db

APPS = ("tournaments", "ledger", "games")
SOURCES = [Path(settings.BASE_DIR) / app / f"{module}.py"
           for app in APPS for module in ("admin", "models")]
FR = {"HTTP_ACCEPT_LANGUAGE": "fr-FR,fr;q=0.9"}


def _msgids() -> set[tuple[str | None, str]]:
    """(context, msgid) of every literal the three apps' admin and models translate."""
    found = set()
    for path in SOURCES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
                continue
            texts = [a.value for a in node.args if isinstance(a, ast.Constant)]
            if node.func.id in ("_", "gettext", "gettext_lazy") and len(texts) == 1:
                found.add((None, texts[0]))
            elif node.func.id in ("pgettext", "pgettext_lazy") and len(texts) == 2:
                found.add((texts[0], texts[1]))
    return found


def _french(context: str | None, msgid: str) -> str:
    with translation.override("fr"):
        return (translation.pgettext(context, msgid) if context
                else translation.gettext(msgid))


def _registered() -> list[type[models.Model]]:
    return [model for label in APPS for model in apps.get_app_config(label).get_models()
            if admin.site.is_registered(model)]


def _choice_labels() -> set[str]:
    """The labels of the registered models' choices (and their inlines'): English words the
    admin shows as values, not the labels checked here."""
    shown = set(_registered())
    for model in list(shown):
        shown |= {inline.model for inline in admin.site.get_model_admin(model).inlines}
    return {str(label).lower() for model in shown for field in model._meta.get_fields()
            if getattr(field, "choices", None) for _, label in field.flatchoices}


def _english_labels() -> set[str]:
    """The short labels (a word or a few) whose French differs, as the admin writes them."""
    labels = set()
    skip = _choice_labels()
    for context, msgid in _msgids():
        if len(msgid) < 40 and _french(context, msgid) != msgid and msgid.lower() not in skip:
            labels.add(msgid)
    return labels


def _text(html: str) -> str:
    """What a reader sees of the page: its text, without the markup and scripts."""
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    return unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]*>", "\n", html)))


def _nodes(html: str) -> set[str]:
    """Each piece of text between two tags, with the admin's ' :' and 'Par ' taken off."""
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S)
    nodes = set()
    for piece in re.split(r"<[^>]*>", html):
        text = unescape(piece).strip().rstrip(":").strip()
        if text:
            nodes.update({text, text.removeprefix("Par ").strip()})
    return nodes


def _assert_no_english_label(what: str, html: str, labels: set[str]) -> None:
    nodes, text = _nodes(html), _text(html).lower()
    shown = sorted(
        label for label in labels
        if label in nodes or capfirst(label) in nodes
        or (" " in label and re.search(rf"(?<![\w-]){re.escape(label.lower())}(?![\w-])", text)))
    assert not shown, f"{what} shows English: {shown[:8]}"


@pytest.fixture
def everything(played: dict[str, Any]) -> dict[str, Any]:  # noqa: F811
    """One object at least of each registered model: the played soirée's club, members,
    registrations, tables, hands and books, a season, a ruled dispute and the signing key."""
    soiree = played["soiree"]
    Season.objects.create(club=soiree.club, name="Saison d'hiver",
                          starts_on=date(2031, 1, 1), ends_on=date(2031, 6, 30))
    dispute = arbitration.dispute_open(hand=played["hand"], user=played["alice"],
                                       reason="une renonce", request_id=uuid.uuid4(),
                                       at=soiree.closed_at)
    arbitration.rule(dispute=dispute, arbiter=played["arbiter"], kind="void",
                     reason="donne nulle", request_id=uuid.uuid4(), at=soiree.closed_at)
    signing.publish_current_key()
    return {**played, "dispute": dispute}


def test_the_catalogue_has_every_admin_label_and_message_in_french():
    msgids = _msgids()
    assert len(msgids) > 200  # the sources were read
    catalogued = set(_catalogue())
    missing = sorted(m for c, m in msgids if _french(c, m) == m and m not in catalogued)
    assert not missing, f"not in the French catalogue: {missing[:8]}"
    assert _french("players' club", "club") == "club"  # not the suit of cards


def test_every_admin_page_of_the_three_apps_is_french(everything, admin_client):
    labels, fragments = _english_labels(), _english_fragments()
    assert {"move timeout", "buy-in", "Grant or withdraw chips", "status"} <= labels
    registered = _registered()
    assert len(registered) >= 10

    for model in registered:
        info = f"admin:{model._meta.app_label}_{model._meta.model_name}"
        obj = model._default_manager.order_by("pk").first()
        assert obj is not None, f"no {model.__name__} to show"
        pages = {"changelist": (reverse(f"{info}_changelist"), {200}),
                 "add": (reverse(f"{info}_add"), {200, 302, 403}),
                 "change": (reverse(f"{info}_change", args=[obj.pk]), {200})}
        for kind, (url, statuses) in pages.items():
            answer = admin_client.get(url, **FR)
            assert answer.status_code in statuses, (model.__name__, kind, answer.status_code)
            if answer.status_code == 200:
                page = answer.content.decode()
                _assert_no_english_label(f"{model.__name__} {kind}", page, labels)
                _assert_french(f"{model.__name__} {kind}", _text(page), fragments)

    # The actions' own pages: a hand's verification, granting chips to a player or to wallets.
    hand = Hand.objects.filter(status=Hand.Status.OVER).first()
    wallet = everything["alice"].chip_accounts.first()
    others = {
        "verification": admin_client.get(reverse("admin:games_hand_verify", args=[hand.pk]),
                                         **FR),
        "grant": admin_client.get(reverse("admin:ledger_account_grant"), **FR),
        "grant action": admin_client.post(
            reverse("admin:ledger_account_changelist"),
            {"action": "grant_or_withdraw_chips", "_selected_action": [wallet.pk]}, **FR),
    }
    for what, answer in others.items():
        assert answer.status_code == 200, what
        page = answer.content.decode()
        _assert_no_english_label(what, page, labels)
        _assert_french(what, _text(page), fragments)
    assert "Vérification de la donne" in others["verification"].content.decode()
    assert "Accorder ou retirer des jetons" in others["grant action"].content.decode()


def test_the_soiree_page_and_its_actions_speak_french_and_english_on_request(everything,
                                                                            admin_client):
    soiree, labels = everything["soiree"], _english_labels()
    url = reverse("admin:tournaments_soiree_change", args=[soiree.pk])

    page = admin_client.get(url, **FR).content.decode()
    for french in ("Temps pour jouer", "Délai de contestation", "Niveau des robots", "Cave",
                   "Classement", "Règlement", "Inscriptions", "Pointage"):
        assert french in page, french
    listing = admin_client.get(reverse("admin:tournaments_soiree_changelist"), **FR)
    assert "Pointer tous les inscrits (chacun reçoit sa cave)" in listing.content.decode()
    # The choices too: the soirée's status, its club's roles, the ledger's kinds of account.
    assert "terminée" in listing.content.decode() and ">closed<" not in listing.content.decode()
    members = admin_client.get(reverse("admin:tournaments_membership_changelist"), **FR)
    assert "arbitre" in members.content.decode()
    accounts = admin_client.get(reverse("admin:ledger_account_changelist"), **FR)
    assert "Portefeuille de joueur" in accounts.content.decode()

    # The same page asked in English is in English: the check above would see it.
    english = admin_client.get(url, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Move timeout" in english and "Buy-in" in english
    with pytest.raises(AssertionError):
        _assert_no_english_label("the page in English", english, labels)

    # An action refused says so in French: the soirée is closed, it opens no more.
    answer = admin_client.post(reverse("admin:tournaments_soiree_changelist"),
                               {"action": "open_now", "_selected_action": [soiree.pk]},
                               follow=True, **FR)
    assert answer.status_code == 200
    shown = [str(m) for m in answer.context["messages"]]
    assert shown and all(m.startswith(f"{soiree} : ") for m in shown), shown
    _assert_french("the refused opening", " ".join(shown), _english_fragments())

    # The disputes' list says how each was ruled, in French.
    disputes = admin_client.get(reverse("admin:tournaments_dispute_changelist"), **FR)
    assert "décidé : la donne est annulée" in disputes.content.decode()
