"""The audit page's full check of a record (verify.js with rules.js, in Chromium) and the
command-line verifier (``verify_record``) agree, record for record, on a corpus of hand records
of both games and all three versions (``simulate --format 1|2|3``, options, bots and shares
mixed) and their mutations.

The mutations are tests/frontend/rules_corpus.py's (a card, a seat, an amount, a ``by``, an
event dropped or two swapped, the record cut or continued, the result, a header field), each
chained again with the seed so that only the rules can catch it, and this module's own, which
the cryptography must catch: the deck, the seed, a share, a value in place of its seal, a
``seals`` key, an event changed without re-chaining, a time going backwards, an unknown format.
The receipts' check agrees with ``check_receipts`` too. No server: a blank page of a
``localhost`` address (a secure context, for WebCrypto) with the two scripts in it."""

from __future__ import annotations

import copy
import hashlib
import json
import random
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from playwright.sync_api import Page

from games.engine.seals import checkpoint_message, key_id
from games.engine.simulate import run
from games.engine.verify import Discrepancy, check_receipts, read_keys

from .rules_corpus import corpus as rules_corpus
from .rules_corpus import python_laxity, python_verdict, rechain

pytestmark = [pytest.mark.browser]

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "frontend" / "static" / "frontend"
PAGE_URL = "http://localhost/record-check"
# The audit page's check, in the order its template loads it: each file after rules.js and
# verify.js adds itself to theirs.
SCRIPTS = ("rules.js", "rules-replay.js", "rules-comet.js", "rules-commere.js",
           "verify.js", "verify-record.js", "verify-audit.js")
Record = dict[str, Any]

@pytest.fixture
def checker(page: Page) -> Page:
    """A page holding verify.js and rules.js with their siblings, as the audit page loads them."""
    page.route(PAGE_URL, lambda route: route.fulfill(
        body="<!doctype html><html><body></body></html>", content_type="text/html"))
    page.goto(PAGE_URL)
    assert page.evaluate("isSecureContext")
    for script in SCRIPTS:
        page.add_script_tag(path=str(STATIC / script))
    return page


# -- the corpus --------------------------------------------------------------------------------

def _comet_v3() -> Record:
    """A version-3 Comet record of three bots, one of whose seats sent a share."""
    with tempfile.TemporaryDirectory() as folder:
        run(game_name="comet", players=3, hands=1, seed="receipts", bots=["heuristic"],
            options=None, chips=20, export=Path(folder), version=3, shares="random")
        return json.loads((Path(folder) / "1.json").read_text(encoding="utf-8"))


def _crypto_mutations(record: Record, rng: random.Random) -> Iterator[tuple[str, Record]]:
    """Changes the cryptography must catch (most are not chained again)."""
    def mutated(change: Callable[[Record], Any], chain: bool = False) -> Record:
        r = copy.deepcopy(record)
        change(r)
        return rechain(r) if chain else r
    events = record["events"]
    moves = [k for k, e in enumerate(events) if e.get("by") == "player"]
    yield "deck-swap", mutated(lambda r: r["deck"].insert(1, r["deck"].pop(0)))
    yield "seed", mutated(lambda r: r.update(seed=hashlib.sha256(b"other").hexdigest()), True)
    if moves:
        i = rng.choice(moves)
        yield "by-unchained", mutated(lambda r: r["events"][i].update(by="forced"))
    yield "at-backwards", mutated(lambda r: r["events"][-1].update(at="2000-01-01T00:00:00Z"), True)
    yield "format", mutated(lambda r: r.update(format="academie.hand/9"))
    if record["format"] != "academie.hand/1":
        yield "share-added", mutated(lambda r: r["shares"].append(
            {"seat": len(r["seats"]) - 1, "share": "ab" * 32}) if not any(
            s["seat"] == len(r["seats"]) - 1 for s in r["shares"]) else r["shares"].clear())
    if record["format"] == "academie.hand/3" and moves:
        k = rng.choice(moves)
        seal = "sealed:" + "0" * 64
        yield "sealed-by", mutated(lambda r: r["events"][k].update(by=seal))
        yield "seals-key", mutated(lambda r: r["events"][k].update(seals={"by": seal}))


CRYPTO_LABELS = {"deck-swap", "seed", "by-unchained", "at-backwards", "format", "share-added",
                 "sealed-by", "seals-key"}


def corpus(seed: int = 11, size: int = 40) -> list[tuple[str, Record]]:
    """rules_corpus.py's records (both games, versions 1 to 3, and their mutations chained
    again), and this module's mutations of its valid records, which the cryptography must
    catch."""
    out = rules_corpus(seed, size)
    rng = random.Random(seed)
    for name, record in [(n, r) for n, r in out if "~" not in n]:
        out += [(f"{name}~{label}", r) for label, r in _crypto_mutations(record, rng)]
    return out


FULL_CHECK = """async texts => {
  const out = [];
  for (const text of texts) {
    const r = JSON.parse(text);  // as the page reads a record: fetched, pasted or a file
    const audit = await AcademieAudit.auditRecord(r, {receipts: []});
    const failed = audit.checks.filter(c => c.ok === false);
    out.push({ok: audit.ok, failed: failed.map(c => c.check + ":" + (c.seq ?? "") + ":" + c.detail),
              na: audit.checks.filter(c => c.ok === null).map(c => c.check)});
  }
  return out;
}"""


def test_the_pages_full_check_and_the_verifier_agree_on_a_corpus(checker: Page) -> None:
    started = time.monotonic()
    items = corpus()
    assert len(items) >= 200
    assert {r["format"] for name, r in items if "~" not in name} == {
        "academie.hand/1", "academie.hand/2", "academie.hand/3"}
    assert {r["game"] for _, r in items} == {"comet", "commere"}
    page: list[dict[str, Any]] = []
    for at in range(0, len(items), 60):
        page += checker.evaluate(FULL_CHECK, [json.dumps(r) for _, r in items[at:at + 60]])
    rows = [(name, name.partition("~")[2], r, python_verdict(r), js)
            for (name, r), js in zip(items, page, strict=True)]
    # Where the verifier is laxer than HAND_RECORD.md (rules_corpus.python_laxity), the page
    # may refuse what it accepts; nowhere else do they differ.
    lax = [name for name, _, r, python, js in rows
           if python != js["ok"] and python and python_laxity(r)]
    disagreements = [(name, python, js["failed"]) for name, _, r, python, js in rows
                     if python != js["ok"] and name not in lax]
    refused = sum(not python for *_, python, _ in rows)
    print(f"{len(rows)} records ({sum(not m for _, m, *_ in rows)} valid; {refused} refused by the "
          f"verifier), {len(disagreements)} disagreements (+{len(lax)} refused by the page where "
          f"the verifier is laxer than the text), {time.monotonic() - started:.1f} s")
    assert disagreements == []
    # The valid records hold every check; only the service's checks do not apply here.
    assert all(js["na"] == ["serviceDigest", "receipts"] for _, m, *_, js in rows if not m)
    # A mutation chained again passes the deal and the chain: when it is refused, the play's
    # checks (header, result, rules) are what refuse it, or the record's shape ("format").
    play = ("header:", "result:", "rules:", "format:")
    rechained = [(name, js["failed"]) for name, m, _, python, js in rows
                 if m and m not in CRYPTO_LABELS and not python]
    assert len(rechained) > 100
    assert [(name, failed) for name, failed in rechained
            if not any(f.startswith(play) for f in failed)] == []
    # This module's mutations are refused by the deal and the chain.
    deal = ("format:", "commitment:", "shares:", "deck:", "dealer:", "chain:", "digest:")
    crypto = [(name, js["failed"]) for name, m, _, _, js in rows if m in CRYPTO_LABELS]
    assert len(crypto) > 150
    assert [(name, failed) for name, failed in crypto
            if not any(f.startswith(deal) for f in failed)] == []


# -- the receipts -------------------------------------------------------------------------------

KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
STRANGER = Ed25519PrivateKey.from_private_bytes(b"\x07" * 32)


def _public(key: Ed25519PrivateKey) -> bytes:
    return key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)


def _receipt(record: Record, seq: int, key: Ed25519PrivateKey = KEY,
             event_hash: str | None = None) -> dict[str, Any]:
    h = event_hash or record["events"][seq - 1]["hash"]
    return {"hand": record["hand"], "seq": seq, "hash": h, "key": key_id(_public(key)),
            "sig": key.sign(checkpoint_message(record["hand"], seq, h)).hex()}


RECEIPTS = """async ([record, receipts, keys]) => {
  const audit = await AcademieAudit.auditRecord(record, {receipts, keys});
  const c = audit.checks.find(c => c.check === "receipts");
  return [c.ok, c.seq, c.why, c.detail];
}"""


def test_the_pages_receipts_check_agrees_with_the_verifiers(checker: Page) -> None:
    record = _comet_v3()
    forged = copy.deepcopy(record)
    seq = next(e["seq"] for e in forged["events"] if e["type"] == "play")
    forged["events"][seq - 1]["by"] = "timeout" if forged["events"][seq - 1]["by"] != "timeout" \
        else "player"
    rechain(forged)
    last = len(record["events"])
    keys = {"keys": [{"id": key_id(_public(KEY)), "public": _public(KEY).hex(),
                      "since": "2026-12-01T00:00:00Z", "until": None}]}
    bad_sig = _receipt(record, 4)
    bad_sig["sig"] = ("1" if bad_sig["sig"][0] == "0" else "0") + bad_sig["sig"][1:]
    cases: list[tuple[str, Record, list[dict[str, Any]], bool | None, int | None]] = [
        ("all", record, [_receipt(record, s) for s in range(1, last + 1)], True, None),
        ("before-the-change", forged, [_receipt(record, seq - 1)], True, None),
        ("forged", forged, [_receipt(record, seq - 1), _receipt(record, last)], False, last),
        ("forged-at-seq", forged, [_receipt(record, seq)], False, seq),
        ("cut", {**record, "events": record["events"][:5]}, [_receipt(record, 9)], False, 9),
        ("bad-signature", record, [bad_sig], False, 4),
        ("unknown-key", record, [_receipt(record, 2, STRANGER)], False, 2),
        ("another-hand", record, [{**_receipt(record, 2), "hand": "another"}], None, None),
        ("none", record, [], None, None),
    ]
    published = read_keys(keys)
    for name, rec, receipts, ok, named in cases:
        got = checker.evaluate(RECEIPTS, [rec, receipts, keys["keys"]])
        assert (got[0], got[1]) == (ok, named), (name, got)
        try:
            checked = check_receipts(rec, receipts, published)
            python: bool | None = True if checked else None
        except Discrepancy as exc:
            python = False
            assert f"receipt for seq {named}:" in str(exc)
            assert str(exc) == got[3], name  # the same words as the verifier
        assert python == ok, name
    # Without the published keys the receipts are not checked, and the page says so.
    got = checker.evaluate(RECEIPTS, [record, [_receipt(record, 2)], None])
    assert got[:3] == [None, None, "receiptsNoKeys"]
