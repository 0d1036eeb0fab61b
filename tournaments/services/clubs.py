"""A club and its members."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils.translation import gettext as _

from ..errors import SoireeError
from ..models import Club, Membership


def club_create(*, name: str, slug: str, organiser: AbstractBaseUser) -> Club:
    with transaction.atomic():
        club = Club.objects.create(name=name, slug=slug)
        Membership.objects.create(club=club, user=organiser, role=Membership.Role.ORGANISER)
        return club

def membership_add(*, club: Club, user: AbstractBaseUser, role: str) -> Membership:
    if role not in Membership.Role.values:
        raise SoireeError(_("Unknown role %(role)s: one of %(roles)s.")
                          % {"role": role, "roles": ", ".join(Membership.Role.values)})
    membership, _created = Membership.objects.get_or_create(club=club, user=user, role=role)
    return membership
