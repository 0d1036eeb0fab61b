"""Logging: one JSON object per line on stdout (production), or a line of text (development),
every record carrying the id of the request that logged it (config/request_id.py)."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

from config.request_id import current_request_id


class RequestIdFilter(logging.Filter):
    """Puts ``request_id`` on every record: the current request's, or, for the record Django's
    ``django.request`` logs about an answer after the middleware returned, its request's."""

    def filter(self, record: logging.LogRecord) -> bool:
        request_id = current_request_id.get()
        if request_id is None:
            request_id = getattr(getattr(record, "request", None), "request_id", None)
        record.request_id = request_id
        return True


class JsonFormatter(logging.Formatter):
    """time, level, logger, message, request_id, and the exception's text when there is one.
    ASCII only: a client's lone surrogate or odd byte in a message can never fail the write."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, tz=UTC).isoformat(
                timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "request_id": getattr(record, "request_id", None),
        }
        status_code = getattr(record, "status_code", None)
        if status_code is not None:
            line["status_code"] = status_code
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps(line, ensure_ascii=True, default=str)


def logging_config(*, json_lines: bool, level: str = "INFO") -> dict[str, Any]:
    """The LOGGING setting: everything to stdout through one handler, Django's loggers included
    (their own console handler, which prints only under DEBUG, is replaced)."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"request_id": {"()": "config.logging.RequestIdFilter"}},
        "formatters": {
            "json": {"()": "config.logging.JsonFormatter"},
            "text": {"format": "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"},
        },
        "handlers": {"stdout": {"class": "logging.StreamHandler", "stream": "ext://sys.stdout",
                                "formatter": "json" if json_lines else "text",
                                "filters": ["request_id"]}},
        "root": {"handlers": ["stdout"], "level": level},
        "loggers": {"django": {"handlers": [], "level": level, "propagate": True}},
    }
