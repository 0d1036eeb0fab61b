"""Engine benchmark: Comet hands/s, Ma commère rounds/s, replayed events/s, on one core.

    python bench/run.py engine [--hands 2000] [--repeat 3]

Bots play full hands through games.engine.play.play_hand (heuristic bots, 4 seats for Comet,
7 for Ma commère), with chips plentiful so that the partie never stops. Replay folds the stored
events of those hands through ``apply`` again, as the service does on every command.
Each figure is the best of ``--repeat`` runs. Exits non-zero if no hand was played.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time

from common import ROOT, nothing_measured

sys.path.insert(0, str(ROOT))

from games.engine.bots import make_bot  # noqa: E402
from games.engine.deal import commitment, deal_from_seed  # noqa: E402
from games.engine.play import play_hand  # noqa: E402
from games.engine.registry import get_game  # noqa: E402


def play_many(game_name: str, players: int, hands: int, seed: int) -> tuple[float, list]:
    game = get_game(game_name)
    options = game.normalise_options({})
    rng = random.Random(seed)
    bots = [make_bot("heuristic", random.Random(rng.random())) for _ in range(players)]
    seats = [{"seat": i, "player": f"p{i}"} for i in range(players)]
    chips = {str(i): 10_000 for i in range(players)}
    deals = []
    for k in range(hands):
        seed_hex = rng.randbytes(32).hex()
        deck, _ = deal_from_seed(game_name, seed_hex, players)
        deals.append((deck, k % players, commitment(seed_hex)))
    played = []
    start = time.perf_counter()
    for deck, dealer, commit in deals:
        _, events = play_hand(
            game, deck=deck, dealer=dealer, seats=seats, options=options, chips_before=chips,
            pot_before=0, commitment=commit, bots=bots,
            comet_payment_due=1 if game_name == "comet" else None,
        )
        played.append((deck, events))
    return time.perf_counter() - start, played


def replay_all(game_name: str, played: list) -> tuple[float, int]:
    game = get_game(game_name)
    n_events = sum(len(events) for _, events in played)
    start = time.perf_counter()
    for deck, events in played:
        game.replay(deck, events)
    return time.perf_counter() - start, n_events


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="run.py engine")
    parser.add_argument("--hands", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    if args.hands < 1 or args.repeat < 1:
        nothing_measured(f"--hands {args.hands}, --repeat {args.repeat}: no hand to play")
    out: dict[str, object] = {
        "python": platform.python_version(), "cpu_count": os.cpu_count(), "hands": args.hands,
    }
    for game_name, players, label in (("comet", 4, "comet_hands_per_s"),
                                      ("commere", 7, "commere_rounds_per_s")):
        best_play = best_replay = float("inf")
        n_events = 0
        for r in range(args.repeat):
            secs, played = play_many(game_name, players, args.hands, seed=r)
            best_play = min(best_play, secs)
            rsecs, n_events = replay_all(game_name, played)
            best_replay = min(best_replay, rsecs)
        if not n_events or not best_play or not best_replay:
            nothing_measured(f"{game_name}: no event played or replayed")
        out[label] = round(args.hands / best_play)
        out[f"{game_name}_events_per_hand"] = round(n_events / args.hands, 1)
        out[f"{game_name}_replay_events_per_s"] = round(n_events / best_replay)
    print(json.dumps(out))
