"""The *fort* bot (ISMCTS): its strength against the heuristic bot, and its speed.

    python bench/run.py ismcts [--hands 2000] [--processes 2] [--curve-hands 500]
                               [--timed-hands 60] [--games comet,commere]

Strength: in every hand one seat is *fort* and the others *habile* (the heuristic bot). Seats
are rotated as in duplicate bridge: each deal (from a fixed seed) is played once with the fort
bot in each seat, so that every hand of cards is played once by the fort bot and by the
heuristic bot in the other games, and the luck of the deal cancels. For each deal the
difference is the fort seat's mean chips won or lost per hand minus the heuristic seats'
mean; the figure is its mean with a 95 % confidence interval (normal, over deals), and the
win rates of both. The curve repeats it at other numbers of playouts on fewer hands.

Speed: each decision of the fort bot at the default number of playouts, timed in this
process alone (one core), against the baseline of the same run: a whole hand played out by
heuristic bots from its deal (what one playout costs at most).

Exits non-zero if it measured nothing (no decision timed, fewer than two deals).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import platform
import random
import statistics
import sys
import time
from typing import Any

from common import ROOT, nothing_measured

sys.path.insert(0, str(ROOT))

from games.engine import ismcts  # noqa: E402
from games.engine.bots import IsmctsBot, make_bot  # noqa: E402
from games.engine.deal import commitment, deal_from_seed  # noqa: E402
from games.engine.play import play_hand  # noqa: E402
from games.engine.registry import get_game  # noqa: E402

PLAYERS = {"comet": 4, "commere": 5}
#: The numbers of playouts of the curve of strength, by game (the default among them).
CURVE = {"comet": (15, 30, 60, 120, 240), "commere": (30, 120, 300, 600, 1200)}


def _setup(game_name: str, k: int) -> dict[str, Any]:
    """Deal ``k``: its deck from a fixed seed, and its dealer (turning with the deals)."""
    game = get_game(game_name)
    n = PLAYERS[game_name]
    seed = random.Random(f"ismcts-bench:{game_name}:{k}").randbytes(32).hex()
    deck, _ = deal_from_seed(game_name, seed, n)
    return dict(deck=deck, dealer=k % n,
                seats=[{"seat": i, "player": f"p{i}"} for i in range(n)],
                options=game.normalise_options({}),
                chips_before={str(i): 10_000 for i in range(n)}, pot_before=0,
                commitment=commitment(seed))


def one_hand(args: tuple[str, int, int, int | None]) -> tuple[float, float, bool, float]:
    """Deal ``k`` with the fort bot in seat ``fort``: (fort's net, heuristic seats' mean net,
    fort won, heuristic seats' mean wins)."""
    game_name, k, fort, playouts = args
    game = get_game(game_name)
    n = PLAYERS[game_name]
    bots = [IsmctsBot(random.Random(f"{k}:{fort}:{i}"), playouts) if i == fort
            else make_bot("heuristic", random.Random(f"{k}:{fort}:{i}")) for i in range(n)]
    state, _ = play_hand(game, bots=bots, **_setup(game_name, k))
    result = game.result(state)
    net = {int(s): v for s, v in result["net"].items()}
    others = [s for s in range(n) if s != fort]
    winner = result["winner"]
    return (net[fort], sum(net[s] for s in others) / len(others), winner == fort,
            sum(winner == s for s in others) / len(others))


def strength(game_name: str, hands: int, playouts: int | None, processes: int,
             offset: int = 0) -> dict[str, Any]:
    n = PLAYERS[game_name]
    deals = hands // n
    if deals < 2:  # a confidence interval needs two deals
        nothing_measured(f"{game_name}: {hands} hands make {deals} deal(s) of {n} hands")
    jobs = [(game_name, offset + k, fort, playouts) for k in range(deals) for fort in range(n)]
    with multiprocessing.Pool(processes) as pool:
        rows = pool.map(one_hand, jobs, chunksize=n)
    # One difference per deal: its n hands, the fort bot in each seat once.
    diffs = [statistics.fmean(f - h for f, h, _, _ in rows[k * n:(k + 1) * n])
             for k in range(deals)]
    mean = statistics.fmean(diffs)
    half = 1.96 * statistics.stdev(diffs) / math.sqrt(len(diffs))
    return {
        "hands": len(rows),
        "deals": deals,
        "playouts": playouts or ismcts.default_playouts(game_name),
        "fort_chips_per_hand": round(statistics.fmean(r[0] for r in rows), 3),
        "habile_chips_per_hand": round(statistics.fmean(r[1] for r in rows), 3),
        "difference": round(mean, 3),
        "ci95": [round(mean - half, 3), round(mean + half, 3)],
        "fort_win_rate": round(statistics.fmean(r[2] for r in rows), 4),
        "habile_win_rate": round(statistics.fmean(r[3] for r in rows), 4),
    }


def speed(game_name: str, hands: int) -> dict[str, Any]:
    game = get_game(game_name)
    n = PLAYERS[game_name]
    times: list[float] = []
    real = ismcts.choose

    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        move = real(*args, **kwargs)
        times.append(time.perf_counter() - start)
        return move

    ismcts.choose = timed  # type: ignore[assignment]
    try:
        for k in range(hands):
            bots = [IsmctsBot(random.Random(f"{k}:{i}")) if i == (k // n) % n
                    else make_bot("heuristic", random.Random(f"{k}:{i}")) for i in range(n)]
            play_hand(game, bots=bots, **_setup(game_name, 10_000 + k))
    finally:
        ismcts.choose = real  # type: ignore[assignment]
    baseline: list[float] = []
    for k in range(hands):
        bots = [make_bot("heuristic", random.Random(f"{k}:{i}")) for i in range(n)]
        start = time.perf_counter()
        play_hand(game, bots=bots, **_setup(game_name, 10_000 + k))
        baseline.append(time.perf_counter() - start)
    if not times or not baseline:
        nothing_measured(f"{game_name}: the fort bot took no decision in {hands} hands")
    times.sort()
    hand_ms = 1000 * statistics.fmean(baseline)

    def ms(q: float) -> float:
        return round(1000 * times[min(len(times) - 1, int(q * len(times)))], 1)

    return {
        "decisions": len(times),
        "playouts": ismcts.default_playouts(game_name),
        "p50_ms": ms(0.5), "p95_ms": ms(0.95), "p99_ms": ms(0.99),
        "max_ms": round(1000 * times[-1], 1),
        "heuristic_hand_ms": round(hand_ms, 2),
        "p50_over_hand": round(ms(0.5) / hand_ms, 1),
    }


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="bench/run.py ismcts")
    parser.add_argument("--hands", type=int, default=2000, help="0: the speed figures only")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--curve-hands", type=int, default=500)
    parser.add_argument("--timed-hands", type=int, default=60)
    parser.add_argument("--games", default="comet,commere")
    args = parser.parse_args(argv)
    out: dict[str, Any] = {"python": platform.python_version()}
    for game_name in args.games.split(","):
        print(f"{game_name}: speed", file=sys.stderr)
        figures: dict[str, Any] = {"speed": speed(game_name, args.timed_hands)}
        out[game_name] = figures
        if not args.hands:  # --hands 0: the decision times alone
            continue
        print(f"{game_name}: strength over {args.hands} hands", file=sys.stderr)
        figures["strength"] = strength(game_name, args.hands, None, args.processes)
        curve = []
        for playouts in CURVE[game_name]:
            print(f"{game_name}: {playouts} playouts", file=sys.stderr)
            # Other deals than the main figure's, so that the curve is a sample of its own.
            curve.append(strength(game_name, args.curve_hands, playouts, args.processes,
                                  offset=1_000_000 + playouts))
        figures["curve"] = curve
        out[game_name] = figures
        print(json.dumps({game_name: figures}), file=sys.stderr)
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1:])
