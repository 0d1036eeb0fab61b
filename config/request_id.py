"""A request id for every request: the client's ``X-Request-ID`` when it is a sane token, else a
new uuid4. It is sent back in the response's ``X-Request-ID`` and held in a context variable for
the duration of the request, which the logging filter (config/logging.py) puts on every record,
so that the lines one request logged, its 500 included, can be found together."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from asgiref.sync import iscoroutinefunction
from django.http import HttpRequest, HttpResponseBase
from django.utils.decorators import sync_and_async_middleware

HEADER = "X-Request-ID"
#: What a client (or the proxy in front) may choose: a short token of safe characters, so that
#: an id never carries a newline or markup into a log line or a header.
SANE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:+=/-]{0,127}", re.ASCII)

current_request_id: ContextVar[str | None] = ContextVar("current_request_id", default=None)


def request_id_of(request: HttpRequest) -> str:
    given = request.META.get("HTTP_X_REQUEST_ID", "")
    return given if SANE.fullmatch(given) else str(uuid.uuid4())


@sync_and_async_middleware
def request_id_middleware(get_response: Callable[[HttpRequest], Any]) -> Any:
    if iscoroutinefunction(get_response):
        async def async_middleware(request: HttpRequest) -> HttpResponseBase:
            request.request_id = request_id_of(request)  # type: ignore[attr-defined]
            token = current_request_id.set(request.request_id)  # type: ignore[attr-defined]
            try:
                response: HttpResponseBase = await get_response(request)
            finally:
                current_request_id.reset(token)
            response[HEADER] = request.request_id  # type: ignore[attr-defined]
            return response

        return async_middleware

    def middleware(request: HttpRequest) -> HttpResponseBase:
        # On the request too: Django logs an error answer once more after the middleware has
        # returned (django.request), when the context variable is reset already.
        request.request_id = request_id_of(request)  # type: ignore[attr-defined]
        token = current_request_id.set(request.request_id)  # type: ignore[attr-defined]
        try:
            response: HttpResponseBase = get_response(request)
        finally:
            current_request_id.reset(token)
        response[HEADER] = request.request_id  # type: ignore[attr-defined]
        return response

    return middleware



