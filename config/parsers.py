"""The API's JSON parser: DRF's, with the limits a body from anyone must keep.

- **Size.** A body longer than ``DATA_UPLOAD_MAX_MEMORY_SIZE`` is refused with a 413 before it
  is read (Django's own check answers an HTML 400, and only when ``request.body`` is read).
  A body without a Content-Length is read up to the limit and no further.
- **Depth.** Python's JSON decoder and every recursive walk after it (the serializers, the
  JSON columns) recurse once per level: a body nested a thousand levels deep ended in a
  ``RecursionError`` and a 500. No request of this API nests more than a few levels, so one
  deeper than ``MAX_DEPTH`` is refused with a 400 (``too_deep``).
- **Text.** JSON may spell a lone UTF-16 surrogate (``"\\ud800"``), which is no character:
  it cannot be encoded as UTF-8, neither in PostgreSQL's text nor in the answer that echoes
  it. A body holding one is refused with a 400 (``invalid_text``).
"""

from __future__ import annotations

import codecs
from collections.abc import Mapping
from typing import IO, Any

from django.conf import settings
from django.utils.translation import gettext as _
from rest_framework import status
from rest_framework.exceptions import APIException, ParseError
from rest_framework.parsers import JSONParser as DRFJSONParser
from rest_framework.utils import json

MAX_DEPTH = 32


class BodyTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "too_large"
    default_detail = "the request body is too large"


class TooDeep(ParseError):
    default_code = "too_deep"


class InvalidText(ParseError):
    default_code = "invalid_text"


def body_limit() -> int | None:
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE


def too_large(limit: int) -> BodyTooLarge:
    return BodyTooLarge(f"the request body is larger than {limit} bytes, the most this API "
                        "accepts")


class JSONParser(DRFJSONParser):
    def parse(self, stream: IO[bytes] | None, media_type: str | None = None,
              parser_context: Mapping[str, Any] | None = None) -> Any:
        context = parser_context or {}
        limit = body_limit()
        raw = stream.read() if limit is None else stream.read(limit + 1)  # type: ignore[union-attr]
        if limit is not None and len(raw) > limit:
            raise too_large(limit)
        encoding = context.get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = codecs.decode(raw, encoding)
        except (LookupError, UnicodeDecodeError) as exc:
            raise ParseError(_("JSON parse error - the body is not %(encoding)s text: %(error)s")
                             % {"encoding": encoding, "error": ascii(str(exc))}) from None
        depth = _nesting(text)
        if depth > MAX_DEPTH:
            raise TooDeep(_("the JSON body nests %(depth)s levels deep; at most %(most)s are "
                            "allowed") % {"depth": depth, "most": MAX_DEPTH})
        try:
            data = json.loads(text, parse_constant=json.strict_constant if self.strict
                              else None)
        except ValueError as exc:
            raise ParseError(_("JSON parse error - %(error)s")
                             % {"error": ascii(str(exc))}) from None
        where = _lone_surrogate(data)
        if where is not None:
            raise InvalidText(_("%(where)s holds a lone UTF-16 surrogate (a \\ud800-\\udfff "
                                "escape without its pair), which is not text") % {"where": where})
        return data


def _nesting(text: str) -> int:
    """How deep the arrays and objects of a JSON text nest, counted without recursion and
    without parsing: brackets inside strings are skipped (a string's escapes included)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_DEPTH:  # enough to refuse it
                    return deepest
        elif char in "]}":
            depth -= 1
    return deepest


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _lone_surrogate(data: Any) -> str | None:
    """Where in the parsed body a string (a value or a key) holds a lone surrogate, as
    ``"the field 'move.type'"``; None if nowhere. Iterative: the depth is bounded already,
    but a walk need not rely on it."""
    todo: list[tuple[str, Any]] = [("", data)]
    while todo:
        path, value = todo.pop()
        if isinstance(value, str):
            if not _is_text(value):
                return f"the field {path!r}" if path else "the body"
        elif isinstance(value, dict):
            for key, item in value.items():
                if not _is_text(key):
                    return f"a key of {path!r}" if path else "a key of the body"
                todo.append((f"{path}.{key}" if path else key, item))
        elif isinstance(value, list):
            todo.extend((f"{path}[{i}]", item) for i, item in enumerate(value))
    return None
