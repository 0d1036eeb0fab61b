"""The web pages: lobby, soirée (live tables and standings), table (play), audit replay.

Pages are thin: they render a shell and read everything through the same API as any client,
so that a page can never show more than the API lets the viewer see.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse

from games.models import Hand
from tournaments.models import Soiree
from tournaments.selectors import soiree_list


@login_required
def lobby(request: HttpRequest) -> HttpResponse:
    return render(request, "frontend/lobby.html",
                  {"soirees": soiree_list(user=request.user)[:50]})


@login_required
def soiree_page(request: HttpRequest, soiree_id: int) -> HttpResponse:
    soiree = get_object_or_404(Soiree, pk=soiree_id)
    live_url = settings.ACADEMIE_LIVE_URL + reverse("live")
    return render(request, "frontend/soiree.html", {"soiree": soiree, "live_url": live_url})


@login_required
def table_page(request: HttpRequest, hand_id: str) -> HttpResponse:
    hand = get_object_or_404(Hand.objects.select_related("partie"), pk=hand_id)
    live_url = settings.ACADEMIE_LIVE_URL + reverse("partie-live", args=[hand.partie_id])
    return render(request, "frontend/table.html", {"hand": hand, "live_url": live_url})


@login_required
def audit_page(request: HttpRequest, hand_id: str) -> HttpResponse:
    hand = get_object_or_404(Hand.objects.select_related("partie"), pk=hand_id)
    return render(request, "frontend/audit.html", {"hand": hand})
