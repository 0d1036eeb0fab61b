"""DRF's content negotiation, with the Accept headers clients send most answered at once.

``DefaultContentNegotiation`` parses the Accept header and every renderer's media type on each
request: 3 % of a worker's CPU under the benchmark's moves (bench/api_bench.md, seventh round).
A request without an Accept header, or with ``*/*`` or exactly the first renderer's media type,
and without a format asked for (a ``.json`` suffix or ``?format=``), always gets the first
renderer with its media type; those are answered here without parsing. Every other request is
negotiated by DRF as before, its 406 included; a format no renderer writes (an empty one
included) gets a 404 that names it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rest_framework.exceptions import NotFound
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request

ANY = "*/*"


class ContentNegotiation(DefaultContentNegotiation):
    def select_renderer(self, request: Request, renderers: Iterable[BaseRenderer],
                        format_suffix: str | None = None) -> tuple[BaseRenderer, str]:
        renderers = list(renderers)
        if renderers and not format_suffix:
            first = renderers[0]
            accept = request.META.get("HTTP_ACCEPT", ANY)
            if ((accept == ANY or accept == first.media_type) and first.media_type != ANY
                    and self.settings.URL_FORMAT_OVERRIDE not in request.query_params):
                return first, first.media_type
        if not format_suffix and request.query_params.get(self.settings.URL_FORMAT_OVERRIDE) == "":
            # DRF reads an empty ?format= as none asked for; it names no renderer either.
            self.filter_renderers(renderers, "")
        found: Any = super().select_renderer(request, renderers, format_suffix)
        return found  # type: ignore[no-any-return]

    def filter_renderers(self, renderers: list[BaseRenderer], format: str) -> list[BaseRenderer]:
        """DRF's, whose 404 for a format no renderer writes said only "Not found."."""
        found = [renderer for renderer in renderers if renderer.format == format]
        if not found:
            offered = ", ".join(str(renderer.format) for renderer in renderers)
            raise NotFound(f"no format {format!r} here: ask for one of {offered}")
        return found
