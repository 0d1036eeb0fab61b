"""A partie played by bots through the services (demos, tests, benchmarks)."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from games.errors import GameError
from games.models import Hand, Partie
from games.services import deadline_fire, hand_deal, partie_start


class Command(BaseCommand):
    help = "Seat N bots at a new partie and play K hands through the game services."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--game", choices=["comet", "commere"], required=True)
        parser.add_argument("--players", type=int, required=True)
        parser.add_argument("--hands", type=int, required=True)
        parser.add_argument("--bots", default="heuristic",
                            help="Comma-separated bot names for seats 0, 1, … (repeated)")
        parser.add_argument("--buy-in", type=int, default=100)
        parser.add_argument("--options", default="{}", help="RULES.md options as JSON")

    def handle(self, *args: Any, **opts: Any) -> None:
        import json

        from django.conf import settings

        # This command drives the clock itself: no timer may play the same deadlines.
        settings.ACADEMIE_TIMERS = "off"

        names = [b for b in opts["bots"].split(",") if b]
        bots = [names[i % len(names)] for i in range(opts["players"])]
        try:
            options = json.loads(opts["options"])
        except json.JSONDecodeError as exc:
            raise CommandError(f"--options is not JSON: {exc}") from None
        key = "deals" if opts["game"] == "comet" else "rounds"
        options.setdefault(key, opts["hands"])
        started = time.perf_counter()
        clock = timezone.now()
        try:
            partie = partie_start(
                game=opts["game"], players=[], bots=bots, options=options,
                buy_in=opts["buy_in"], table_label="bots", at=clock,
                pause_between_hands=timedelta(0), comet_window=timedelta(0),
                forced_move_delay=timedelta(0),
            )
        except GameError as exc:
            raise CommandError(str(exc)) from None
        # Bots never wait; "timeout" bots wait for their deadline, which this loop plays at once
        # by moving its own clock past it (the same service the timers call).
        while True:
            partie.refresh_from_db()
            if partie.status == Partie.Status.OVER:
                break
            hand = partie.hands.order_by("-number").first()
            if hand is not None and hand.status == Hand.Status.PLAYING:
                clock = max(clock, hand.deadline or clock) + timedelta(microseconds=1)
                deadline_fire(hand_id=hand.id, seq=hand.last_seq, at=clock)
                continue
            clock += timedelta(microseconds=1)
            hand_deal(partie=partie, at=clock)
        hands = partie.hands.count()
        events = sum(h.last_seq for h in partie.hands.all())
        seconds = time.perf_counter() - started
        self.stdout.write(f"partie {partie.id}: {hands} hand(s), {events} events, "
                          f"{seconds:.2f} s")
