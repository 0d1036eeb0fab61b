"""The club calendar's pages: the private feed a calendar app subscribes to (no sign-in: the
secret in its address is the key), the lobby's links to it, and the button that revokes one."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils import timezone
from django.utils.cache import patch_cache_control
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST, require_safe

from tournaments.calendar import (
    calendar_club,
    calendar_clubs,
    calendar_feed,
    calendar_token_get,
    calendar_token_revoke,
)
from tournaments.errors import NotMember
from tournaments.models import Club, Soiree


@require_safe
def calendar_ics(request: HttpRequest, token: str) -> HttpResponse:
    """The feed. An unknown or revoked secret gets the plain 404 of any unknown address, so
    that the answer says nothing of which clubs exist."""
    club = calendar_club(token=token)
    if club is None:
        raise Http404(_("no such page"))

    def soiree_url(soiree: Soiree) -> str:
        return request.build_absolute_uri(reverse("soiree-page", args=[soiree.pk]))

    answer = HttpResponse(calendar_feed(club=club, soiree_url=soiree_url, at=timezone.now()),
                          content_type="text/calendar; charset=utf-8")
    answer["Content-Disposition"] = f'inline; filename="{club.slug}.ics"'
    # The address is a secret: no shared cache may keep the feed, nor a search engine list it.
    patch_cache_control(answer, private=True, max_age=300)
    answer["X-Robots-Tag"] = "noindex"
    return answer


def calendar_links(request: HttpRequest) -> list[dict[str, Any]]:
    """The lobby's links: for each club of the signed-in member, his feed's address (https, to
    copy) and the same as webcal:// (a click subscribes). The secret is made on first use."""
    user = request.user
    if not user.is_authenticated:
        return []
    links = []
    for club in calendar_clubs(user=user):
        token = calendar_token_get(club=club, user=user)
        url = request.build_absolute_uri(reverse("calendar-ics", args=[token]))
        links.append({"club": club, "url": url, "webcal": "webcal://" + url.split("://", 1)[1]})
    return links


@login_required
@require_POST
def calendar_revoke(request: HttpRequest, club_id: int) -> HttpResponse:
    """A new secret for the signed-in member's own feed of the club; the old address stops
    working at once."""
    club, user = get_object_or_404(Club, pk=club_id), request.user
    if not user.is_authenticated:  # login_required let him through; this tells mypy
        raise Http404(_("no such page"))
    try:
        calendar_token_revoke(club=club, user=user)
    except NotMember:
        raise Http404(_("no such page")) from None
    messages.success(request, _("Your calendar link for %(club)s has been replaced: the old "
                                "one no longer works. Subscribe again with the new one.")
                     % {"club": club.name})
    return redirect(reverse("lobby") + "#calendar")
