"""Answers of the API's own, outside any app."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect, JsonResponse
from django.urls import Resolver404, resolve
from django.views.decorators.csrf import csrf_exempt


@csrf_exempt  # it changes nothing; a POST gets the 404 too, not Django's HTML 403
def api_not_found(request: HttpRequest) -> HttpResponse:
    """A path under /api/ that no view serves: the API's JSON 404, naming the path (Django's
    page is HTML, which a client of the API cannot read). As Django's CommonMiddleware would,
    a GET of a path that exists with a trailing slash is redirected there."""
    path = request.path_info
    if settings.APPEND_SLASH and not path.endswith("/"):
        try:
            match = resolve(path + "/")
        except Resolver404:
            match = None
        if match is not None and match.func is not api_not_found:
            if request.method in ("GET", "HEAD"):
                return HttpResponsePermanentRedirect(request.get_full_path(force_append_slash=True))
            return _not_found(f"no such API path: {path} (did you mean {path}/?)")
    return _not_found(f"no such API path: {path}")


def _not_found(detail: str) -> HttpResponse:
    return JsonResponse({"error": "not_found", "detail": detail}, status=404)
