"""The door's member search: the organiser's late-arrival box asks it, as he types, for the
club's members whose username or name holds what he typed, case and accents ignored ("helene"
finds Hélène Fournier). A page-facing read, for the soirée club's organisers only.

The matching is done here in Python over the club's members, not in SQL: accent-insensitive
comparison differs between SQLite and PostgreSQL (``unaccent`` is an extension), and a club has
at most a few hundred members.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, JsonResponse
from django.shortcuts import get_object_or_404
from django.utils.translation import gettext as _
from django.views.decorators.http import require_safe

from tournaments.models import Membership, Soiree
from tournaments.permissions import may_organise

#: The longest query searched; a longer one is refused (400).
MAX_QUERY = 100
#: The most members one answer names.
MAX_MEMBERS = 10


def fold(text: str) -> str:
    """``text`` compared loosely: accents dropped (NFKD, without its combining marks),
    case-folded, runs of spaces made one."""
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(bare.casefold().split())


def _rank(query: str, words: list[str], fields: list[str]) -> int | None:
    """How well a member matches the folded ``query`` (lower is better), or None: every word
    of the query must be found in his username, first name or last name. A field that starts
    with the whole query comes first, then a word of them that starts with the query's first
    word, then any other match."""
    haystack = " ".join(fields)
    if not all(word in haystack for word in words):
        return None
    if any(field.startswith(query) for field in fields):
        return 0
    if any(part.startswith(words[0]) for part in haystack.split()):
        return 1
    return 2


def members_matching(*, soiree: Soiree, query: str) -> dict[str, Any]:
    """The club's active members matching ``query``, best first, at most ``MAX_MEMBERS``, each
    ``{"username", "name"}``; and ``exact``: the username of the one member whose username or
    full name is the query (case and accents aside), if exactly one is."""
    wanted = fold(query)
    if not wanted:
        return {"members": [], "exact": None}
    words = wanted.split()
    found: list[tuple[int, str, str, dict[str, str]]] = []
    exact: set[str] = set()
    seen: set[int] = set()
    memberships = (Membership.objects.filter(club=soiree.club, user__is_active=True)
                   .select_related("user"))
    for membership in memberships:
        user = membership.user
        if user.pk in seen:  # one row per role
            continue
        seen.add(user.pk)
        username = user.get_username()
        name = user.get_full_name() or username
        folded_name = fold(name)
        fields = [fold(username), fold(user.first_name), fold(user.last_name), folded_name]
        if wanted in (fields[0], folded_name):
            exact.add(username)
        rank = _rank(wanted, words, [f for f in fields if f])
        if rank is not None:
            found.append((rank, folded_name, username, {"username": username, "name": name}))
    found.sort(key=lambda row: row[:3])
    return {"members": [row[3] for row in found[:MAX_MEMBERS]],
            "exact": exact.pop() if len(exact) == 1 else None}


@require_safe
@login_required
def soiree_members(request: HttpRequest, soiree_id: int) -> JsonResponse:
    """``?q=hel``: the soirée club's members matching it (``members_matching``), as JSON."""
    soiree = get_object_or_404(Soiree.objects.select_related("club"), pk=soiree_id)
    if not may_organise(request.user, soiree.club_id):
        raise PermissionDenied(_("only the club's organisers may search its members"))
    query = request.GET.get("q", "")
    if len(query) > MAX_QUERY:
        return JsonResponse({"error": "query_too_long", "detail": _(
            "A search is at most %(limit)d characters long, not %(length)d.")
            % {"limit": MAX_QUERY, "length": len(query)}}, status=400)
    return JsonResponse(members_matching(soiree=soiree, query=query))
