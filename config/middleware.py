"""Refuse, before any view, a request that carries a NUL character in its query or its
cookies, and an API request whose body is too large (RefuseLargeBodyMiddleware, below).

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

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.utils import translation
from django.utils.deprecation import MiddlewareMixin

NUL = "\x00"


def nul_in(request: HttpRequest) -> tuple[str, str] | None:
    """What of the request holds a NUL character: ``("query parameter", name)`` or
    ``("cookie", name)``; ``None`` if nothing. The query and the cookies are looked at as
    Django parsed them, so that every spelling of a NUL (``%00``, a quoted cookie's ``\\000``,
    another charset's) is found."""
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
            return JsonResponse(answer, status=400)
        return HttpResponseBadRequest(detail, content_type="text/plain; charset=utf-8")


class RefuseLargeBodyMiddleware(MiddlewareMixin):
    """Refuse an API request whose declared body is over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` with
    the API's JSON 413, before anything reads it: Django's own check answers an HTML 400
    (RequestDataTooBig), and only once something reads ``request.body``. A body that declares
    no length is bounded as it is read, by the API's parser (config/parsers.py). Pages keep
    Django's check."""

    def process_request(self, request: HttpRequest) -> HttpResponse | None:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if limit is None or not request.path_info.startswith("/api/"):
            return None
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return None
        if length <= limit:
            return None
        return JsonResponse({"error": "too_large",
                             "detail": f"the request body is larger than {limit} bytes, the "
                                       "most this API accepts"}, status=413)


class ApiLanguageMiddleware(MiddlewareMixin):
    """The API speaks English to a client that names no language: its messages are read by
    programs and their logs as much as by people. A client that sends Accept-Language (a
    page's script does, as its browser) or the language cookie gets that language; the pages
    stay French by default (LocaleMiddleware, just before)."""

    def process_request(self, request: HttpRequest) -> None:
        if (request.path.startswith("/api/")
                and "HTTP_ACCEPT_LANGUAGE" not in request.META
                and settings.LANGUAGE_COOKIE_NAME not in request.COOKIES):
            translation.activate("en")
            request.LANGUAGE_CODE = "en"
