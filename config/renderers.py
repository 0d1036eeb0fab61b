"""DRF's JSON renderer, writing with orjson.

``json.dumps`` with DRF's encoder rendered every answer of the API: 4 % of a worker's CPU under
the benchmark's moves (bench/api_bench.md, seventh round). orjson writes the same bytes several
times faster. What orjson would write differently goes through DRF's own encoder: datetimes,
dates, times, durations, decimals, lazy strings and anything else it does not know natively
(``default`` is DRF's), so a datetime still reads ``2030-05-04T20:00:00.123Z``. Keys that are
not strings are written as ``json`` writes them (``"1"`` for ``1``); U+2028 and U+2029 are
escaped as DRF escapes them. Whatever orjson refuses (an integer past 64 bits) is rendered by
DRF, as before; so is an indented answer (the browsable API, ``Accept: application/json;
indent=4``), or any answer under settings that ask for ASCII, the non-compact form, or NaN.

Differences kept, none of which an answer of this API can hold (tests/test_renderers.py pins
the first): NaN and infinities are written ``null``, where DRF's strict renderer raised (a
500; the API's serializers refuse such floats on the way in); a float or decimal past 1e16 or
under 1e-4 loses its exponent's sign (``1e16``, not ``1e+16``); keys that ``json`` refuses
(UUIDs, dates) are written instead of raising; a dict subclass is written in its stored
order, whatever its ``items()`` says.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from django.http import HttpResponse
from rest_framework import renderers
from rest_framework.utils.encoders import JSONEncoder

_OPTIONS = (orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME
            | orjson.OPT_PASSTHROUGH_DATACLASS)
_LINE_SEPARATORS = ("\u2028".encode(), "\u2029".encode())


class JSONRenderer(renderers.JSONRenderer):
    _default = staticmethod(JSONEncoder().default)

    def render(self, data: Any, accepted_media_type: str | None = None,
               renderer_context: Mapping[str, Any] | None = None) -> bytes:
        if (data is None or self.ensure_ascii or not self.compact or not self.strict
                or (accepted_media_type not in (None, self.media_type))
                or (renderer_context or {}).get("indent") is not None):
            return bytes(super().render(data, accepted_media_type, renderer_context))
        try:
            written = orjson.dumps(data, default=self._default, option=_OPTIONS)
        except orjson.JSONEncodeError:  # an integer past 64 bits, a value nothing can write…
            return bytes(super().render(data, accepted_media_type, renderer_context))  # …as before
        if _LINE_SEPARATORS[0] in written or _LINE_SEPARATORS[1] in written:
            written = written.replace(_LINE_SEPARATORS[0], b"\\u2028").replace(
                _LINE_SEPARATORS[1], b"\\u2029")
        return written


def json_answer(data: Any, *, status: int) -> HttpResponse:
    """An answer written as the API's views write theirs, for code outside DRF's views (a
    middleware, the API's catch-all 404)."""
    return HttpResponse(JSONRenderer().render(data), status=status,
                        content_type=JSONRenderer.media_type)
