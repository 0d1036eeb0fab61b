"""The API answers in English unless the client names a language; the pages in French."""

from __future__ import annotations

from typing import Any

import pytest

pytestmark = pytest.mark.django_db


def test_the_api_speaks_english_to_a_program_and_french_to_who_asks(
        client: Any, django_user_model: Any) -> None:
    client.force_login(django_user_model.objects.create_user("ana"))

    plain = client.post("/api/parties/", {}, content_type="application/json")
    french = client.post("/api/parties/", {}, content_type="application/json",
                         HTTP_ACCEPT_LANGUAGE="fr")

    assert plain.json()["game"] == ["This field is required."]
    assert french.json()["game"] == ["Ce champ est obligatoire."]


def test_a_rule_s_refusal_is_given_in_the_reader_s_language(
        client: Any, django_user_model: Any) -> None:
    import uuid
    from datetime import timedelta

    from django.utils import timezone

    from games.services import partie_start, store

    ana = django_user_model.objects.create_user("ana")
    partie = partie_start(game="comet", players=[ana], bots=["heuristic"], at=timezone.now(),
                          move_timeout=timedelta(hours=1))
    hand = partie.hands.get()
    loaded = store.load(hand)
    mine = set(loaded.game.view(loaded.state, 0)["hand"])
    missing = next(c for c in ("2C", "3C", "4C", "5C", "6C") if c not in mine)
    client.force_login(ana)
    body = {"command_id": str(uuid.uuid4()), "seq": hand.last_seq,
            "move": {"type": "play", "card": missing}}

    english = client.post(f"/api/hands/{hand.pk}/moves", body, content_type="application/json")
    french = client.post(f"/api/hands/{hand.pk}/moves", body, content_type="application/json",
                         HTTP_ACCEPT_LANGUAGE="fr")

    assert english.status_code == french.status_code == 400
    assert english.json()["rule"] == french.json()["rule"]
    assert english.json()["detail"] != french.json()["detail"]
    assert ("vous" in french.json()["detail"] or "place" in french.json()["detail"]), \
        french.json()
