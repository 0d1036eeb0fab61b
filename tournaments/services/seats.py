"""The organiser's changes at the tables between hands, and his words to the room."""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils.translation import gettext as _

from games.engine.registry import get_game
from games.models import Partie
from games.services import partie_stop_dealing

from ..errors import SoireeError, SoireeState
from ..models import Announcement, Soiree
from .door import soiree_seats_changed
from .soirees import _latest_tables


def seat_change(*, soiree: Soiree, user: AbstractBaseUser, kind: str, at: datetime,
                to_table: int | None = None) -> Announcement:
    """The organiser asks that a seated player move to ``to_table``, be replaced by a bot, or
    be removed (one away or absent). It is carried out between hands: the tables concerned
    deal no hand after the one in play, and start their next partie with the change
    (``soiree_tick``). Asking the same again is answered with the change already asked."""
    kinds = (Announcement.Kind.MOVE, Announcement.Kind.REPLACE, Announcement.Kind.REMOVE)
    if kind not in kinds:
        raise SoireeError(_("Unknown change %(kind)s: one of %(kinds)s.")
                          % {"kind": kind, "kinds": ", ".join(kinds)})
    with transaction.atomic():
        soiree = Soiree.objects.select_for_update(no_key=True).get(pk=soiree.pk)
        if soiree.status != Soiree.Status.OPEN or soiree.close_asked_at:
            raise SoireeState(_("The soirée is not in play: seats change only while it is."))
        name = user.get_username()
        latest = _latest_tables(soiree)
        here = next((n for n, t in latest.items() if t.partie.status == Partie.Status.PLAYING
                     and t.partie.seats.filter(player=user, bot="").exists()), None)
        if here is None:
            raise SoireeError(_("%(name)s is not seated at a table in play.") % {"name": name})
        pending = Announcement.objects.filter(soiree=soiree, player=user,
                                              done_at__isnull=True).first()
        if pending is not None:
            if (pending.kind, pending.to_table) == (kind, to_table):
                return pending  # the same request again (a double click)
            raise SoireeState(_("A change is already asked for %(name)s; it is carried out "
                                "after the hand in play.") % {"name": name})
        lo, hi = get_game(soiree.game).MIN_SEATS, get_game(soiree.game).MAX_SEATS
        stop = [here]
        if kind == Announcement.Kind.MOVE:
            if to_table not in latest or to_table == here:
                raise SoireeError(_("Choose another table of this soirée than table %(here)s: "
                                    "%(tables)s.") % {"here": here, "tables": ", ".join(
                                        str(n) for n in sorted(latest) if n != here)})
            target = latest[to_table].partie.seats.count()
            if target + 1 > hi:
                raise SoireeError(_("Table %(table)s has %(taken)s seats taken: %(most)s at "
                                    "most at %(game)s.") % {
                    "table": to_table, "taken": target, "most": hi,
                    "game": soiree.get_game_display()})
            left = latest[here].partie.seats.count() - 1
            src, dst = (latest[n].partie.seats.filter(bot="").count() for n in (here, to_table))
            if abs((dst + 1) - (src - 1)) > 1:
                raise SoireeError(_("Table %(to)s would have %(there)s players and table "
                                    "%(here)s %(left)s: tables stay within one player of each "
                                    "other.") % {"to": to_table, "there": dst + 1,
                                                 "here": here, "left": src - 1})
            if left < lo and not soiree.bots_allowed:
                raise SoireeError(_("Table %(here)s would keep %(left)s player(s), fewer than "
                                    "the %(least)s %(game)s needs, and this soirée allows no "
                                    "bots.") % {"here": here, "left": left, "least": lo,
                                                "game": soiree.get_game_display()})
            if latest[to_table].partie.status == Partie.Status.PLAYING:
                stop.append(to_table)
        elif to_table is not None:
            raise SoireeError(_("Only a move names a table."))
        change = Announcement.objects.create(
            soiree=soiree, at=at, kind=kind, player=user, from_table=here, to_table=to_table,
            reason=Announcement.Reason.ORGANISER)
        for number in stop:
            partie_stop_dealing(partie_id=latest[number].partie_id, until=at, at=at)
        soiree_seats_changed(soiree=soiree)
        return change

def announce(*, soiree: Soiree, text: str, at: datetime) -> Announcement:
    """The organiser's words to the room screen and the tables."""
    text = text.strip()
    if not text:
        raise SoireeError(_("An announcement needs a text."))
    if len(text) > 200:
        raise SoireeError(_("An announcement is at most 200 characters, not %(n)s.")
                          % {"n": len(text)})
    if soiree.status == Soiree.Status.CLOSED:
        raise SoireeState(_("This soirée is over."))
    return Announcement.objects.create(soiree=soiree, at=at, kind=Announcement.Kind.MESSAGE,
                                       text=text, done_at=at)
