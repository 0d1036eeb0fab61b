"""Answers of the API's own, outside any app, and the health and readiness probes."""

from __future__ import annotations

import logging

import redis
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse, HttpResponsePermanentRedirect, JsonResponse
from django.urls import Resolver404, resolve
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_safe

logger = logging.getLogger(__name__)


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


@require_safe
def healthz(request: HttpRequest) -> HttpResponse:
    """Liveness: the process answers. Touches nothing else, so that a database outage does not
    get a healthy web process restarted."""
    return JsonResponse({"status": "ok"})


@require_safe
def readyz(request: HttpRequest) -> HttpResponse:
    """Readiness: the database connection opens and is usable (Django's own check), and Redis
    answers a PING when REDIS_URL is set. 503 names what failed; the reason goes to the log, not
    to the (public) answer."""
    checks: dict[str, str] = {}
    try:
        connection.ensure_connection()
        if not connection.is_usable():
            raise ConnectionError("the database connection is not usable")
        checks["database"] = "ok"
    except Exception:
        logger.exception("readiness: the database does not answer")
        checks["database"] = "unavailable"
    if settings.REDIS_URL:
        client = redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=1,
                                      socket_timeout=1)
        try:
            client.ping()
            checks["redis"] = "ok"
        except Exception:
            logger.exception("readiness: Redis does not answer")
            checks["redis"] = "unavailable"
        finally:
            client.close()
    ready = all(state == "ok" for state in checks.values())
    return JsonResponse({"status": "ok" if ready else "unavailable", "checks": checks},
                        status=200 if ready else 503)
