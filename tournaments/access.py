"""The games app's viewer hook (settings.ACADEMIE_PARTIE_VIEWERS): the club keys whose parties a
user may see are the slugs of the clubs he is a member of, in any role (player, organiser,
auditor)."""

from __future__ import annotations

from typing import Any

from .models import Club


def club_keys(user: Any) -> list[str]:
    if not user.is_authenticated:
        return []
    return list(Club.objects.filter(memberships__user_id=user.pk)
                .values_list("slug", flat=True).distinct())
