// The audit page: checks a finished hand's record in the browser (verify.js, rules.js), its
// receipts, and a pasted or chosen record; the words and the hand come from #words.
"use strict";
const words = document.getElementById("words").dataset;
const HAND = document.getElementById("words").dataset.hand;
const KEYS_URL = document.getElementById("words").dataset.keys;
const MAX_BYTES = 5 * 1024 * 1024;
// A phrase of the catalogue with its {name} places filled, each value escaped (fill: as text).
function say(phrase, values) { return phrase.replace(/\{(\w+)\}/g, (_, k) => esc(values[k])); }
function fill(phrase, values) { return phrase.replace(/\{(\w+)\}/g, (_, k) => String(values[k])); }
const camel = name => name.replace(/-(\w)/g, (_, c) => c.toUpperCase());
const cap = name => name[0].toUpperCase() + name.slice(1);
// What the page knows of the service, read once: the digest it lists for this hand and its
// published keys. A pasted record is checked against these and nothing else: nothing is sent.
const service = {digest: null, keys: null};

// A failed check in words: its reason in the page's language, at its event when it names one.
function reason(c) {
  let phrase;
  if (c.why === "rules") phrase = words["rules" + cap(c.values.code || "expected")] || words.rulesExpected;
  else phrase = words["why" + cap(c.why)] || c.detail;
  const values = Object.assign({seq: c.seq}, c.values);
  const what = say(phrase, values);
  return c.seq !== null && c.seq !== undefined && !phrase.includes("{seq}")
    ? say(words.atEvent, {seq: c.seq, what: "\u0000"}).replace("\u0000", what) : what;
}
function line(c) {
  const label = words["check" + cap(c.check)] || c.check;
  const seq = c.seq !== null && c.seq !== undefined ? ` data-seq="${esc(c.seq)}"` : "";
  if (c.ok === null) {
    return `<li data-check="${esc(c.check)}" class="na"${seq}><span class="mark" aria-hidden="true">–</span> ${reason(c)}</li>`;
  }
  const counted = c.check === "receipts" ? ` (${say(words.receiptsChecked, c.values)})` : "";
  if (c.ok) return `<li data-check="${esc(c.check)}" class="ok"><span class="mark" aria-hidden="true">✓</span> ${esc(label)}${counted}</li>`;
  const tech = c.detail ? `<details class="tech"><summary>${esc(words.technical)}</summary><code>${esc(c.detail)}</code></details>` : "";
  return `<li data-check="${esc(c.check)}" class="bad"${seq} data-why="${esc(c.why)}"><span class="mark" aria-hidden="true">✗</span> <b>${esc(label)}</b> — <span class="reason">${say(words.failed, {detail: "\u0000"}).replace("\u0000", reason(c))}</span>${tech}</li>`;
}
// The checks of one record in the three lists of `lists` (by group), its summary and notes.
function show(audit, lists, summary, noShare) {
  for (const group of ["deal", "play", "service"]) {
    lists[group].innerHTML = audit.checks.filter(c => c.group === group).map(line).join("");
  }
  const failed = audit.checks.filter(c => c.ok === false).length;
  summary.innerHTML = failed ? `<span class="bad">✗ ${say(words.summaryBad, {n: failed})}</span>`
    : `<span class="ok">✓ ${esc(words.summaryOk)}</span>`;
  summary.dataset.ok = failed ? "false" : "true";
  noShare.hidden = !audit.notes.some(n => n.note === "noShare");
  noShare.textContent = words.noShare;
}
function receiptsCount() {
  const all = AcademieAudit.keptReceipts().length, here = AcademieAudit.keptReceipts(HAND).length;
  const p = document.getElementById("receipts-count");
  p.textContent = fill(words.receiptsCount, {here, all});
  p.dataset.here = here;
}
const mine = localStorage.getItem("academie.share." + HAND);
let record = null;
(async () => {
  const [r, detail, keys] = await Promise.all([
    api(`/api/hands/${HAND}/record`), api(`/api/hands/${HAND}/`).catch(() => null),
    api(KEYS_URL).catch(() => null)]);
  service.digest = detail && detail.status === 200 && typeof detail.body.digest === "string" ? detail.body.digest : null;
  service.keys = keys && keys.status === 200 && Array.isArray(keys.body.keys) ? keys.body.keys : null;
  receiptsCount();
  if (r.status !== 200) { document.getElementById("verdict").textContent = r.body.detail; return; }
  record = r.body;
  // The record checked here, by this page's own code, whatever the service says.
  const audit = await AcademieAudit.auditRecord(record, {hand: HAND, serviceDigest: service.digest,
                                                         keys: service.keys, yourShare: mine});
  window.lastAudit = audit;
  show(audit, {deal: document.getElementById("browser-checks"), play: document.getElementById("play-checks"),
               service: document.getElementById("service-checks")},
       document.getElementById("summary"), document.getElementById("no-share"));
  // The share this browser sent for this hand (table.js keeps it): is it in the record?
  const yours = audit.notes.find(n => n.note === "yourShare" || n.note === "yourShareMissing");
  if (yours) {
    const p = document.getElementById("your-share");
    p.textContent = yours.ok ? words.yourShare : words.yourShareMissing;
    p.className = yours.ok ? "ok" : "bad";
    p.hidden = false;
  }
  const v = await api(`/api/hands/${HAND}/verify`);
  document.getElementById("verdict").innerHTML = v.body.ok ? `<span class="ok">${say(words.verified, {digest: v.body.digest})}</span>` : `<span class="bad">${say(words.discrepancy, {discrepancy: v.body.discrepancy})}</span>`;
  const n = record.seats.length, hands = Array.from({length: n}, () => []);
  const dealt = record.game === "comet" ? record.deck.length : 3 * n;
  for (let i = 0; i < dealt; i++) hands[(record.dealer + 1 + i) % n].push(record.deck[i]);
  document.getElementById("deal").innerHTML = hands.map((h, s) => `<p>${say(words.seat, {seat: s, player: record.seats[s].player})} ${h.map(card).join("")}</p>`).join("") + `<p class="muted">${say(words.seed, {seed: record.seed})}</p>`;
})();

// "My receipts": every receipt this browser kept, of every hand, as the verifier reads them.
document.getElementById("receipts-download").addEventListener("click", () => {
  const text = JSON.stringify({receipts: AcademieAudit.keptReceipts()}, null, 1);
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([text], {type: "application/json"}));
  link.download = "academie-receipts.json";
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10000);
});

// Another record, pasted or chosen as a file, checked the same way, in this browser only.
const other = {
  error: document.getElementById("other-error"), result: document.getElementById("other-result"),
  part: name => other.result.querySelector(`[data-part="${name}"]`),
  list: group => other.result.querySelector(`ul[data-group="${group}"]`),
};
function otherError(text) {
  other.error.textContent = text;
  other.error.hidden = false;
  other.result.hidden = true;
}
async function checkOther(text) {
  other.error.hidden = true;
  if (!text.trim()) return otherError(words.empty);
  if (text.length > MAX_BYTES) return otherError(words.tooBig);
  let given;
  try { given = JSON.parse(text); } catch (e) { return otherError(words.notJson); }
  other.result.hidden = true;
  const audit = await AcademieAudit.auditRecord(given, {
    hand: HAND, serviceDigest: service.digest, keys: service.keys,
    yourShare: given && given.hand === HAND ? mine : null});
  window.lastOtherAudit = audit;
  show(audit, {deal: other.list("deal"), play: other.list("play"), service: other.list("service")},
       other.part("summary"), other.part("no-share"));
  const known = given && typeof given === "object" && !Array.isArray(given);
  other.part("which").textContent = known ? fill(words.which, {game: given.game, number: given.number, hand: given.hand}) : "";
  other.result.hidden = false;
}
document.getElementById("other-check").addEventListener("click", () => checkOther(document.getElementById("other-text").value));
document.getElementById("other-file").addEventListener("change", async e => {
  const file = e.target.files[0];
  if (!file) return;
  if (file.size > MAX_BYTES) { e.target.value = ""; return otherError(words.tooBig); }
  await checkOther(await file.text());
});
