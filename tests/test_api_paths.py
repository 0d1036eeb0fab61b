"""The API's answers outside its views, and what its schema says of refusals."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from drf_spectacular.generators import SchemaGenerator

pytestmark = pytest.mark.django_db


@pytest.fixture
def client(organiser: Any) -> Client:
    client = Client()
    client.force_login(organiser)
    return client


def test_a_path_no_view_serves_gets_a_json_404_naming_it(client: Client) -> None:
    answer = client.get("/api/nothing/here")
    assert answer.status_code == 404
    assert answer["Content-Type"] == "application/json"
    assert answer.json() == {"error": "not_found", "detail": "no such API path: /api/nothing/here"}
    # Not the HTML page, nor Django's CSRF page for a POST.
    posted = Client(enforce_csrf_checks=True).post("/api/nothing/")
    assert posted.status_code == 404 and posted.json()["error"] == "not_found"


def test_a_missing_trailing_slash_is_redirected_or_named(client: Client) -> None:
    answer = client.get("/api/parties?x=1")
    assert answer.status_code == 301 and answer["Location"] == "/api/parties/?x=1"
    posted = client.post("/api/parties", {}, content_type="application/json")
    assert posted.status_code == 404
    assert posted.json()["detail"] == "no such API path: /api/parties (did you mean /api/parties/?)"


def test_a_format_no_renderer_writes_is_a_json_404(client: Client) -> None:
    answer = client.get("/api/parties/?format=xml")
    assert answer.status_code == 404
    assert answer["Content-Type"] == "application/json"
    assert answer.json()["error"] == "not_found"
    json = client.get("/api/parties/?format=json")
    assert json.status_code == 200 and json["Content-Type"] == "application/json"
    page = client.get("/api/parties/", HTTP_ACCEPT="text/html")  # DRF's browsable API
    assert page.status_code == 200 and page["Content-Type"].startswith("text/html")


def test_answers_are_drfs_json(client: Client) -> None:
    for accept in (None, "*/*", "application/json"):
        headers = {} if accept is None else {"HTTP_ACCEPT": accept}
        answer = client.get("/api/parties/", **headers)
        assert answer.status_code == 200, accept
        assert answer["Content-Type"] == "application/json", accept
        assert answer.json()["results"] == [], accept  # a page (config.pagination)
    refused = client.get("/api/parties/", HTTP_ACCEPT="image/png")
    assert refused.status_code == 406 and refused.json()["error"] == "not_acceptable"


#: Paths anyone may read, signed in or not: the schema, and the keys receipts are checked with.
PUBLIC = ("/api/schema/", "/api/keys")


def test_the_schema_documents_every_refusal() -> None:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    assert set(schema["components"]["schemas"]["Error"]["required"]) == {"error", "detail"}
    error = {"$ref": "#/components/schemas/Error"}
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            answers = operation["responses"]
            assert "400" in answers, (method, path)
            if path not in PUBLIC:
                assert {"401", "403"} <= set(answers), (method, path)
            if "{" in path:
                assert "404" in answers, (method, path)
            if method == "post":
                assert "409" in answers, (method, path)
            for code in ("400", "401", "403", "404", "409"):
                if code in answers:
                    assert answers[code]["content"]["application/json"]["schema"] == error
    moves = schema["paths"]["/api/hands/{hand_id}/moves"]["post"]["responses"]
    assert "201" in moves and "200" not in moves
    assert "409" in schema["paths"]["/api/hands/{hand_id}/record"]["get"]["responses"]
