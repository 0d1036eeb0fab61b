"""The quick content negotiation (config/negotiation.py) gives DRF's own answer."""

from __future__ import annotations

import pytest
from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BrowsableAPIRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.test import APIRequestFactory

from config.negotiation import ContentNegotiation

ACCEPTS = [None, "*/*", "application/json", "text/html", "application/json; indent=4",
           "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
           "application/*", "application/json, */*", "", "image/png", "APPLICATION/JSON"]


def _answer(negotiation: DefaultContentNegotiation, accept: str | None, query: str,
            suffix: str | None) -> tuple[str, str] | str:
    headers = {} if accept is None else {"HTTP_ACCEPT": accept}
    request = Request(APIRequestFactory().get("/api/hands/" + query, **headers))
    try:
        renderer, media_type = negotiation.select_renderer(
            request, [JSONRenderer(), BrowsableAPIRenderer()], suffix)
    except NotAcceptable:
        return "406"
    return type(renderer).__name__, media_type


@pytest.mark.parametrize("accept", ACCEPTS)
@pytest.mark.parametrize("query", ["", "?format=api", "?format=json", "?page=2"])
@pytest.mark.parametrize("suffix", [None, "api"])
def test_the_quick_negotiation_answers_as_drf_does(accept, query, suffix):
    assert (_answer(ContentNegotiation(), accept, query, suffix)
            == _answer(DefaultContentNegotiation(), accept, query, suffix))


def test_the_usual_requests_skip_the_parsing(monkeypatch):
    def parsed(*args, **kwargs):
        raise AssertionError("parsed")

    monkeypatch.setattr(DefaultContentNegotiation, "select_renderer", parsed)
    for accept in (None, "*/*", "application/json"):
        assert _answer(ContentNegotiation(), accept, "", None) == ("JSONRenderer",
                                                                  "application/json")
    with pytest.raises(AssertionError):
        _answer(ContentNegotiation(), "text/html", "", None)
