"""Refuse a request that carries a NUL character in its query or its cookies.

PostgreSQL's text cannot hold NUL (0x00). A cookie is read before any view validates anything:
a session cookie holding one went to the database as the session key and failed there with a
500 (found by schemathesis). No query parameter or cookie of this service may hold one, so the
request is refused first, with a 400 that names the parameter or cookie. Form and JSON fields
are the serializers' business (DRF's and Django's character fields refuse NUL already), and
Basic credentials the authentication backend's (tournaments.auth).

A ``MiddlewareMixin``, so that an ASGI server (daphne) runs it without a thread switch.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.utils.deprecation import MiddlewareMixin

from config.renderers import json_answer

NUL = "\x00"
#: The charsets in which a query's NUL can only be spelt as itself or ``%00``.
PLAIN_CHARSETS = ("utf-8", "utf8")


def nul_in(request: HttpRequest) -> tuple[str, str] | None:
    """What of the request holds a NUL character: ``("query parameter", name)`` or
    ``("cookie", name)``; ``None`` if nothing.

    The raw query and cookie header are looked at first, and parsed only if they may hold one
    (parsing every request's query cost about 10 µs): in UTF-8 a NUL reaches the parsed query
    only as itself or as ``%00``, and a cookie only as itself or as the octal escape ``\\000``
    of a quoted value. A request that names another charset (Django then decodes its query
    with it: in UTF-7, ``+AAA-`` is a NUL) is always parsed."""
    query = request.META.get("QUERY_STRING", "")
    cookies = request.META.get("HTTP_COOKIE", "")
    plain = request.encoding is None or request.encoding.lower() in PLAIN_CHARSETS
    if plain and not (NUL in query or "%00" in query or NUL in cookies or "\\000" in cookies):
        return None
    for name, values in request.GET.lists():
        if NUL in name or any(NUL in value for value in values):
            return "query parameter", name
    for name, value in request.COOKIES.items():
        if NUL in name or NUL in value:
            return "cookie", name
    return None


class RefuseNulMiddleware(MiddlewareMixin):
    def process_request(self, request: HttpRequest) -> HttpResponse | None:
        found = nul_in(request)
        if found is None:
            return None
        kind, name = found
        detail = (f"the {kind} {name!r} contains a NUL character (0x00), which no value here "
                  "may hold")
        if request.path_info.startswith("/api/"):
            answer: dict[str, Any] = {"error": "invalid", "detail": detail}
            if kind == "query parameter":  # its own entry, as every refused parameter has
                answer.setdefault(name, ["contains a NUL character (0x00)"])
            return json_answer(answer, status=400)
        return HttpResponseBadRequest(detail, content_type="text/plain; charset=utf-8")
