"""Accounts: a club's bank, a player's wallet in a club, a table's pot (get or create)."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.utils.translation import gettext

from ledger.exceptions import InvalidEntry, LedgerError
from ledger.models import Account, AccountKind


def bank_get_or_create(*, club_key: str) -> Account:
    """The club's bank: buy-ins come from it and cash-outs go back to it."""
    _check_club_key(club_key)
    account, _ = Account.objects.get_or_create(
        kind=AccountKind.BANK, club_key=club_key, defaults={"name": f"Bank of {club_key}"}
    )
    return account


def wallet_get_or_create(*, club_key: str, owner: User, ref: str = "") -> Account:
    """A player's chip wallet in a club: one per person and club; a bot's, one per table it
    sits at (``ref``, e.g. "partie:12"), so that its tables never share chips."""
    _check_club_key(club_key)
    name = f"{owner.get_username()} @ {club_key}" + (f" ({ref})" if ref else "")
    account, _ = Account.objects.get_or_create(
        kind=AccountKind.WALLET,
        club_key=club_key,
        owner=owner,
        ref=ref,
        defaults={"name": name},
    )
    return account


def pot_get_or_create(*, club_key: str, ref: str, name: str = "") -> Account:
    """The pot of a table or partie, named by ``ref`` (e.g. "partie:12")."""
    _check_club_key(club_key)
    if not ref:
        raise InvalidEntry(gettext("A pot needs a ref naming what it belongs to, e.g. "
                                   "'partie:12'."))
    account, _ = Account.objects.get_or_create(
        kind=AccountKind.POT,
        club_key=club_key,
        ref=ref,
        defaults={"name": name or f"Pot {ref} @ {club_key}"},
    )
    return account


def _check_club_key(club_key: str) -> None:
    try:
        validate_slug(club_key)
    except ValidationError as error:
        raise LedgerError(gettext("Club key %(key)r is not a slug.") % {"key": club_key}) from error
    if len(club_key) > 64:
        raise LedgerError(gettext("Club key %(key)r is longer than 64 characters.")
                          % {"key": club_key})
