"""Casual tables: a player makes a table and invites others; nobody sits, nor pays, before
accepting, and the partie starts when every seat is accepted.

A casual table plays from each person's casual wallet (the ledger's club "casual"), opened
once with the welcome chips of ``ACADEMIE_CASUAL_WELCOME_CHIPS``. Its buy-in is the least a
player must hold there to sit down, at most the club's limit ``ACADEMIE_CASUAL_MAX_BUY_IN``:
no chips are issued to a person at the table. Bots, the house's players, are staked with the
buy-in by the casual bank, as at a soirée (the welcome chips at a table without a buy-in).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils.translation import gettext as _

from games.errors import (
    InvalidPartie,
    InvitationClosed,
    NotEnoughChips,
    NotInvited,
    NotTableOwner,
    PlayerBusy,
)
from games.models import Invitation, Partie, Seat, default_share_window
from games.permissions import sees_all

from . import chips
from .parties import MAX_HANDS, partie_check, partie_stop_dealing, seat_and_deal

CASUAL = "casual"


def casual_max_buy_in() -> int:
    return int(getattr(settings, "ACADEMIE_CASUAL_MAX_BUY_IN", 500))


def casual_table_create(
    *,
    creator: AbstractBaseUser,
    game: str,
    players: Sequence[AbstractBaseUser],
    bots: Sequence[str] = (),
    options: dict[str, Any] | None = None,
    buy_in: int = 0,
    table_label: str = "free table",
    move_timeout: timedelta = timedelta(seconds=30),
    forced_move_delay: timedelta = timedelta(seconds=1),
    comet_window: timedelta = timedelta(seconds=2),
    pause_between_hands: timedelta = timedelta(seconds=5),
    share_window: timedelta | None = None,
    at: datetime,
) -> Partie:
    """Make a casual table offering a seat to each of ``players`` (in this order), then to the
    ``bots``. The creator's own seat, if he names himself, and the bots' are accepted now; the
    table starts once every seat is (at once if nobody else is asked)."""
    timings = {"move_timeout": move_timeout, "forced_move_delay": forced_move_delay,
               "comet_window": comet_window, "pause_between_hands": pause_between_hands,
               "share_window": default_share_window() if share_window is None else share_window}
    opts = partie_check(game=game, people=len(players), bots=bots, options=options,
                        buy_in=buy_in, deal_until=None, max_hands=MAX_HANDS, timeouts=timings)
    if len({p.pk for p in players}) != len(players):
        raise InvalidPartie(_("a player can take only one seat"))
    if buy_in > casual_max_buy_in():
        raise InvalidPartie(_("a casual table's buy-in is at most %(most)s chips, not %(n)s")
                            % {"most": casual_max_buy_in(), "n": buy_in})
    with transaction.atomic():
        partie = Partie.objects.create(game=game, options=opts, club_key=CASUAL,
                                       table_label=table_label, status=Partie.Status.INVITING,
                                       buy_in=buy_in, created_by=creator, **timings)
        Invitation.objects.bulk_create(
            [Invitation(partie=partie, number=n, player=p) for n, p in enumerate(players)]
            + [Invitation(partie=partie, number=len(players) + i, bot=name,
                          answer=Invitation.Answer.ACCEPTED, answered_at=at)
               for i, name in enumerate(bots)])
        mine = partie.invitations.filter(player_id=creator.pk).first()
        if mine is not None:
            _accept(partie, mine, at)
        _start_when_all_accepted(partie, at)
    return partie


def invitation_answer(*, partie_id: Any, user: AbstractBaseUser, accept: bool,
                      at: datetime) -> Partie:
    """Accept or decline the seat offered to ``user``. A decline cancels the table (its players
    agreed to play together, not with whoever is left); the last acceptance starts it."""
    with transaction.atomic():
        partie = Partie.objects.select_for_update(no_key=True).get(pk=partie_id)
        invitation = partie.invitations.filter(player_id=user.pk).first()
        if invitation is None:
            raise NotInvited(_("you are not invited to this table"))
        if partie.status != Partie.Status.INVITING:
            raise InvitationClosed(_("this table no longer waits for answers: it is {status}")
                                   .format(status=partie.status))
        if invitation.answer != Invitation.Answer.PENDING:
            raise InvitationClosed(_("you have already answered this invitation"))
        if not accept:
            invitation.answer = Invitation.Answer.DECLINED
            invitation.answered_at = at
            invitation.save(update_fields=["answer", "answered_at"])
            _cancel(partie, at)
            return partie
        _accept(partie, invitation, at)
        _start_when_all_accepted(partie, at)
    return partie


def casual_table_close(*, partie_id: Any, user: AbstractBaseUser, at: datetime) -> Partie:
    """The creator (or staff) closes his table: one still inviting is cancelled; one playing
    deals no further hand, and the hand in play finishes."""
    with transaction.atomic():
        partie = Partie.objects.select_for_update(no_key=True).get(pk=partie_id)
        if partie.club_key != CASUAL:
            raise NotTableOwner(_("a club's table is closed with its soirée, by its organiser"))
        if partie.created_by_id != user.pk and not sees_all(user):
            raise NotTableOwner(_("only the table's creator (or staff) may close it"))
        if partie.status == Partie.Status.INVITING:
            _cancel(partie, at)
            return partie
        if partie.status != Partie.Status.PLAYING:
            raise InvitationClosed(_("this table is already {status}").format(status=partie.status))
    partie_stop_dealing(partie_id=partie.pk, until=at, at=at)
    partie.refresh_from_db()
    return partie


def _accept(partie: Partie, invitation: Invitation, at: datetime) -> None:
    """Check that the player may sit (free, with the buy-in in his wallet), then accept."""
    player = invitation.player
    assert player is not None
    busy = (Seat.objects.filter(partie__club_key=CASUAL, partie__status=Partie.Status.PLAYING,
                                player=player).exists()
            or Invitation.objects.filter(partie__club_key=CASUAL,
                                         partie__status=Partie.Status.INVITING, player=player,
                                         answer=Invitation.Answer.ACCEPTED)
            .exclude(partie=partie).exists())
    if busy:
        raise PlayerBusy(_("{name} already plays at, or has accepted, another casual table: "
                           "finish or leave it first").format(name=player.get_username()))
    held = chips.casual_wallet(player).balance
    if held < partie.buy_in:
        raise NotEnoughChips(_("{name} holds {held} chips in his casual wallet; this table's "
                               "buy-in is {buy_in}").format(name=player.get_username(),
                                                             held=held, buy_in=partie.buy_in))
    invitation.answer = Invitation.Answer.ACCEPTED
    invitation.answered_at = at
    invitation.save(update_fields=["answer", "answered_at"])


def _start_when_all_accepted(partie: Partie, at: datetime) -> None:
    offered = list(partie.invitations.select_related("player").order_by("number"))
    if any(i.answer != Invitation.Answer.ACCEPTED for i in offered):
        return
    # A bot brings what a person may: the buy-in, or the welcome chips at a table without one
    # (a bot with nothing would pay nothing it loses).
    seat_and_deal(partie=partie, players=[i.player for i in offered if i.player is not None],
                  bots=[i.bot for i in offered if i.player is None], buy_in_people=False,
                  deal_first_hand=True, at=at,
                  bot_stake=partie.buy_in or chips.casual_welcome_chips())


def _cancel(partie: Partie, at: datetime) -> None:
    partie.status = Partie.Status.CANCELLED
    partie.ended_at = at
    partie.save(update_fields=["status", "ended_at"])
