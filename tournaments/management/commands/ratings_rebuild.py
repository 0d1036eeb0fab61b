"""Recompute a season's ratings from its finished parties (``tournaments.ratings``)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from tournaments import ratings
from tournaments.models import Season


class Command(BaseCommand):
    help = ("Delete a season's ratings and rate every finished partie of its soirées again, in "
            "the order they ended; with --check, write nothing and report where the stored "
            "ratings differ from the recomputed ones (exit status 1 if they do).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--season", type=int, required=True, metavar="ID",
                            help="The season's id (see the admin site, or /seasons/ID/)")
        parser.add_argument("--check", action="store_true",
                            help="Compare only: the stored ratings must equal a rebuild's")

    def handle(self, *args: Any, **opts: Any) -> None:
        season = Season.objects.select_related("club").filter(pk=opts["season"]).first()
        if season is None:
            raise CommandError(f"no season {opts['season']}: give the id of an existing "
                               f"season (--season)")
        if opts["check"]:
            found = ratings.differences(season=season)
            for line in found:
                self.stdout.write(line)
            if found:
                raise CommandError(f"season {season.pk} ({season}): {len(found)} difference(s) "
                                   f"between the stored ratings and a rebuild")
            self.stdout.write(f"Season {season.pk} ({season}): the stored ratings are exactly "
                              f"a rebuild's.")
            return
        done = ratings.rebuild(season=season)
        parties = len({c.partie_id for c in done.changes})
        self.stdout.write(f"Season {season.pk} ({season}): {parties} partie(s) rated, "
                          f"{len(done.standings)} player(s).")
