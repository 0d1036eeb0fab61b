"""Re-verify every finished hand from its stored events and seed, and reconcile the ledger."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from games.engine.verify import Discrepancy, verify_record
from games.models import Hand
from games.selectors import hand_record
from games.services.chips import reconcile_hand


class Command(BaseCommand):
    help = ("Verify every finished hand's record (deal, moves, payments, hash chain) and check "
            "that the ledger holds exactly the payments of its events. Exit 1 on a discrepancy.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--quiet", action="store_true", help="Print failures only")

    def handle(self, *args: Any, **opts: Any) -> None:
        failures = 0
        checked = 0
        hands = Hand.objects.filter(status=Hand.Status.OVER).select_related("partie", "secret")
        for hand in hands.order_by("started_at", "number").iterator():
            checked += 1
            problems = []
            try:
                digest = verify_record(hand_record(hand=hand))
            except Discrepancy as exc:
                problems.append(f"record: {exc}")
                digest = "-"
            problems.extend(reconcile_hand(hand=hand))
            if problems:
                failures += 1
                where = f"hand {hand.id} ({hand.partie.game} #{hand.number})"
                for p in problems:
                    self.stdout.write(f"FAIL {where}: {p}")
            elif not opts["quiet"]:
                self.stdout.write(f"OK {digest} hand {hand.id}")
        self.stdout.write(f"{checked} finished hand(s) checked, {failures} with discrepancies")
        if failures:
            raise CommandError(f"{failures} hand(s) failed verification")
