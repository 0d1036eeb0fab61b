"""Play one partie of bots and print a JSON summary.

    python -m games.engine.simulate --game comet|commere --players N --hands K --seed S
        [--bots heuristic,random,timeout,…] [--options JSON] [--chips C] [--export DIR]
        [--shares none|all|random] [--format 1|2|3]

``--bots`` names the bots of seats 0, 1, 2, …, repeated round the table. Each hand's seed is
derived from S and the hand number, so a run is reproducible. With ``--export`` one record per
hand is written as ``DIR/<hand number>.json``.

``--format`` is the record's version, 3 by default (HAND_RECORD.md). In versions 2 and 3,
``--shares`` says who sends a share of randomness: no seat (the default), every seat, or each
seat with an even chance. Which seats send and their shares are drawn from S, so that a run
repeats too.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .base import Event
from .bots import make_bot
from .deal import commitment, deal_from_seed
from .play import play_hand, play_out
from .record import build_record, iso_z, seal_all
from .registry import get_game
from .shares import DEAL, first_dealer_v2, share_event, shared_deck

SHARE_MODES = ("none", "all", "random")
VERSIONS = (1, 2, 3)


def hand_seed(partie_seed: str, number: int) -> str:
    return hashlib.sha256(f"{partie_seed}:{number}".encode()).hexdigest()


def hand_shares(partie_seed: str, number: int, players: int, mode: str,
                rng: random.Random) -> dict[int, str]:
    """The shares the seats send for a simulated version-2 hand, by seat."""
    if mode not in SHARE_MODES:
        raise ValueError(f"--shares is one of {', '.join(SHARE_MODES)}")
    seats = [s for s in range(players)
             if mode == "all" or (mode == "random" and rng.random() < 0.5)]
    return {s: hashlib.sha256(f"{partie_seed}:{number}:share:{s}".encode()).hexdigest()
            for s in seats}


@dataclass
class Partie:
    """The running totals of a partie between hands (chips, pot, dealer, Comet payment)."""

    game: str
    n: int
    options: dict[str, Any]
    chips: list[int]
    pot: int = 0
    dealer: int | None = None
    comet_due: int | None = None
    comet_played_last: bool | None = None
    hands: int = 0
    events: int = 0
    records: list[dict[str, Any]] = field(default_factory=list)

    def apply_payments(self, events: list[Event]) -> None:
        for e in events:
            if e.type != "pay":
                continue
            amount = e.data["amount"]
            src, dst = e.data["from"], e.data["to"]
            if src == "pot":
                self.pot -= amount
            else:
                self.chips[src] -= amount
            if dst == "pot":
                self.pot += amount
            else:
                self.chips[dst] += amount

    def share_pot(self) -> list[int]:
        """Ma commère: the pot left after a void last round, shared equally (RULES.md §1)."""
        if self.pot <= 0 or self.dealer is None:
            return [0] * self.n
        share, rest = divmod(self.pot, self.n)
        gains = [share] * self.n
        for k in range(rest):  # one chip each, from the last banker's next seat
            gains[(self.dealer + 1 + k) % self.n] += 1
        for seat in range(self.n):
            self.chips[seat] += gains[seat]
        self.pot = 0
        return gains


def run(
    *, game_name: str, players: int, hands: int, seed: str, bots: list[str],
    options: dict[str, Any] | None, chips: int, export: Path | None, shares: str | None = None,
    version: int = 3,
) -> dict[str, Any]:
    if version not in VERSIONS:
        raise ValueError(f"--format is one of {', '.join(map(str, VERSIONS))}")
    if version == 1 and shares is not None:
        raise ValueError("version-1 hands have no shares: --shares needs --format 2 or 3")
    if version > 1 and shares is None:
        shares = "none"
    game = get_game(game_name)
    if not game.MIN_SEATS <= players <= game.MAX_SEATS:
        raise ValueError(f"{game_name} is for {game.MIN_SEATS} to {game.MAX_SEATS} players")
    opts = game.normalise_options(options or {})
    limit = opts.get("deals") or opts.get("rounds")
    if limit:
        hands = min(hands, limit)
    rng = random.Random(seed)
    share_rng = random.Random(f"{seed}:shares")
    seat_bots = [make_bot(bots[i % len(bots)], random.Random(rng.random())) for i in range(players)]
    partie_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"academie-sim:{game_name}:{seed}"))
    names = [{"seat": i, "player": f"{seat_bots[i].name}-{i}"} for i in range(players)]
    p = Partie(game=game_name, n=players, options=opts, chips=[chips] * players)
    started = time.perf_counter()
    for number in range(1, hands + 1):
        if opts.get("until_broke") and min(p.chips) < opts["ante"]:
            break  # "as soon as a player has fewer chips than the ante at the start"
        seed_hex = hand_seed(seed, number)
        sent: dict[int, str] = {}
        if shares is None:
            deck, first_dealer = deal_from_seed(game_name, seed_hex, players)
        else:
            sent = hand_shares(seed, number, players, shares, share_rng)
            deck = shared_deck(version, game_name, seed_hex, sent)
            first_dealer = first_dealer_v2(seed_hex, players)
        p.dealer = first_dealer if p.dealer is None else (p.dealer + 1) % players
        if game_name == "comet":
            p.comet_due = game.next_comet_payment_due(  # type: ignore[attr-defined]
                opts, p.comet_due, p.comet_played_last)
        chips_before = {str(s): p.chips[s] for s in range(players)}
        commit = commitment(seed_hex)
        start: dict[str, Any] = {
            "deck": deck, "dealer": p.dealer, "seats": names, "options": opts,
            "chips_before": chips_before, "pot_before": p.pot, "commitment": commit,
            "comet_payment_due": p.comet_due,
        }
        if shares is None:
            state, events = play_hand(game, bots=seat_bots, **start)
        else:
            # hand_started, the shares, the deal, then the antes and the play as in version 1.
            opening = game.begin(**{k: v for k, v in start.items() if v is not None})
            events = [opening[0], *(share_event(s, sent[s]) for s in sorted(sent)),
                      Event(DEAL, "service", {"contributors": sorted(sent)}), *opening[1:]]
            state, events = play_out(game, game.replay(deck, opening), events, bots=seat_bots)
        if game_name == "comet":
            p.comet_played_last = game.comet_played(state)  # type: ignore[attr-defined]
        p.apply_payments(events)
        p.hands += 1
        p.events += len(events)
        if export is not None:
            at = iso_z(datetime.now(UTC))
            sealed = seal_all(events, commitment=commit, at=at,
                              seed=seed_hex if version == 3 else None)
            record = build_record(
                game=game_name, hand=str(uuid.uuid5(uuid.NAMESPACE_URL, seed_hex)),
                table="simulator", partie=partie_id, number=number, seed=seed_hex, deck=deck,
                events=sealed, version=version,
            )
            export.mkdir(parents=True, exist_ok=True)
            (export / f"{number}.json").write_text(
                json.dumps(record, ensure_ascii=False, indent=1), encoding="utf-8")
    shared = p.share_pot() if game_name == "commere" else [0] * players
    seconds = time.perf_counter() - started
    return {
        "game": game_name,
        "players": players,
        "hands": p.hands,
        "events": p.events,
        "chips": {str(s): p.chips[s] for s in range(players)},
        "pot": p.pot,
        "pot_shared_at_end": {str(s): shared[s] for s in range(players)},
        "chips_total": sum(p.chips) + p.pot,
        "seconds": round(seconds, 4),
        "hands_per_second": round(p.hands / seconds, 1) if seconds else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m games.engine.simulate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", required=True, choices=["comet", "commere"])
    parser.add_argument("--players", type=int, required=True)
    parser.add_argument("--hands", type=int, required=True)
    parser.add_argument("--seed", required=True)
    parser.add_argument("--bots", default="heuristic")
    parser.add_argument("--options", default="{}", help="RULES.md options as JSON")
    parser.add_argument("--chips", type=int, default=100)
    parser.add_argument("--export", type=Path)
    parser.add_argument("--shares", choices=SHARE_MODES,
                        help="who sends a share of randomness (versions 2 and 3; none by "
                             "default)")
    parser.add_argument("--format", type=int, choices=VERSIONS, default=3, dest="version",
                        help="the record's version (3 by default)")
    args = parser.parse_args(argv)
    try:
        options = json.loads(args.options)
        if not isinstance(options, dict):
            raise ValueError("--options must be a JSON object")
        summary = run(
            game_name=args.game, players=args.players, hands=args.hands, seed=args.seed,
            bots=[b.strip() for b in args.bots.split(",") if b.strip()], options=options,
            chips=args.chips, export=args.export, shares=args.shares, version=args.version,
        )
    except (ValueError, json.JSONDecodeError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
