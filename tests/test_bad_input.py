"""What a careless or hostile client sends the API is refused with a JSON answer that names the
problem, never a 500: JSON nested too deep (a RecursionError before), a body too large (Django's
HTML 400 before), a lone surrogate (its echo in the message failed to render), and amounts no
column holds (an OverflowError on an int4 column before)."""

from __future__ import annotations

import io
import json
import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework import exceptions as drf
from rest_framework.renderers import JSONRenderer

from config.exceptions import encodable, exception_handler
from config.parsers import MAX_DEPTH, BodyTooLarge, JSONParser, _nesting
from games.models import Partie
from tournaments.errors import SoireeError
from tournaments.models import Soiree
from tournaments.services import club_create, soiree_check

pytestmark = pytest.mark.django_db

DEEP = "[" * 1000 + "]" * 1000
NO_HAND = uuid.UUID(int=1)
ENDPOINTS = ["/api/parties/", "/api/soirees/", f"/api/hands/{NO_HAND}/moves"]


@pytest.fixture
def client(organiser: Any) -> Client:
    club_create(name="Cercle", slug="cercle", organiser=organiser)
    c = Client()
    c.force_login(organiser)
    return c


def _post(client: Client, url: str, body: str | bytes) -> Any:
    return client.post(url, body, content_type="application/json")


@pytest.mark.parametrize("url", ENDPOINTS)
@pytest.mark.parametrize("body", [DEEP, '{"options": ' + "{\"a\": " * 500 + "1" + "}" * 501])
def test_json_nested_too_deep_is_a_400_that_says_so(client: Client, url: str,
                                                    body: str) -> None:
    answer = _post(client, url, body)

    assert answer.status_code == 400
    assert answer["Content-Type"] == "application/json"
    assert answer.json()["error"] == "too_deep"
    assert f"at most {MAX_DEPTH}" in answer.json()["detail"]


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    assert _nesting(json.dumps({"table_label": "[" * 100, "x": ["\\\"[{"]})) == 2
    assert _nesting(json.dumps([[[]]])) == 3


@pytest.mark.parametrize("url", ENDPOINTS)
def test_a_body_over_the_limit_is_the_apis_json_413(client: Client, url: str,
                                                    settings: Any) -> None:
    body = json.dumps({"table_label": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 1)})

    answer = _post(client, url, body)

    assert answer.status_code == 413
    assert answer.json()["error"] == "too_large"
    assert str(settings.DATA_UPLOAD_MAX_MEMORY_SIZE) in answer.json()["detail"]
    assert not Partie.objects.exists() and not Soiree.objects.exists()


def test_a_body_without_a_length_is_read_only_up_to_the_limit(settings: Any) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100
    stream = io.BytesIO(b'{"a": "' + b"x" * 1000 + b'"}')

    with pytest.raises(BodyTooLarge):
        JSONParser().parse(stream, "application/json", {})
    assert stream.tell() == 101
    assert JSONParser().parse(io.BytesIO(b'{"a": 1}'), "application/json", {}) == {"a": 1}


def _soiree_body(**fields: Any) -> dict[str, Any]:
    now = timezone.now()
    return {"club": "cercle", "name": "Jeudi", "game": "commere",
            "starts_at": (now + timedelta(hours=1)).isoformat(),
            "ends_at": (now + timedelta(hours=3)).isoformat(), **fields}


@pytest.mark.parametrize(("url", "body"), [
    (ENDPOINTS[2], '{"command_id": "' + str(NO_HAND) + '", "seq": 0, "move": {"type": "\\ud800"}}'),
    ("/api/parties/", '{"game": "\\ud800", "players": []}'),
    ("/api/parties/", '{"game": "comet", "players": [], "table_label": "\\udfff"}'),
    ("/api/soirees/", json.dumps(_soiree_body())[:-1] + ', "bot_kind": "\\ud800"}'),
    ("/api/soirees/", json.dumps(_soiree_body())[:-1] + ', "\\ud800": 1}'),
])
def test_a_lone_surrogate_is_refused_with_an_answer_that_renders(client: Client, url: str,
                                                                 body: str) -> None:
    answer = _post(client, url, body)

    assert answer.status_code == 400
    assert answer.json()["error"] == "invalid_text"
    assert "lone UTF-16 surrogate" in answer.json()["detail"]
    answer.content.decode("utf-8")  # nothing in it that is not text
    assert not Partie.objects.exists() and not Soiree.objects.exists()


def test_the_exception_handler_never_answers_text_that_cannot_be_encoded() -> None:
    # Whatever raised it: a serializer's message that quotes the client's value, a key.
    exc = drf.ValidationError({"game": ['"\ud800" is not a valid choice.'], "\udfff": ["x"]})

    answer = exception_handler(exc, {})

    assert answer is not None and answer.status_code == 400
    rendered = JSONRenderer().render(answer.data).decode("utf-8")
    assert "\\\\ud800" in rendered and "\\\\udfff" in rendered
    assert encodable({"ok": ["é", 3]}) == {"ok": ["é", 3]}


@pytest.mark.parametrize(("options", "words"), [
    ({"comet_payment": 1e20}, "'comet_payment' must be a whole number from 0 to 1000, not 1e+20"),
    ({"comet_payment": 10**30}, "'comet_payment' must be a whole number from 0 to 1000"),
    ({"ante": 2.5}, "'ante' must be a whole number from 0 to 1000, not 2.5"),
    ({"per_card": True}, "'per_card' must be a whole number"),
    ({"per_card": "lots"}, "'per_card' must be a whole number from 0 to 1000, not str"),
    ({"deals": 1e30}, "'deals' must be a whole number from 1 to 100 or null"),
    ({"deals": 0}, "'deals' must be a whole number from 1 to 100 or null, not 0"),
])
def test_a_partie_option_out_of_bounds_is_a_400_naming_it(client: Client, options: Any,
                                                          words: str) -> None:
    body = {"game": "comet", "players": ["olga"], "bots": ["random"], "options": options}

    answer = client.post("/api/parties/", body, content_type="application/json")

    assert answer.status_code == 400, answer.content
    assert words in answer.json()["options"][0]
    assert not Partie.objects.exists()


@pytest.mark.parametrize(("fields", "field", "words"), [
    ({"game": "commere", "options": {"max_turns": 10**12}}, "options",
     "'max_turns' must be a whole number from 0 to 100 or null"),
    ({"game": "commere", "options": {"ante": 10**30}}, "options", "'ante'"),
    ({"buy_in": 10**20}, "buy_in", "less than or equal to 1000000"),
    ({"deals_per_partie": 101}, "deals_per_partie", "less than or equal to 100"),
    ({"move_timeout": float("inf")}, "move_timeout", "valid number"),
])
def test_a_soiree_amount_out_of_bounds_is_a_400_naming_it(client: Client, fields: Any,
                                                          field: str, words: str) -> None:
    answer = client.post("/api/soirees/", json.dumps(_soiree_body(**fields)).replace(
        "Infinity", "1e400"), content_type="application/json")

    assert answer.status_code == 400, answer.content
    assert words in str(answer.json()[field])
    assert not Soiree.objects.exists()


def test_the_soiree_service_keeps_the_games_option_bounds(organiser: Any) -> None:
    now = timezone.now()

    with pytest.raises(SoireeError, match="The option comet_payment is at most 1000"):
        soiree_check(starts_at=now, ends_at=now + timedelta(hours=1), game="comet",
                     options={"comet_payment": 5000}, move_timeout=timedelta(seconds=5),
                     bot_kind="random")
