// Development harness for frontend/static/frontend/rules.js and its siblings rules-*.js: runs
// checkPlay on the corpus that rules_corpus.py wrote (valid and mutated records, each with the
// Python verifier's verdict) and reports every record on which the two disagree, then the time
// per Comet hand.
//
//     .venv/bin/python -m tests.frontend.rules_corpus --out /tmp/rules_corpus.json
//     node tests/frontend/rules_corpus.mjs /tmp/rules_corpus.json
//
// A record that Python accepts and HAND_RECORD.md refuses (rules_corpus.python_laxity says
// why) is counted apart: there checkPlay follows the spec.
import {createRequire} from "node:module";
import {readFileSync} from "node:fs";

const require = createRequire(import.meta.url);
// rules.js first, then the files that add themselves to it, as the audit page loads them.
const {checkPlay} = require("../../frontend/static/frontend/rules.js");
for (const part of ["rules-replay.js", "rules-comet.js", "rules-commere.js"]) {
  require("../../frontend/static/frontend/" + part);
}
const items = JSON.parse(readFileSync(process.argv[2] || "/tmp/rules_corpus.json", "utf8"));

const tally = {valid: 0, validAcceptedByBoth: 0, mutated: 0, mutatedRefusedByBoth: 0,
               mutatedAcceptedByBoth: 0, pythonLaxerThanSpec: 0, disagreements: 0};
const codes = {}, laxities = {};
const sameEvent = {same: 0, other: 0};   // refused by both: at the same event?
for (const {name, record, python, discrepancy, laxity} of items) {
  const found = checkPlay(record);
  const js = found === null;
  const at = /^event (\d+)/.exec(discrepancy || "");
  if (!js && !python && at && found.seq !== null) {
    if (Number(at[1]) === found.seq) sameEvent.same++;
    else {
      sameEvent.other++;
      if (process.env.SHOW_OTHER) {
        console.log("OTHER EVENT", name, discrepancy.slice(0, 160), JSON.stringify(found).slice(0, 200));
      }
    }
  }
  if (name.includes("~")) {
    tally.mutated++;
    if (!js && !python) tally.mutatedRefusedByBoth++;
    if (js && python) tally.mutatedAcceptedByBoth++;
  } else {
    tally.valid++;
    if (js && python) tally.validAcceptedByBoth++;
  }
  if (found) codes[found.code] = (codes[found.code] || 0) + 1;
  if (js === python) continue;
  if (python && laxity) {
    tally.pythonLaxerThanSpec++;
    const kind = laxity.replace(/[0-9]+/g, "N").replace(/lacks .*? \(/, "lacks an option (");
    laxities[kind] = (laxities[kind] || 0) + 1;
    continue;
  }
  tally.disagreements++;
  console.log("DISAGREE", name, "python:", python, "js:", JSON.stringify(found));
}
console.log(JSON.stringify(tally, null, 1));
console.log("checkPlay's codes:", JSON.stringify(codes));
// Python blames a cut record on its last move, checkPlay on the first event missing: those
// differ by design (SHOW_OTHER=1 lists them).
console.log("refused by both, Python naming an event: the same event", sameEvent.same,
            "another", sameEvent.other);
console.log("Python laxer than HAND_RECORD.md:", JSON.stringify(laxities, null, 1));

// Time: every valid Comet hand, checked repeatedly; per hand and per 60 events.
const comets = items.filter(i => !i.name.includes("~") && i.record.game === "comet").map(i => i.record);
if (comets.length) {
  const rounds = 20, events = comets.reduce((s, r) => s + r.events.length, 0);
  for (const r of comets) checkPlay(r);            // warm-up
  const t0 = process.hrtime.bigint();
  for (let k = 0; k < rounds; k++) for (const r of comets) checkPlay(r);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const perHand = ms / rounds / comets.length, per60 = ms / rounds / events * 60;
  console.log(`Comet: ${comets.length} hands, ${(events / comets.length).toFixed(0)} events on average, `
    + `${perHand.toFixed(3)} ms per hand, ${per60.toFixed(3)} ms per 60 events`);
}
process.exitCode = tally.disagreements ? 1 : 0;
