"""One exception handler maps every domain error to its HTTP status (STYLE.md §4).

Every answer to a client's mistake is ``{"error": code, "detail": message, …}`` with the right
status; nothing a client sends can produce a 500. It knows the apps' errors only through their
base class (config.errors.DomainError), and DRF's and Django's own exceptions.

Last, no answer echoes what cannot be written: a message that quotes a client's text holding
a lone surrogate (``"\\ud800"``, which JSON can spell and UTF-8 cannot encode) failed to render,
a 500. Every string of a refusal is made encodable here, whatever raised it.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied, RequestDataTooBig, ValidationError
from django.http import Http404
from django.utils.translation import gettext as _
from rest_framework import exceptions as drf
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_handler

from config.errors import DomainError


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    response = _answer(exc, context)
    if response is not None:
        response.data = encodable(response.data)
    return response


def _answer(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, RequestDataTooBig):  # Django's own check (request.body, a form)
        return Response({"error": "too_large", "detail": "the request body is larger than "
                         "this API accepts"}, status=413)
    if isinstance(exc, DomainError):
        return Response({"error": exc.code, **exc.fields(), "detail": exc.detail()},
                        status=exc.status)
    if isinstance(exc, ValidationError):
        return Response({"error": "invalid", "detail": exc.messages}, status=400)
    if isinstance(exc, Http404):
        exc = drf.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = drf.PermissionDenied()
    response = drf_handler(exc, context)
    if isinstance(exc, drf.ValidationError) and response is not None:
        fields = response.data if isinstance(response.data, dict) else {"body": response.data}
        summary = "; ".join(f"{name}: {_first(msgs)}" for name, msgs in fields.items())
        response.data = {"error": "invalid",
                         "detail": _("invalid request: %(summary)s") % {"summary": summary},
                         **fields}
        return response
    if response is not None and isinstance(response.data, dict) and "detail" in response.data:
        code = getattr(exc, "default_code", "error")
        response.data = {"error": code, **response.data}
    return response


def _first(messages: Any) -> str:
    """The first message of a field's errors, however deeply DRF nests them."""
    while isinstance(messages, (list, dict)) and messages:
        messages = messages[0] if isinstance(messages, list) else next(iter(messages.values()))
    return str(messages)


def encodable(data: Any) -> Any:
    """``data`` with every string (key or value) that UTF-8 cannot encode replaced by its
    ASCII escape (``'\\ud800'`` for a lone surrogate), so the answer renders."""
    if isinstance(data, str):
        try:
            data.encode("utf-8")
        except UnicodeEncodeError:
            return ascii(data)[1:-1]
        return data
    if isinstance(data, dict):
        return {encodable(key): encodable(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [encodable(item) for item in data]
    return data
