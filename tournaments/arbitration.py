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

from games.models import Hand
from games.services import seat_wallet
from games.whatif import branch
from ledger import selectors as ledger_selectors
from ledger import services as ledger
from ledger.models import Account
from ledger.netting import minimal_transfers

from . import services
from .errors import NotAuditor, SoireeError, SoireeState
from .models import Dispute, Membership, Ruling, Soiree, SoireeTable, WhatIf
from .selectors import has_role


def _soiree_of(hand: Hand) -> Soiree:
    place = SoireeTable.objects.filter(partie_id=hand.partie_id).select_related(
        "soiree__club").first()
    if place is None:
        raise SoireeError("only a soirée's hands are disputed here: a casual table has no "
                          "arbiter")
    return place.soiree


def _players(hand: Hand) -> set[Any]:
    return set(hand.partie.seats.filter(bot="").values_list("player_id", flat=True))


def dispute_open(*, hand: Hand, user: AbstractBaseUser, reason: str, request_id: Any,
                 at: datetime, event_seq: int | None = None) -> Dispute:
    """Open a dispute; the same ``request_id`` again answers the dispute it opened."""
    done = Dispute.objects.filter(request_id=request_id).first()
    if done is not None:
        if done.hand_id != hand.pk or done.opened_by_id != user.pk:
            raise SoireeState("this request id opened another dispute")
        return done
    soiree = _soiree_of(hand)
    if hand.status != Hand.Status.OVER:
        raise SoireeState("this hand is still being played: dispute it once it is over")
    if user.pk not in _players(hand) and not has_role(user, soiree.club_id,
                                                      Membership.Role.ORGANISER):
        raise NotAuditor("only a player of this hand, or the club's organiser, may dispute it")
    if soiree.closed_at is not None and at > soiree.closed_at + soiree.dispute_window:
        raise SoireeState(f"the time to dispute this soirée's hands ended at "
                          f"{(soiree.closed_at + soiree.dispute_window).isoformat()}")
    reason = reason.strip()
    if not reason:
        raise SoireeError("say what is disputed: a reason is needed")
    if event_seq is not None and not 1 <= event_seq <= hand.last_seq:
        raise SoireeError(f"this hand has events 1 to {hand.last_seq}, not {event_seq}")
    return Dispute.objects.create(hand=hand, soiree=soiree, opened_by=user, opened_at=at,
                                  reason=reason, event_seq=event_seq, request_id=request_id)


def may_rule(user: AbstractBaseUser, dispute: Dispute) -> bool:
    """A club auditor (or staff) who did not play the hand."""
    if user.pk in _players(dispute.hand):
        return False
    return bool(getattr(user, "is_staff", False)
                or has_role(user, dispute.soiree.club_id, Membership.Role.AUDITOR))


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
        raise NotAuditor("only a club auditor who did not play this hand may branch it")
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
            raise SoireeState("this request id made another ruling")
        return done
    if not may_rule(arbiter, dispute):
        raise NotAuditor("only a club auditor who did not play this hand may rule on it")
    if kind not in Ruling.Kind.values:
        raise SoireeError(f"unknown ruling {kind!r}: one of {', '.join(Ruling.Kind.values)}")
    reason = reason.strip()
    if not reason:
        raise SoireeError("a ruling gives its reason")
    hand = dispute.hand
    wallets = _wallets_of(hand)
    corrections = {k: int(v) for k, v in (corrections or {}).items() if int(v)}
    if kind == Ruling.Kind.ADJUSTED:
        unknown = sorted(set(corrections) - set(wallets))
        if unknown:
            raise SoireeError(f"not a player of this hand: {', '.join(unknown)}")
        if not corrections:
            raise SoireeError("an adjusted ruling names its chip corrections")
        if sum(corrections.values()):
            raise SoireeError(f"the corrections must sum to zero, not "
                              f"{sum(corrections.values())}: chips move between players")
    elif corrections:
        raise SoireeError("only an adjusted ruling makes chip corrections")
    cites = sorted(set(cites or []))
    own = set(dispute.whatifs.values_list("pk", flat=True))
    if set(cites) - own:
        raise SoireeError(f"not a what-if of this dispute: "
                          f"{', '.join(str(c) for c in sorted(set(cites) - own))}")
    with transaction.atomic():
        # One ruling at a time on a dispute: the hand's row is the lock.
        Hand.objects.select_for_update().get(pk=hand.pk)
        if kind == Ruling.Kind.VOID:
            ordered = {account: -net for account, net in _hand_nets(hand).items()}
        elif kind == Ruling.Kind.ADJUSTED:
            ordered = {wallets[name].pk: amount for name, amount in corrections.items()}
        else:
            ordered = {}
        moved = _moved_by_rulings(dispute)
        delta = {a: ordered.get(a, 0) - moved.get(a, 0) for a in {*ordered, *moved}}
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
        _follow_soiree(dispute.soiree_id, at)
        return ruling


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
    """A closed soirée's standings follow the ruling; its settlement keeps the transfers it
    showed and gains the correcting ones."""
    if not Soiree.objects.filter(pk=soiree_id, status=Soiree.Status.CLOSED).exists():
        return  # an open soirée computes its standings at its close, rulings included
    with transaction.atomic():
        soiree = Soiree.objects.select_for_update().get(pk=soiree_id)
        if soiree.standings is None:
            return
        soiree.standings = services.standings_compute(soiree=soiree,
                                                      at=soiree.closed_at or at)
        settled = dict.fromkeys({r["player"] for r in soiree.standings["players"]}, 0)
        for t in (soiree.settlement or {}).get("transfers", []):
            settled[t["from"]] = settled.get(t["from"], 0) - t["amount"]
            settled[t["to"]] = settled.get(t["to"], 0) + t["amount"]
        for t in (soiree.settlement or {}).get("corrections", []):
            settled[t["from"]] = settled.get(t["from"], 0) - t["amount"]
            settled[t["to"]] = settled.get(t["to"], 0) + t["amount"]
        nets = {r["player"]: r["net"] for r in soiree.standings["players"]}
        missing = {p: nets.get(p, 0) - settled.get(p, 0) for p in {*nets, *settled}}
        settlement = dict(soiree.settlement or {})
        settlement["nets"] = [{"account": p, "player": p, "net": n} for p, n in nets.items() if n]
        settlement["corrections"] = [
            *settlement.get("corrections", []),
            *({"from": payer, "to": payee, "amount": amount}
              for payer, payee, amount in minimal_transfers(
                  {p: n for p, n in missing.items() if n}))]
        soiree.settlement = settlement
        soiree.save(update_fields=["standings", "settlement"])


def window_end(soiree: Soiree) -> datetime | None:
    """Until when the soirée's hands may be disputed (None while it is not closed)."""
    return None if soiree.closed_at is None else soiree.closed_at + soiree.dispute_window
