"""Set up the HTTP run of bench/api_bench.py: people, parties, logged-in sessions.

    api_setup.py --out tables.json --tables 50 --game commere --players 4

Writes, per table, the partie id, its first hand id and, per seat, the username and a session
key (a logged-in session, as a browser has after signing in), plus one session for the trivial
endpoint's clients.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from api_django import BENCH_PASSWORD, django_setup, make_tables, make_users, session_key


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--tables", type=int, default=50)
    parser.add_argument("--game", default="commere")
    parser.add_argument("--players", type=int, default=4)
    args = parser.parse_args()
    django_setup()
    tables = make_tables("http", args.tables, args.game, args.players)
    trivial = make_users("trivial", 1)[0]
    doc = {
        "password": BENCH_PASSWORD,
        "tables": [
            {
                "partie": str(t["partie"].pk),
                "hand": str(t["hand"].pk),
                "seats": [{"username": u.username, "session": session_key(u)} for u in t["users"]],
            }
            for t in tables
        ],
        "trivial": {"username": trivial.username, "session": session_key(trivial)},
    }
    Path(args.out).write_text(json.dumps(doc))


if __name__ == "__main__":
    main()
