"""Compute the soirées' read models again from their events and the ledger
(``tournaments.projections``), or, with ``--check``, compare the stored ones with that."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from tournaments import projections
from tournaments.models import Soiree


class Command(BaseCommand):
    help = ("Replace every soirée's read models (its standings, the results sheet's figures, "
            "its chart) by those computed again from its hands' events, the ledger and its "
            "rulings; with --check, write nothing and fail (exit status 1) naming the first "
            "difference between the stored and the computed ones.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--soiree", type=int, action="append", metavar="ID",
                            help="Only this soirée (again for more); all of them by default")
        parser.add_argument("--check", action="store_true",
                            help="Compare only: the stored read models must equal a rebuild's")

    def handle(self, *args: Any, **opts: Any) -> None:
        soirees = Soiree.objects.select_related("club").order_by("pk")
        if opts["soiree"]:
            soirees = soirees.filter(pk__in=opts["soiree"])
            missing = set(opts["soiree"]) - set(soirees.values_list("pk", flat=True))
            if missing:
                raise CommandError(f"no soirée {', '.join(map(str, sorted(missing)))}")
        done = 0
        for soiree in soirees.iterator():
            if opts["check"]:
                found = projections.projection_differences(soiree=soiree)
                if found:
                    raise CommandError(f"{found[0]} ({len(found)} difference(s) in this "
                                       f"soirée's read models)")
            else:
                projections.projection_rebuild(soiree=soiree)
            done += 1
        if opts["check"]:
            self.stdout.write(f"{done} soirée(s): the stored read models are exactly a "
                              f"rebuild's.")
        else:
            self.stdout.write(f"{done} soirée(s): read models rebuilt.")
