"""Académie's benchmarks (bench/README.md): python bench/run.py KIND [options]

    engine    Comet hands/s, Ma commère rounds/s, replayed events/s (no database)
    ledger    posting and read rates on PostgreSQL, at 1,000,000 postings
    http      moves over HTTP against the trivial endpoint (--quick: within 90 s;
              --smoke: at least 50 moves within 30 s, what scripts/test.sh runs)
    services  move_play against the eventsourcing library's append, 4 processes each
    growth    a move's p99 with hand_events at 10,000 rows and at 10,000,000
    ismcts    the fort bot's strength against the heuristic bot, and its decision time
    receipts  what sealing and signing (version-3 hands) add to a move's p50
    audit     the audit page's full check of a 60-event Comet hand, in Chromium
    capacity  tables at human pace (a decision every 4 s) over HTTP and the live WebSockets:
              the most tables whose move POST p99 stays under 100 ms (--two: two of each)
    pages     a soirée's standings API, pages, room screen, results page and PDF at 50 and
              at 5,000 finished hands, p95
    clock     the soirée clock's tick with 1, 10 and 100 open soirées of 5 tables, unchanged

Each prints its figures as one JSON object on its last line, and exits non-zero when it
measured nothing (no move, no append, no sample).
"""

from __future__ import annotations

import importlib
import sys

KINDS = {"engine": "engine_bench", "ledger": "ledger_bench", "http": "http_bench",
         "services": "services_bench", "growth": "growth_bench", "ismcts": "ismcts_bench",
         "receipts": "receipts_bench", "audit": "verify_js_bench",
         "capacity": "capacity_bench", "pages": "pages_bench", "clock": "clock_bench"}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in KINDS:
        sys.exit(__doc__)
    sys.exit(importlib.import_module(KINDS[sys.argv[1]]).main(sys.argv[2:]))
