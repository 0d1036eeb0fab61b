"""Export finished hands as HAND_RECORD.md documents, one file per hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from games.errors import HandNotOver
from games.models import Hand
from games.selectors import hand_record


class Command(BaseCommand):
    help = "Write the record of each finished hand to DIR/<hand id>.json (or stdout for one)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("hand_ids", nargs="*", help="Hand ids (UUIDs)")
        parser.add_argument("--all", action="store_true", help="Every finished hand")
        parser.add_argument("--out", type=Path, help="Directory to write the records into")

    def handle(self, *args: Any, **opts: Any) -> None:
        if opts["all"] == bool(opts["hand_ids"]):
            raise CommandError("name hand ids, or --all (not both)")
        if opts["all"]:
            if opts["out"] is None:
                raise CommandError("--all needs --out DIR")
            hands = Hand.objects.filter(status=Hand.Status.OVER).select_related("partie",
                                                                                 "secret")
        else:
            try:
                hands = [Hand.objects.select_related("partie", "secret").get(pk=h)
                         for h in opts["hand_ids"]]
            except (Hand.DoesNotExist, ValidationError) as exc:
                raise CommandError(f"no such hand: {exc}") from None
        written = 0
        for hand in hands:
            try:
                record = hand_record(hand=hand)
            except HandNotOver as exc:
                raise CommandError(f"hand {hand.id}: {exc}") from None
            text = json.dumps(record, ensure_ascii=False, indent=1)
            if opts["out"] is None:
                self.stdout.write(text)
            else:
                opts["out"].mkdir(parents=True, exist_ok=True)
                (opts["out"] / f"{hand.id}.json").write_text(text, encoding="utf-8")
            written += 1
        if opts["out"] is not None:
            self.stdout.write(f"{written} record(s) written to {opts['out']}")
