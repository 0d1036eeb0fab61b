"""Disputes and rulings on a soirée's hands.

A player of the hand, or the club's organiser, opens a dispute on a finished hand until the
soirée's dispute window has passed (by default 24 h after its close). An arbiter (a club
auditor who did not play the hand) rules: the result stands, the hand is void (every chip it
moved goes back), or chip corrections between its players are made. Rulings are append-only;
a second ruling on a dispute is an appeal and the latest stands.

What a ruling orders is a net change per ledger account. It posts only the difference between
that and what the dispute's earlier rulings moved, so an appeal corrects, never rewrites. The
chips move through a pot of the dispute, pay-what-you-have: who must give pays what he holds,
who must receive is paid as far as the pot holds, and what is missing is the ruling's recorded
shortfall. No wallet goes below zero and the books always balance.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.translation import gettext as _

from games.models import Hand
from games.services import seat_wallet
from games.whatif import branch
from ledger import selectors as ledger_selectors
from ledger import services as ledger
from ledger.models import Account

from . import projections, ratings, selectors
from .errors import NotAuditor, SoireeError, SoireeState
from .models import Dispute, Membership, Ruling, Soiree, SoireeTable, WhatIf
from .permissions import has_role, may_audit
from .services.door import soiree_seats_changed


def _soiree_of(hand: Hand) -> Soiree:
    place = SoireeTable.objects.filter(partie_id=hand.partie_id).select_related(
        "soiree__club").first()
    if place is None:
        raise SoireeError(_("Only a soirée's hands are disputed here: a casual table has no "
                            "arbiter."))
    return place.soiree


def _players(hand: Hand) -> set[Any]:
    return set(hand.partie.seats.filter(bot="").values_list("player_id", flat=True))


def dispute_open(*, hand: Hand, user: AbstractBaseUser, reason: str, request_id: Any,
                 at: datetime, event_seq: int | None = None) -> Dispute:
    """Open a dispute; the same ``request_id`` again answers the dispute it opened."""
    done = Dispute.objects.filter(request_id=request_id).first()
    if done is not None:
        if done.hand_id != hand.pk or done.opened_by_id != user.pk:
            raise SoireeState(_("this request id opened another dispute"))
        return done
    soiree = _soiree_of(hand)
    if hand.status != Hand.Status.OVER:
        raise SoireeState(_("This hand is still being played: dispute it once it is over."))
    if user.pk not in _players(hand) and not has_role(user, soiree.club_id,
                                                      Membership.Role.ORGANISER):
        raise NotAuditor(_("Only a player of this hand, or the club's organiser, may dispute "
                           "it."))
    if soiree.closed_at is not None and at > soiree.closed_at + soiree.dispute_window:
        raise SoireeState(_("The time to dispute this soirée's hands ended on %(at)s.")
                          % {"at": date_format(timezone.localtime(
                              soiree.closed_at + soiree.dispute_window, soiree.club.zone()),
                              "DATETIME_FORMAT")})
    reason = reason.strip()
    if not reason:
        raise SoireeError(_("Say what is disputed: a reason is needed."))
    if event_seq is not None and not 1 <= event_seq <= hand.last_seq:
        raise SoireeError(_("This hand has events 1 to %(last)s, not %(seq)s.")
                          % {"last": hand.last_seq, "seq": event_seq})
    return Dispute.objects.create(hand=hand, soiree=soiree, opened_by=user, opened_at=at,
                                  reason=reason, event_seq=event_seq, request_id=request_id)


def may_rule(user: AbstractBaseUser, dispute: Dispute) -> bool:
    """A club auditor (or staff) who did not play the hand."""
    if user.pk in _players(dispute.hand):
        return False
    return may_audit(user, dispute.soiree.club_id)


def _hand_nets(hand: Hand) -> dict[int, int]:
    """What the hand moved, per ledger account (its own entries, pots included)."""
    return ledger_selectors.source_totals(prefixes=[f"hand:{hand.pk}/"])


def _moved_by_rulings(dispute: Dispute) -> dict[int, int]:
    """What the dispute's rulings have moved so far, per account (their pot left out)."""
    return ledger_selectors.source_totals(prefixes=[f"dispute:{dispute.pk}/"],
                                          exclude_refs=[f"dispute:{dispute.pk}"])


def _wallets_of(hand: Hand) -> dict[str, Account]:
    """The wallet each seat of the hand played from, by player name."""
    return {s.player.get_username(): seat_wallet(hand.partie, s)
            for s in hand.partie.seats.select_related("player")}


def whatif(*, dispute: Dispute, arbiter: AbstractBaseUser, from_seq: int,
           moves: list[dict[str, Any]], play_out: bool, at: datetime, keep: bool = False,
           note: str = "") -> dict[str, Any]:
    """An arbiter's what-if on the disputed hand (games.whatif.branch); kept as a draft of the
    dispute when ``keep``. Returns the branch, with the draft's ``id`` (None if not kept)."""
    if not may_rule(arbiter, dispute):
        raise NotAuditor(_("Only a club auditor who did not play this hand may branch it."))
    found = branch(hand=dispute.hand, from_seq=from_seq, moves=moves, play_out=play_out)
    draft = None
    if keep:
        draft = WhatIf.objects.create(dispute=dispute, author=arbiter, created_at=at,
                                      from_seq=from_seq, moves=list(moves), played_out=play_out,
                                      result=found["result"], note=note.strip()[:500])
    return {**found, "id": draft.pk if draft else None}


def rule(*, dispute: Dispute, arbiter: AbstractBaseUser, kind: str, reason: str,
         request_id: Any, at: datetime, corrections: dict[str, int] | None = None,
         cites: list[int] | None = None) -> Ruling:
    """Rule on ``dispute`` (see the module's docstring), citing some of its what-if drafts;
    the same ``request_id`` again answers the ruling it made."""
    done = Ruling.objects.filter(request_id=request_id).first()
    if done is not None:
        if done.dispute_id != dispute.pk or done.kind != kind:
            raise SoireeState(_("this request id made another ruling"))
        return done
    if not may_rule(arbiter, dispute):
        raise NotAuditor(_("Only a club auditor who did not play this hand may rule on "
                           "it."))
    if kind not in Ruling.Kind.values:
        raise SoireeError(_("Unknown ruling %(kind)s: one of %(kinds)s.")
                          % {"kind": kind, "kinds": ", ".join(Ruling.Kind.values)})
    reason = reason.strip()
    if not reason:
        raise SoireeError(_("A ruling gives its reason."))
    hand = dispute.hand
    wallets = _wallets_of(hand)
    corrections = _checked_corrections(kind, corrections, wallets)
    cites = sorted(set(cites or []))
    own = set(dispute.whatifs.values_list("pk", flat=True))
    if set(cites) - own:
        raise SoireeError(_("Not a what-if of this dispute: %(ids)s.") % {"ids": ", ".join(
            str(c) for c in sorted(set(cites) - own))})
    with transaction.atomic():
        # One ruling at a time on a dispute: the hand's row is the lock.
        Hand.objects.select_for_update(no_key=True).get(pk=hand.pk)
        voided_before = selectors.hand_voided(hand=hand)
        delta = _delta(dispute, kind, corrections, wallets)
        if kind == Ruling.Kind.ADJUSTED:
            # An adjustment takes from the players it names only, and never more than they
            # hold: it is refused, naming who holds too little, and changes nothing.
            for line in _effect(delta, wallets):
                if line["short"]:
                    raise SoireeError(
                        _("%(name)s holds %(holds)s chips at this soirée: the adjustment asks "
                          "him for %(asks)s. Ask for no more than he holds.")
                        % {"name": line["player"], "holds": line["holds"],
                           "asks": -line["moves"]})
        # Chips given back may seat a player who was broke: the clock looks again (the
        # soirée's row before the ledger's accounts, in the tick's order).
        soiree_seats_changed(soiree=dispute.soiree)
        memo = (f"Ruling ({kind}) on dispute {dispute.pk}, hand {hand.number} of "
                f"{hand.partie.table_label}: {reason[:120]}")
        entries, short = _post(dispute, f"dispute:{dispute.pk}/ruling:{request_id}", memo,
                               {a: d for a, d in delta.items() if d}, at)
        # The ruling is written once, with what it posted: the row is append-only.
        names = {w.pk: name for name, w in wallets.items()}
        accounts = Account.objects.in_bulk(list(short))
        ruling = Ruling.objects.create(
            dispute=dispute, arbiter=arbiter, at=at, kind=kind, reason=reason,
            corrections=corrections, request_id=request_id, entries=entries, cites=cites,
            shortfall={names.get(a, accounts[a].name): n for a, n in short.items()})
        projections.ruling_add(ruling=ruling, hand=hand, voided_before=voided_before)
        _follow_soiree(dispute.soiree_id, at)
        return ruling


def _checked_corrections(kind: str, corrections: dict[str, Any] | None,
                         wallets: dict[str, Account]) -> dict[str, int]:
    if kind not in Ruling.Kind.values:
        raise SoireeError(_("Unknown ruling %(kind)s: one of %(kinds)s.")
                          % {"kind": kind, "kinds": ", ".join(Ruling.Kind.values)})
    corrections = {k: int(v) for k, v in (corrections or {}).items() if int(v)}
    if kind == Ruling.Kind.ADJUSTED:
        unknown = sorted(set(corrections) - set(wallets))
        if unknown:
            raise SoireeError(_("Not a player of this hand: %(names)s.")
                              % {"names": ", ".join(unknown)})
        if not corrections:
            raise SoireeError(_("An adjusted ruling names its chip corrections."))
        if sum(corrections.values()):
            raise SoireeError(_("The corrections must sum to zero, not %(sum)s: chips move "
                                "between players.") % {"sum": sum(corrections.values())})
    elif corrections:
        raise SoireeError(_("Only an adjusted ruling makes chip corrections."))
    return corrections


def _delta(dispute: Dispute, kind: str, corrections: dict[str, int],
           wallets: dict[str, Account]) -> dict[int, int]:
    """What the ruling would post, per account: what it orders, less what the dispute's
    earlier rulings moved (an appeal corrects, never rewrites)."""
    if kind == Ruling.Kind.VOID:
        ordered = {account: -net for account, net in _hand_nets(dispute.hand).items()}
    elif kind == Ruling.Kind.ADJUSTED:
        ordered = {wallets[name].pk: amount for name, amount in corrections.items()}
    else:
        ordered = {}
    moved = _moved_by_rulings(dispute)
    return {a: ordered.get(a, 0) - moved.get(a, 0) for a in {*ordered, *moved}
            if ordered.get(a, 0) != moved.get(a, 0)}


def _effect(delta: dict[int, int], wallets: dict[str, Account]) -> list[dict[str, Any]]:
    """Per account the ruling moves: who, what he holds now, what he gives (negative) or
    receives, and what he would fail to give."""
    names = {w.pk: name for name, w in wallets.items()}
    accounts = Account.objects.in_bulk(list(delta))
    return [{"player": names.get(pk, accounts[pk].name), "holds": accounts[pk].balance,
             "moves": amount, "short": max(0, -amount - accounts[pk].balance)}
            for pk, amount in sorted(delta.items(), key=lambda item: item[1])]


def ruling_effect(*, dispute: Dispute, arbiter: AbstractBaseUser, kind: str,
                  corrections: dict[str, Any] | None = None) -> dict[str, Any]:
    """What a ruling would do, before it is posted (nothing is written): per player, the chips
    he holds and what he would give or receive, and any shortfall. An adjustment with a
    shortfall is refused when posted; a void's falls on the hand's own accounts."""
    if not may_rule(arbiter, dispute):
        raise NotAuditor(_("Only a club auditor who did not play this hand may rule on "
                           "it."))
    wallets = _wallets_of(dispute.hand)
    corrections = _checked_corrections(kind, corrections, wallets)
    lines = _effect(_delta(dispute, kind, corrections, wallets), wallets)
    return {"kind": kind, "lines": lines, "shortfall": sum(line["short"] for line in lines),
            "postable": kind != Ruling.Kind.ADJUSTED or not any(x["short"] for x in lines)}


def _post(dispute: Dispute, source: str, memo: str, delta: dict[int, int],
          at: datetime) -> tuple[list[int], dict[int, int]]:
    """Move ``delta`` (per account) through the dispute's pot, pay-what-you-have."""
    if not delta:
        return [], {}
    club_key = dispute.soiree.club.slug
    pot = ledger.pot_get_or_create(club_key=club_key, ref=f"dispute:{dispute.pk}",
                                   name=f"Ruling pot of dispute {dispute.pk}")
    accounts = Account.objects.in_bulk(list(delta))
    entries: list[int] = []
    short: dict[int, int] = {}
    for account_id, amount in sorted(delta.items()):
        if amount < 0:  # gives
            entry, missing = ledger.pay_what_you_have(
                payer=accounts[account_id], payee=pot, amount=-amount, memo=memo,
                source=source, idempotency_key=f"{source}/from:{account_id}", at=at)
            if entry is not None:
                entries.append(entry.pk)
            if missing:
                short[account_id] = missing
    for account_id, amount in sorted(delta.items()):
        if amount > 0:  # receives, as far as the pot holds
            pot.refresh_from_db(fields=["balance"])
            paid = min(amount, pot.balance)
            if paid:
                entry = ledger.transfer(payer=pot, payee=accounts[account_id], amount=paid,
                                        memo=memo, source=source,
                                        idempotency_key=f"{source}/to:{account_id}", at=at)
                entries.append(entry.pk)
            if amount - paid:
                short[account_id] = amount - paid
    return entries, short


def _follow_soiree(soiree_id: int, at: datetime) -> None:
    """A closed soirée's standings follow the ruling (read from its read models, which the
    ruling has just moved); its settlement keeps the transfers it showed and gains the
    correcting ones; its season's ratings are rated again."""
    if not Soiree.objects.filter(pk=soiree_id, status=Soiree.Status.CLOSED).exists():
        return  # an open soirée's standings are its read models, the ruling in them
    with transaction.atomic():
        soiree = Soiree.objects.select_for_update(no_key=True).get(pk=soiree_id)
        if soiree.standings is None:
            return
        soiree.standings = {**selectors.standings_read(soiree=soiree),
                            "computed_at": (soiree.closed_at or at).isoformat()}
        soiree.settlement = selectors.settlement_corrected(soiree.settlement or {},
                                                          soiree.standings, at)
        soiree.save(update_fields=["standings", "settlement"])
        if soiree.season_id is not None:
            ratings.rebuild(season=soiree.season)


def window_end(soiree: Soiree) -> datetime | None:
    """Until when the soirée's hands may be disputed (None while it is not closed)."""
    return None if soiree.closed_at is None else soiree.closed_at + soiree.dispute_window
