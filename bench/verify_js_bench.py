"""The audit page's full check of a record in the browser: a 60-event Comet hand, in Chromium.

    python bench/run.py audit [--runs 30] [--events 60]

What is timed is what the audit page does once it holds the record (frontend/static/frontend/
verify.js with rules.js): ``AcademieAudit.auditRecord`` on the record's JSON text, that is the
commitment, the shares, the deck (HMAC deck key, the shuffle's stream), the first dealer, the
hash chain over the sealed forms (an HMAC per sealed field), the header and the result, every
move and payment replayed by the rules, and the receipts kept for the hand: the latest one, as
the table page keeps it, and, as a second figure, one for every event (an Ed25519 signature
each). Each figure is measured in the page with ``performance.now()``: the first (cold) run and
the median of ``--runs`` more. The page is a blank one of a ``localhost`` address (a secure
context, as WebCrypto needs); no server, no database.

Prints the figures as one JSON object on its last line; exits non-zero if it measured nothing.
The budget (the audit page's task) is 200 ms for the full check.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from common import ROOT

sys.path.insert(0, str(ROOT))

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey  # noqa: E402
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat  # noqa: E402

from games.engine.seals import checkpoint_message, key_id  # noqa: E402
from games.engine.simulate import run  # noqa: E402
from games.engine.verify import verify_record  # noqa: E402

STATIC = ROOT / "frontend" / "static" / "frontend"
CHROMIUM = "/usr/bin/chromium"
PAGE = "http://localhost/verify-bench"
BUDGET_MS = 200
KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))

TIMED = """async ([text, receipts, keys, runs]) => {
  const once = async () => {
    const t0 = performance.now();
    const audit = await AcademieAudit.auditRecord(JSON.parse(text), {receipts, keys});
    const ms = performance.now() - t0;
    if (!audit.ok || audit.checks.some(c => c.ok === null && c.check !== "serviceDigest")) {
      const failed = audit.checks.filter(c => c.ok !== true);
      throw new Error("the record did not pass: " + JSON.stringify(failed));
    }
    return ms;
  };
  const first = await once();
  const times = [];
  for (let i = 0; i < runs; i++) times.push(await once());
  return {first, times};
}"""


def comet_hand(events: int) -> dict[str, Any]:
    """A version-3 Comet record of exactly ``events`` events (one seat sent a share), the first
    of the simulator's seeds that plays one."""
    best: dict[str, Any] | None = None
    for k in range(400):
        with tempfile.TemporaryDirectory() as folder:
            run(game_name="comet", players=3 + k % 3, hands=1, seed=f"bench-{k}",
                bots=["heuristic", "random"], options=None, chips=50, export=Path(folder),
                version=3, shares="random")
            record = json.loads((Path(folder) / "1.json").read_text(encoding="utf-8"))
        if len(record["events"]) == events:
            return record
        if best is None or abs(len(record["events"]) - events) < abs(len(best["events"]) - events):
            best = record
    assert best is not None
    return best


def receipt(record: dict[str, Any], seq: int) -> dict[str, Any]:
    public = KEY.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    h = record["events"][seq - 1]["hash"]
    return {"hand": record["hand"], "seq": seq, "hash": h, "key": key_id(public),
            "sig": KEY.sign(checkpoint_message(record["hand"], seq, h)).hex()}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="verify_js_bench.py")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--events", type=int, default=60)
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    record = comet_hand(args.events)
    verify_record(record)  # a valid record: the page must accept it too
    public = KEY.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    keys = [{"id": key_id(public), "public": public.hex(), "since": "2026-12-01T00:00:00Z",
             "until": None}]
    n = len(record["events"])
    text = json.dumps(record)
    out: dict[str, Any] = {"events": n, "game": "comet", "format": record["format"],
                           "runs": args.runs, "budget_ms": BUDGET_MS}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update"])
        try:
            page = browser.new_page()
            page.route(PAGE, lambda route: route.fulfill(
                body="<!doctype html><html><body></body></html>", content_type="text/html"))
            page.goto(PAGE)
            out["chromium"] = browser.version
            # The audit page's check, in the order its template loads it.
            for script in ("rules.js", "rules-replay.js", "rules-comet.js", "rules-commere.js",
                           "verify.js", "verify-record.js", "verify-audit.js"):
                page.add_script_tag(path=str(STATIC / script))
            for label, receipts in (("latest_receipt", [receipt(record, n)]),
                                    ("every_receipt", [receipt(record, s)
                                                       for s in range(1, n + 1)])):
                got = page.evaluate(TIMED, [text, receipts, keys, args.runs])
                times = [t for t in got["times"] if t == t]  # NaN: nothing measured
                if not times:
                    continue
                out[f"{label}_first_ms"] = round(got["first"], 2)
                out[f"{label}_median_ms"] = round(statistics.median(times), 2)
                out[f"{label}_max_ms"] = round(max(times), 2)
        finally:
            browser.close()
    measured = "latest_receipt_median_ms" in out
    if measured:
        print(f"full check of a {n}-event Comet hand ({record['format']}) in Chromium "
              f"{out['chromium']}: median {out['latest_receipt_median_ms']} ms "
              f"(first run {out['latest_receipt_first_ms']} ms; with a receipt for every event: "
              f"median {out.get('every_receipt_median_ms')} ms); budget {BUDGET_MS} ms")
    print(json.dumps(out))
    return 0 if measured else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
