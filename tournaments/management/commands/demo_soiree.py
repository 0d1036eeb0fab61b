"""Demo data: a club, its members, a season and a soirée of it that starts now with bots in
the seats."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser
from django.db.models import Q
from django.utils import timezone

from tournaments.models import Club, Membership, Season, Soiree
from tournaments.services import checkin, club_create, membership_add, soiree_create


class Command(BaseCommand):
    help = ("Create the demo club (organiser 'olga', players, an auditor) and a soirée starting "
            "now whose tables are filled with bots, so that an evening runs by itself.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--game", choices=["comet", "commere"], default="comet")
        # Long enough to outlast a newcomer's arrival and his first hands.
        parser.add_argument("--minutes", type=float, default=120, help="Length of the evening")
        parser.add_argument("--tables", type=int, default=3, help="Tables of bots to open")
        parser.add_argument("--human", metavar="USERNAME",
                            help="Also check in this person (password: USERNAME-pass)")
        # A person's time for each decision; the bots play at once whatever it is, so the
        # tables of bots stay fast (their pace is --pause).
        parser.add_argument("--move-timeout", type=float, default=30.0,
                            help="Seconds a person has for each decision (default 30)")
        parser.add_argument("--pause", type=float, default=2.0)
        parser.add_argument("--deals", type=int, default=8, help="Hands per partie")
        parser.add_argument("--if-empty", action="store_true",
                            help="Do nothing if a soirée is under way or still to come (for "
                                 "`make run`): one that has ended is followed by a new one")
        parser.add_argument("--addr", default="127.0.0.1:8000",
                            help="The address the service is served at, to print")

    def handle(self, *args: Any, **opts: Any) -> None:
        live = Soiree.objects.filter(Q(status=Soiree.Status.OPEN)
                                     | Q(status=Soiree.Status.SCHEDULED,
                                         ends_at__gt=timezone.now()))
        if opts["if_empty"] and live.exists():
            self.stdout.write(f"A demo soirée is under way: http://{opts['addr']}/ "
                              f"(player: alice / alice-pass; organiser: olga / olga-pass).")
            return
        users = get_user_model().objects
        now = timezone.now()
        olga, created = users.get_or_create(username="olga", defaults={"is_staff": True,
                                                                        "is_superuser": True})
        if created:
            olga.set_password("olga-pass")
            olga.save()
        club = Club.objects.filter(slug="demo").first() or club_create(
            name="Cercle de démonstration", slug="demo", organiser=olga)
        auditor, _ = users.get_or_create(username="arbitre")
        auditor.set_password("arbitre-pass")
        auditor.save()
        membership_add(club=club, user=auditor, role=Membership.Role.AUDITOR)
        # A season, so that the evening's parties are rated as they end (tournaments/ratings.py)
        # and the season page shows the ratings.
        today = timezone.localdate(now, club.zone())
        season = (Season.objects.filter(club=club, starts_on__lte=today, ends_on__gte=today)
                  .first()
                  or Season.objects.create(club=club, name=f"Saison {today.year}",
                                           starts_on=today.replace(month=1, day=1),
                                           ends_on=today.replace(month=12, day=31)))
        soiree = soiree_create(
            club=club, name=f"Soirée de démonstration {timezone.localtime(now, club.zone()):%H:%M}",
            starts_at=now,
            ends_at=now + timedelta(minutes=opts["minutes"]), game=opts["game"],
            buy_in=50, move_timeout=timedelta(seconds=opts["move_timeout"]),
            pause_between_hands=timedelta(seconds=opts["pause"]),
            # A Comet window a person can decide in, short enough for the runs to flow: at a
            # table with a person every decision where the Comet may be played waits it alike
            # (its holder's own choice too), so that its timing never shows who holds it.
            forced_move_delay=timedelta(seconds=0.5), comet_window=timedelta(seconds=3),
            deals_per_partie=opts["deals"], bots_allowed=True, min_tables=opts["tables"],
            created_by=olga, season=season,
        )
        names = [opts["human"]] if opts["human"] else []
        for name in names:
            user, made = users.get_or_create(username=name)
            if made:
                user.set_password(f"{name}-pass")
                user.save()
            membership_add(club=club, user=user, role=Membership.Role.PLAYER)
            checkin(soiree=soiree, user=user, at=now)
        self.stdout.write(
            f"Soirée '{soiree.name}' ({soiree.game}) starts now and ends at "
            f"{timezone.localtime(soiree.ends_at, club.zone()):%H:%M}: {opts['tables']} "
            f"table(s) of bots"
            f"{' and a seat for ' + names[0] if names else ''}.\n"
            f"Watch it at http://{opts['addr']}/ (organiser: olga / olga-pass)."
        )
