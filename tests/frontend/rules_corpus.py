"""A corpus of hand records, valid and mutated, to hold frontend/static/frontend/rules.js (the
browser's check of a record's play) against the Python verifier.

``corpus(seed, size)`` plays ``size`` bot hands with the simulator (both games, every seat
count, record versions 1 to 3 with every share mode, options and bots mixed, chips low enough
for shortfalls, Ma commère rounds left void) and adds mutations of each: a card, a seat, a
payment, a ``by``, an event dropped or two swapped, the record cut short or continued after
``hand_over``, the result, a header field, junk in a field. Every mutation is chained again
(``seq``, ``prev``, ``hash``, ``digest``), so that only its play can fail, never its chain.
``python_verdict`` is the Python verifier's answer; ``python_laxity`` names the records it
accepts although HAND_RECORD.md refuses them.

    python -m tests.frontend.rules_corpus [--seed S] [--size N] [--out FILE]

writes ``[{"name", "record", "python", "discrepancy", "laxity"}, …]`` as JSON for
``rules_corpus.mjs``, which runs ``checkPlay`` on each and reports every disagreement.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import hmac
import json
import random
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from games.engine.simulate import run
from games.engine.verify import Discrepancy, verify_record

Record = dict[str, Any]
Change = Callable[[Record], None]
BOTS = ("heuristic", "random", "timeout")
SEATS = {"comet": range(2, 7), "commere": range(4, 13)}
OPTIONS = {"comet": ("ante", "per_card", "comet_payment", "progressive_comet", "deals",
                     "until_broke"),
           "commere": ("ante", "compulsory_announce", "ace_low_sequence", "max_turns", "rounds",
                       "until_broke")}
MOVES = {"open", "play", "comet", "keep_comet", "announce", "offer", "give_back", "return"}
CARDS = [r + s for s in "CDHS" for r in "A23456789TJQK"]
CHAIN = ("seq", "at", "prev", "hash")
HEADER = ("dealer", "seats", "options", "chips_before", "pot_before", "comet_payment_due")
JUNK: tuple[Any, ...] = (None, "x", "1", -1, 1.5, True, [], {}, 10**6)


def canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _sealed(event: dict[str, Any], seed: bytes) -> dict[str, Any]:
    """HAND_RECORD.md version 3: the event with its hidden fields replaced by their seals."""
    fields = []
    if event.get("type") in ("offer", "give_back", "return", "draw") and "card" in event:
        fields.append("card")
    if event.get("type") == "keep_comet" and "seat" in event:
        fields.append("seat")
    if event.get("by") in ("player", "forced", "timeout"):
        fields.append("by")
    out = dict(event)
    for name in fields:
        message = canonical(["academie.hand/3 seal", event["seq"], name, event[name]])
        out[name] = "sealed:" + hmac.new(seed, message, hashlib.sha256).hexdigest()
    return out


def rechain(record: Record) -> Record:
    """Number the events 1, 2, … and chain them again from the commitment."""
    v3 = record.get("format") == "academie.hand/3"
    seed = bytes.fromhex(record["seed"])
    link = record["commitment"]
    for seq, event in enumerate(record["events"], start=1):
        event.pop("hash", None)
        event["seq"] = seq
        event["prev"] = link
        body = _sealed(event, seed) if v3 else event
        body = {k: v for k, v in body.items() if k not in ("hash", "seals")}
        event["hash"] = link = hashlib.sha256(canonical(body)).hexdigest()
    record["digest"] = link
    return record


def python_verdict(record: Record) -> bool:
    return python_discrepancy(record) is None


def python_discrepancy(record: Record) -> str | None:
    """The Python verifier's first discrepancy, or None when it accepts the record."""
    try:
        verify_record(record)
    except Discrepancy as discrepancy:
        return str(discrepancy) or "refused"
    except Exception as error:  # a tampered record the verifier cannot even read is refused
        return f"unreadable: {error!r}"
    return None


def python_laxity(record: Record) -> str | None:
    """Why HAND_RECORD.md refuses a record that the Python verifier accepts, or None."""
    options, game = record.get("options"), record.get("game")
    if isinstance(options, dict) and game in OPTIONS:
        missing = [name for name in OPTIONS[game] if name not in options]
        if missing:
            return f"options lacks {', '.join(missing)} (the record holds every option)"
        due, base, number = (record.get("comet_payment_due"), options.get("comet_payment"),
                             record.get("number"))
        typed = all(isinstance(v, int) for v in (due, base, number)) and number >= 1
        if game == "comet" and options.get("progressive_comet") and typed \
                and due > base << (number - 1):
            return (f"comet_payment_due {due} is comet_payment {base} doubled more often than the "
                    f"{number - 1} earlier deals of the partie allow")
    return None


# ------------------------------------------------------------------------ the valid records

def _options(game: str, rng: random.Random) -> dict[str, Any]:
    ante = rng.choice([0, 1, 1, 1, 2])
    if game == "comet":
        return {"ante": ante, "per_card": rng.choice([0, 1, 1, 2]),
                "comet_payment": rng.choice([0, 1, 1, 3]),
                "progressive_comet": rng.random() < 0.4}
    return {"ante": ante, "compulsory_announce": rng.random() < 0.7,
            "ace_low_sequence": rng.random() < 0.4,
            "max_turns": rng.choice([1, 2, 3, 5, 30, None])}


def _partie(rng: random.Random, game: str, tag: str,
            void_prone: bool = False) -> list[tuple[str, Record]]:
    """The records of one simulated partie. ``void_prone``: a Ma commère partie of few seats
    and one turn a round, so that rounds end void and leave their pot to the next."""
    players = 4 if void_prone else rng.choice(list(SEATS[game]))
    bots = [rng.choice(BOTS) for _ in range(rng.randint(1, 3))]
    if rng.random() < 0.1:  # the search bot is slow: now and then, for one seat
        bots[0] = "ismcts"
    options = _options(game, rng)
    if void_prone:
        options["max_turns"] = 1
    chips = rng.choice([1, 2, 3, 5, 20, 100])
    version = rng.choice([1, 2, 3, 3])
    shares = None if version == 1 else rng.choice(["none", "all", "random", "random"])
    hands = 8 if void_prone else rng.randint(1, 6)
    with tempfile.TemporaryDirectory() as folder:
        run(game_name=game, players=players, hands=hands, seed=tag, bots=bots, options=options,
            chips=chips, export=Path(folder), shares=shares, version=version)
        files = sorted(Path(folder).glob("*.json"), key=lambda p: int(p.stem))
        records = [json.loads(f.read_text(encoding="utf-8")) for f in files]
    name = f"{game}-{players}p-{'+'.join(bots)}-c{chips}-v{version}{shares or ''}-{tag}"
    return [(f"{name}-h{r['number']}", r) for r in records]


# ------------------------------------------------------------------------ the mutations

def _variant(record: Record, change: Change) -> Record:
    mutated = copy.deepcopy(record)
    change(mutated)
    return rechain(mutated)


def _play(event: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in event.items() if k not in CHAIN}


def _mutations(record: Record, rng: random.Random) -> list[tuple[str, Record]]:
    events = record["events"]
    n = len(record["seats"])
    changes: list[tuple[str, Change]] = []

    def add(label: str, change: Change) -> None:
        changes.append((label, change))

    def pick(field: str | None = None, kinds: set[str] | None = None) -> int | None:
        found = [i for i, e in enumerate(events)
                 if (kinds is None or e["type"] in kinds) and (field is None or field in e)]
        return rng.choice(found) if found else None

    def set_field(i: int, key: str, value: Any) -> Change:
        return lambda r: r["events"][i].__setitem__(key, copy.deepcopy(value))

    if (i := pick("card")) is not None:
        card = rng.choice([c for c in CARDS if c != events[i]["card"]])
        add(f"card@{i + 1}", set_field(i, "card", card))
    if (i := pick("seat")) is not None:
        seat = rng.choice([s for s in range(n) if s != events[i]["seat"]])
        add(f"seat@{i + 1}", set_field(i, "seat", seat))
    if (i := pick(kinds={"pay"})) is not None:
        key = rng.choice(["amount", "amount", "short", "from", "to", "reason"])
        if key in ("amount", "short"):
            value: Any = max(0, events[i][key] + rng.choice([-1, 1])) if events[i][key] else 1
        elif key == "reason":
            value = rng.choice(["ante", "comet", "per_card", "pot", "tricon", "sequence"])
        else:
            value = rng.choice(["pot", *range(n)])
        add(f"pay-{key}@{i + 1}", set_field(i, key, value))
    moves = [i for i, e in enumerate(events) if e["type"] in MOVES]
    for i in rng.sample(moves, min(3, len(moves))):
        by = rng.choice([b for b in ("player", "forced", "timeout") if b != events[i]["by"]])
        add(f"by-{by}@{i + 1}", set_field(i, "by", by))

    i = rng.randrange(len(events))
    add(f"drop@{i + 1}", lambda r, i=i: r["events"].pop(i))
    j = rng.randrange(1, len(events) - 1)
    if _play(events[j]) != _play(events[j + 1]):
        add(f"swap@{j + 1}", lambda r: r["events"].insert(j + 1, r["events"].pop(j)))
    cut = rng.randrange(1, len(events))
    add(f"cut@{cut}", lambda r: r["events"].__delitem__(slice(cut, None)))
    add("after-over", lambda r: r["events"].append(copy.deepcopy(r["events"][-2])))

    # Junk where a value was (a tampered record may hold anything), or a field dropped or added.
    for _ in range(3):
        i = rng.randrange(len(events))
        key = rng.choice([k for k in events[i] if k not in CHAIN])
        junk = rng.choice(JUNK)
        action = rng.choice(["set", "set", "drop", "add"])
        if action == "drop":
            add(f"junk-drop-{key}@{i + 1}", lambda r, i=i, key=key: r["events"][i].pop(key))
        else:
            if action == "add":
                key = rng.choice(["extra", "__proto__", "card", "seat"])
            add(f"junk-{key}@{i + 1}", set_field(i, key, junk))
    key = rng.choice(["options", "seats", "chips_before", "pot_before", "dealer", "number",
                      "result", "deck"])
    junk = rng.choice(JUNK)
    add(f"junk-header-{key}", lambda r: r.__setitem__(key, copy.deepcopy(junk)))

    seat, step = str(rng.randrange(n)), rng.choice([-1, 1])

    def result(r: Record, both: bool) -> None:
        r["result"]["net"][seat] += step
        if both:
            r["events"][-1]["result"] = copy.deepcopy(r["result"])
    add("result", lambda r: result(r, False))
    add("result+over", lambda r: result(r, True))

    # A header field, in the header and hand_started alike (the play must then differ) or in
    # the header alone.
    options = record["options"]

    def option(name: str, value: Any) -> Change:
        return lambda h: h["options"].__setitem__(name, value)
    fields: list[tuple[str, Change]] = [
        ("dealer", lambda h: h.__setitem__("dealer", (h["dealer"] + 1) % n)),
        ("chips", lambda h: h["chips_before"].__setitem__(
            seat, max(0, h["chips_before"][seat] - 2))),
        ("pot", lambda h: h.__setitem__("pot_before", h["pot_before"] + 1)),
        ("ante", option("ante", options["ante"] + 1)),
        ("seats", lambda h: h["seats"].pop()),
        ("no-option", lambda h: h["options"].pop(rng.choice(OPTIONS[record["game"]]))),
    ]
    if record["game"] == "comet":
        fields += [
            ("per_card", option("per_card", options["per_card"] + 1)),
            ("comet_payment", option("comet_payment", options["comet_payment"] + 1)),
            ("due", lambda h: h.__setitem__("comet_payment_due",
                                            record["comet_payment_due"] * 2 or 1)),
            ("progressive", option("progressive_comet", not options["progressive_comet"])),
        ]
    else:
        fields += [
            ("compulsory", option("compulsory_announce", not options["compulsory_announce"])),
            ("ace_low", option("ace_low_sequence", not options["ace_low_sequence"])),
            ("max_turns", option("max_turns", rng.choice([1, 2, None]))),
        ]
    for label, change in rng.sample(fields, 3):
        def both(r: Record, change: Change = change) -> None:
            change(r)
            for key in HEADER:
                if key in r:
                    r["events"][0][key] = copy.deepcopy(r[key])
        add(f"header-{label}", both)
        add(f"header-{label}-alone", change)
    return [(label, _variant(record, change)) for label, change in changes]


def corpus(seed: int = 1, size: int = 240, mutations: bool = True) -> list[tuple[str, Record]]:
    """``size`` valid records of both games and, unless told otherwise, mutations of each."""
    rng = random.Random(seed)
    valid: list[tuple[str, Record]] = []
    k = 0
    while len(valid) < size:
        if k % 10 == 9:
            hands = _partie(rng, "commere", f"{seed}.{k}", void_prone=True)
            valid += [(name, r) for name, r in hands
                      if r["pot_before"] or r["result"].get("combination", "") is None]
        else:
            hands = _partie(rng, ("comet", "commere")[k % 2], f"{seed}.{k}")
            valid += rng.sample(hands, min(len(hands), 2))
        k += 1
    valid = valid[:size]
    if not mutations:
        return valid
    out = []
    for name, record in valid:
        out.append((name, record))
        out += [(f"{name}~{label}", mutated) for label, mutated in _mutations(record, rng)]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--size", type=int, default=240)
    parser.add_argument("--out", type=Path, default=Path("/tmp/rules_corpus.json"))
    args = parser.parse_args()
    items = []
    for name, record in corpus(args.seed, args.size):
        discrepancy = python_discrepancy(record)
        items.append({"name": name, "record": record, "python": discrepancy is None,
                      "discrepancy": discrepancy,
                      "laxity": python_laxity(record) if discrepancy is None else None})
    args.out.write_text(json.dumps(items, ensure_ascii=False), encoding="utf-8")
    valid = sum(1 for item in items if "~" not in item["name"])
    print(f"{len(items)} records ({valid} valid, {len(items) - valid} mutated), "
          f"{sum(item['python'] for item in items)} accepted by Python, written to {args.out}")


if __name__ == "__main__":
    main()
