"""What sealing and signing (HAND_RECORD.md, version 3) add to a move.

    python bench/run.py receipts [--tables 8] [--moves 1500]

Database ``<name>_receipts``. One process plays Ma commère tables of four people through the
move path as the API runs it: ``games.services.move_play`` (lock, replay, decide, append with
each event's hash, post the chips, commit, and on commit the live frames, each with its
receipt) and then the answer's view (``selectors.view_of``, which signs the answer's receipt).
Half the tables deal version-2 hands, the other half version-3 hands; their moves alternate,
so that both halves see the same machine at the same moments. A new hand's shares are sent as
the people's pages would, and not timed.

Figures: each version's p50 and p90 per move in milliseconds, and the p50's difference. Exits
non-zero if either half played no move.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
import uuid
from typing import Any

import common


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="bench/run.py receipts")
    parser.add_argument("--tables", type=int, default=8, help="tables per version")
    parser.add_argument("--moves", type=int, default=1500, help="timed moves per version")
    args = parser.parse_args(argv)
    url = common.database_url("receipts")
    common.ensure_database(url, fresh=True)
    common.django_setup(url)

    from django.utils import timezone

    from games import selectors
    from games.engine.shares import is_shuffling
    from games.models import Hand
    from games.services import move_play, parties, share_send, store

    def deal_in(version: int) -> None:
        # The version every hand dealt now gets: the tables of each half deal their own.
        parties.RECORD_FORMAT = version

    tables = {}
    for version in (2, 3):
        deal_in(version)
        tables[version] = common.make_tables(args.tables, 4, seed=version)
    rng = random.Random(0)
    times: dict[int, list[float]] = {2: [], 3: []}

    def step(version: int, table: dict[str, Any]) -> None:
        hand = Hand.objects.select_related("partie", "secret").get(pk=table["hand"])
        if hand.status == Hand.Status.OVER:
            table["hand"] = common.following_hand(table, hand)
            return
        loaded = store.load(hand)
        if is_shuffling(loaded.state):
            for user in table["users"]:
                share_send(hand_id=hand.pk, user=user, share=rng.randbytes(32).hex(),
                           at=timezone.now())
            return
        seat = loaded.game.to_act(loaded.state)[0]
        move = rng.choice(loaded.game.legal_moves(loaded.state)[seat])
        began = time.perf_counter()
        played = move_play(hand_id=hand.pk, user=table["users"][seat], move=move,
                           seq=hand.last_seq, command_id=uuid.uuid4(), at=timezone.now())
        selectors.view_of(hand=played.hand, loaded=played.loaded, seat=played.seat,
                          next_hand=played.response.get("next_hand"))
        times[version].append(time.perf_counter() - began)
        if played.response["next_hand"]:
            table["hand"] = played.response["next_hand"]["id"]

    i = 0
    while min(len(t) for t in times.values()) < args.moves and i < 40 * args.moves:
        for version in (2, 3):
            deal_in(version)
            step(version, tables[version][i % args.tables])
        i += 1
        if i % 500 == 0:
            print(f"{i} rounds: {len(times[2])} / {len(times[3])} moves", file=sys.stderr)
    if not all(times.values()):
        sys.exit("no move was played: nothing was measured")

    def ms(values: list[float], q: int) -> float:
        return round(statistics.quantiles(values, n=100)[q - 1] * 1000, 3)

    figures = {f"v{v}_{name}_ms": ms(times[v], q) for v in (2, 3)
               for name, q in (("p50", 50), ("p90", 90))}
    figures["moves_per_version"] = min(len(t) for t in times.values())
    figures["p50_added_ms"] = round(figures["v3_p50_ms"] - figures["v2_p50_ms"], 3)
    print(json.dumps(figures))


if __name__ == "__main__":
    main(sys.argv[1:])
