"""The door of a soirée: registration, check-in (exclusive: one soirée at a time), its undo,
and the chips of each player's stack there (buy-in, rebuys, cash-out)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Q
from django.utils.translation import gettext as _

from games.models import Partie
from ledger import services as ledger
from ledger.exceptions import InsufficientChips
from ledger.models import JournalEntry

from .. import projections
from ..errors import NotMember, SoireeError, SoireeState
from ..models import Membership, Registration, Soiree, SoireeTable


def registration_add(*, soiree: Soiree, user: AbstractBaseUser) -> Registration:
    if not Membership.objects.filter(club=soiree.club, user=user).exists():
        raise NotMember(_("%(name)s is not a member of %(club)s.")
                        % {"name": user.get_username(), "club": soiree.club.name})
    if soiree.status == Soiree.Status.CLOSED:
        raise SoireeState(_("This soirée is over."))
    if soiree.status == Soiree.Status.CANCELLED:
        raise SoireeState(_("This soirée was cancelled."))
    registration, _created = Registration.objects.get_or_create(soiree=soiree, user=user)
    return registration

def registration_remove(*, soiree: Soiree, user: AbstractBaseUser) -> None:
    """A member takes his name off a soirée that has not opened. One checked in already holds
    its buy-in: the organiser undoes his check-in first (``checkin_undo``)."""
    with transaction.atomic():
        soiree = Soiree.objects.select_for_update(no_key=True).get(pk=soiree.pk)
        if soiree.status != Soiree.Status.SCHEDULED:
            raise SoireeState(_("This soirée is no longer waiting to open: it is too late to "
                                "unregister."))
        registration = Registration.objects.filter(soiree=soiree, user=user).first()
        if registration is None:
            raise SoireeState(_("%(name)s is not registered for this soirée.")
                              % {"name": user.get_username()})
        if registration.checked_in_at is not None:
            raise SoireeState(_("%(name)s is already checked in: the organiser undoes the "
                                "check-in first.") % {"name": user.get_username()})
        registration.delete()

def _elsewhere(soiree: Soiree, user: AbstractBaseUser) -> Soiree | None:
    """Another soirée at which ``user`` is checked in and may be playing: one open, or one
    whose times overlap ``soiree``'s and which is not over (closed or cancelled), unless the
    organiser removed him from its tables."""
    overlapping = Q(starts_at__lt=soiree.ends_at, ends_at__gt=soiree.starts_at)
    return (Soiree.objects.select_related("club")
            .filter(registrations__user=user, registrations__checked_in_at__isnull=False,
                    registrations__left_at__isnull=True)
            .exclude(pk=soiree.pk)
            .filter(Q(status=Soiree.Status.OPEN)
                    | (Q(status=Soiree.Status.SCHEDULED) & overlapping))
            .order_by("starts_at", "pk").first())

def checkin(*, soiree: Soiree, user: AbstractBaseUser, at: datetime) -> Registration:
    """Check a player in and issue his buy-in; after the opening he joins the next partie."""
    with transaction.atomic():
        # One player, one soirée at a time: two check-ins of the same player at two soirées
        # take turns on his user row, so that neither misses the other.
        get_user_model().objects.select_for_update(no_key=True).filter(pk=user.pk).first()
        # Under the soirée's lock, as its cancel and its opening are.
        soiree = (Soiree.objects.select_for_update(of=("self",), no_key=True)
                  .select_related("club").get(pk=soiree.pk))
        other = _elsewhere(soiree, user)
        if other is not None:
            raise SoireeState(
                _("%(name)s is already checked in at another soirée, %(other)s (%(club)s): a "
                  "player is checked in at one soirée at a time. Undo that check-in, or wait "
                  "until that soirée is over.")
                % {"name": user.get_username(), "other": other.name, "club": other.club.name})
        registration = registration_add(soiree=soiree, user=user)
        registration = Registration.objects.select_for_update(no_key=True).get(pk=registration.pk)
        if registration.left_at is not None:  # removed from the tables, he is back
            registration.left_at = None
            registration.save(update_fields=["left_at"])
        if registration.checked_in_at is None:
            registration.checked_in_at = at
            registration.save(update_fields=["checked_in_at"])
            wallet = stack(soiree, user)
            if soiree.buy_in:
                ledger.buy_in(wallet=wallet, amount=soiree.buy_in,
                              source=f"soiree:{soiree.pk}/buy-in",
                              idempotency_key=_buy_in_key(soiree, user),
                              memo=f"Buy-in at {soiree.name}")
            projections.door_add(soiree=soiree, user=user, stack=wallet)
        soiree_seats_changed(soiree=soiree)  # an arrival: seated at the next tick
        return registration

def soiree_seats_changed(*, soiree: Soiree) -> None:
    """Something the seating weighs changed with no partie ending (who is here, who holds the
    ante, a seat change asked): the clock seats the soirée's tables again at its next tick.
    Nothing before the opening, whose draw reads it all."""
    Soiree.objects.filter(pk=soiree.pk, status=Soiree.Status.OPEN).update(seated_over=None)

def stack(soiree: Soiree, user: Any) -> Any:
    """The player's stack at ``soiree``: his buy-in and rebuys come into it, his tables there
    play from it, his cash-out and the soirée's rulings move it; nothing of another soirée or
    of a casual table touches it."""
    return ledger.wallet_get_or_create(club_key=soiree.club.slug, owner=user,
                                       ref=soiree.stack_ref)

def _buy_in_key(soiree: Soiree, user: AbstractBaseUser) -> str:
    """The idempotency key of the player's next buy-in at ``soiree``. A check-in undone had
    its buy-in reversed; checked in again, he is issued a new one under the next key."""
    base = f"soiree:{soiree.pk}:buy-in:{user.pk}"
    undone = JournalEntry.objects.filter(
        Q(idempotency_key=base) | Q(idempotency_key__startswith=f"{base}:"),
        reversed_by__isnull=False).count()
    return base if not undone else f"{base}:{undone + 1}"

def _buy_in_now(soiree: Soiree, user: AbstractBaseUser) -> JournalEntry | None:
    """The player's buy-in at ``soiree`` not reversed yet (None when the soirée has none)."""
    base = f"soiree:{soiree.pk}:buy-in:{user.pk}"
    return (JournalEntry.objects.filter(
        Q(idempotency_key=base) | Q(idempotency_key__startswith=f"{base}:"),
        reversed_by__isnull=True).order_by("-pk").first())

def _reverse_buy_in(soiree: Soiree, user: AbstractBaseUser, key: str, why: str) -> None:
    entry = _buy_in_now(soiree, user)
    if entry is None:
        return
    try:
        ledger.entry_reverse(entry=entry, reason=why, idempotency_key=key,
                             source=f"soiree:{soiree.pk}/buy-in")
    except InsufficientChips:
        raise SoireeState(
            _("%(name)s no longer holds the %(chips)s chips of his buy-in, so it cannot be "
              "taken back.") % {"name": user.get_username(), "chips": soiree.buy_in}) from None
    projections.door_add(soiree=soiree, user=user, stack=stack(soiree, user))

def checkin_undo(*, soiree: Soiree, user: AbstractBaseUser, request_id: Any) -> Registration:
    """Undo a check-in made by mistake, before the seating: the player stays registered, and
    his buy-in goes back to the club bank by an entry reversing it (the ledger is never
    edited). ``request_id`` makes a repeated request (a double click) undo once."""
    key = f"soiree:{soiree.pk}:checkin-undo:{request_id}"
    with transaction.atomic():
        soiree = (Soiree.objects.select_for_update(of=("self",), no_key=True)
                  .select_related("club").get(pk=soiree.pk))
        registration = Registration.objects.select_for_update(no_key=True).filter(
            soiree=soiree, user=user).first()
        if registration is not None and registration.checked_in_at is None \
                and JournalEntry.objects.filter(idempotency_key=key).exists():
            return registration  # the same request again
        if soiree.status != Soiree.Status.SCHEDULED:
            raise SoireeState(_("This soirée has opened: its players may be seated, so a "
                                "check-in can no longer be undone. Cash the player out, or "
                                "remove him from his table."))
        if registration is None or registration.checked_in_at is None:
            raise SoireeState(_("%(name)s is not checked in at this soirée.")
                              % {"name": user.get_username()})
        _reverse_buy_in(soiree, user, key, f"check-in at {soiree.name} undone")
        registration.checked_in_at = None
        registration.save(update_fields=["checked_in_at"])
        return registration

def _checked_in(soiree: Soiree, user: AbstractBaseUser, what: str) -> Any:
    if soiree.status == Soiree.Status.CLOSED:
        raise SoireeState(_("This soirée is over: its chips no longer move."))
    if soiree.status == Soiree.Status.CANCELLED:
        raise SoireeState(_("This soirée was cancelled."))
    if not Registration.objects.filter(soiree=soiree, user=user,
                                       checked_in_at__isnull=False).exists():
        raise SoireeError(_("%(name)s is not checked in at this soirée: check him in first.")
                          % {"name": user.get_username()})
    return stack(soiree, user)

def rebuy(*, soiree: Soiree, user: AbstractBaseUser, request_id: Any,
          amount: int | None = None) -> int:
    """A recave: the club bank issues ``amount`` more chips (the buy-in by default) to a
    checked-in player. ``request_id`` makes a repeated request (a double click) post once.
    Returns the player's chips."""
    with transaction.atomic():
        # First, so that this takes the soirée's row lock before the ledger's accounts, in the
        # order a tick takes them: a rebuy and a tick never wait for each other both ways.
        soiree_seats_changed(soiree=soiree)  # one who was broke may be seated again
        wallet = _checked_in(soiree, user, "rebuy")
        ledger.buy_in(wallet=wallet, amount=amount or soiree.buy_in,
                      source=f"soiree:{soiree.pk}/rebuy",
                      idempotency_key=f"soiree:{soiree.pk}:rebuy:{request_id}",
                      memo=f"Rebuy at {soiree.name}")
        projections.door_add(soiree=soiree, user=user, stack=wallet)
        wallet.refresh_from_db(fields=["balance"])
        return int(wallet.balance)

def cash_out(*, soiree: Soiree, user: AbstractBaseUser, request_id: Any,
             amount: int | None = None) -> int:
    """A player leaves the evening with ``amount`` of his chips (all of them by default),
    returned to the club bank; not while he sits at a table in play, whose hands draw on his
    wallet. Returns the chips he still holds."""
    with transaction.atomic():
        soiree_seats_changed(soiree=soiree)  # first, as in ``rebuy``; he may sit out now
        wallet = _checked_in(soiree, user, "cash-out")
        playing = SoireeTable.objects.filter(
            soiree=soiree, partie__status=Partie.Status.PLAYING,
            partie__seats__player=user).exists()
        if playing:
            raise SoireeState(_("%(name)s is seated at a table in play: he cashes out once its "
                                "partie is over.") % {"name": user.get_username()})
        if amount is not None and amount > wallet.balance:
            raise SoireeError(_("%(name)s holds %(holds)s chips, fewer than %(amount)s.")
                              % {"name": user.get_username(), "holds": wallet.balance,
                                 "amount": amount})
        ledger.cash_out(wallet=wallet, amount=amount, source=f"soiree:{soiree.pk}/cash-out",
                        idempotency_key=f"soiree:{soiree.pk}:cash-out:{request_id}",
                        memo=f"Cash-out at {soiree.name}")
        wallet.refresh_from_db(fields=["balance"])
        return int(wallet.balance)
