"""Maps the ledger's domain errors to HTTP answers, so that a client mistake is never a 500.

Set it project-wide with REST_FRAMEWORK["EXCEPTION_HANDLER"] = "ledger.api.exceptions.
exception_handler" (or call it from the project's own handler); the ledger's views use it
already.
"""

from __future__ import annotations

from typing import Any

from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from ledger.exceptions import LedgerError


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, LedgerError):
        return Response({"code": exc.code, "detail": exc.message}, status=exc.status_code)
    response: Response | None = drf_exception_handler(exc, context)
    return response
