// The audit page: checks a finished hand's record in the browser (verify*.js, rules*.js), its
// receipts, and a pasted or chosen record; tells the hand event by event and its cards in
// words. The words and the hand come from #words, the table's words from #audit-words.
"use strict";
const words = document.getElementById("words").dataset;
const A = JSON.parse(document.getElementById("audit-words").textContent);
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

// -- Cards and events in words: the table's (frontend/words.py), as its log says them -----
const SYMBOL = {C: "♣", D: "♦", H: "♥", S: "♠"};
const isCard = c => typeof c === "string" && /^[A2-9TJQK][CDHS]$/.test(c);
// A card with its article ("le dix de cœur"); what is not a card, as the record has it.
const theCard = c => isCard(c) ? fill(A.card, {rank: A.the_rank[c[0]], suit: A.suit[c[1]]}) : String(c);
const seatName = (record, s) => (A.seats[s] ? A.seats[s].name : record.seats[s] && record.seats[s].player);
function cardItem(c, game) {
  if (!isCard(c)) return `<li class="cw">${esc(c)}</li>`;
  const red = c[1] === "D" || c[1] === "H" ? " red" : "";
  // The nine of diamonds is the Comet (RULES.md §2): named as such.
  const named = game === "comet" && c === "9D" ? `${A.reason.comet} (${theCard(c)})` : theCard(c);
  return `<li class="cw${red}" data-card="${c}"><span aria-hidden="true">${SYMBOL[c[1]]}</span> ${esc(named)}</li>`;
}
// A showdown's combination in words (RULES.md §1), as the table names it.
function combinationOf(cards, options) {
  if (!Array.isArray(cards) || cards.length !== 3 || !cards.every(isCard)) return null;
  const order = "23456789TJQKA";
  const ranks = cards.map(c => order.indexOf(c[0])).sort((a, b) => a - b);
  if (ranks[0] === ranks[2]) return fill(A.combination.tricon, {ranks: A.ranks_plural[cards[0][0]]});
  if (ranks[1] === ranks[0] + 1 && ranks[2] === ranks[1] + 1) return fill(A.combination.sequence, {the_rank: A.the_rank[order[ranks[2]]]});
  if (options && options.ace_low_sequence && ranks[0] === 0 && ranks[1] === 1 && ranks[2] === 12) return fill(A.combination.sequence, {the_rank: A.the_rank["3"]});
  if (cards[0][1] === cards[1][1] && cards[1][1] === cards[2][1]) return fill(A.combination.point, {suit: A.suit[cards[0][1]]});
  return null;
}
// Each event of a record as a sentence, and who played it when it was not the player's choice.
function narrate(record) {
  const n = record.seats.length, L = A.log, E = A.event;
  const who = seat => seat === "pot" ? A.the_pot : seatName(record, seat) || "?";
  const list = new Intl.ListFormat(document.documentElement.lang || "fr", {type: "conjunction"});
  const signed = v => (v > 0 ? "+" : v < 0 ? "−" : "") + Math.abs(v);
  // The run's next card: after the seven of diamonds the Comet fills the gap up to the ten.
  const successor = c => c === "8D" ? "TD" : "A23456789TJQK"["A23456789TJQK".indexOf(c[0]) + 1] + c[1];
  let lastCard = null, lastOfferer = null, offerOpen = false;
  function sentence(e) {
    switch (e.type) {
      case "hand_started": return fill(L.hand_started, {number: record.number, name: who(e.dealer)});
      case "share": return fill(E.share, {name: who(e.seat)});
      case "deal": return (e.contributors || []).length ? fill(E.deal, {names: list.format(e.contributors.map(who))}) : E.deal_alone;
      case "open": lastCard = e.card; return fill(L.open, {name: who(e.seat), card: theCard(e.card)});
      case "play": lastCard = e.card; return fill(L.play, {name: who(e.seat), card: theCard(e.card)});
      case "comet": lastCard = e.stands_for; return fill(L.comet, {name: who(e.seat), card: theCard(e.stands_for)});
      case "keep_comet": return fill(L.keep_comet, {name: who(e.seat)});
      case "stop": return e.reason === "king" ? L.stop_king : e.reason === "gap" ? L.stop_gap
        : fill(L.stop_played, {card: isCard(lastCard) ? theCard(successor(lastCard)) : "?"});
      case "out": return fill(L.out, {name: who(e.seat)});
      case "offer": lastOfferer = e.seat; offerOpen = true;
        return fill(L.offer, {name: who(e.seat), to: who((e.seat + 1) % n), card: theCard(e.card)});
      case "give_back": offerOpen = false; return fill(L.give_back, {name: who(e.seat), to: who(lastOfferer), card: theCard(e.card)});
      case "draw": return fill(L.draw, {name: who(e.seat), card: theCard(e.card)});
      case "return": return fill(L.return, {name: who(e.seat), card: theCard(e.card)});
      case "announce": {
        // The asked seat announcing instead of giving back withdraws the offer (RULES.md §1).
        const withdrawn = offerOpen && e.seat === (lastOfferer + 1) % n;
        offerOpen = false;
        const said = fill(L.announce, {name: who(e.seat)});
        return withdrawn ? said + " " + fill(L.offer_withdrawn, {name: who(lastOfferer)}) : said;
      }
      case "showdown": return e.winner === null || e.winner === undefined ? L.void
        : fill(L.showdown, {name: who(e.winner), combination: combinationOf(e.hands && e.hands[String(e.winner)], record.options) || A.reason[e.combination] || String(e.combination)});
      case "void": return L.void;
      case "pay": {
        const values = {from: who(e.from), to: who(e.to), amount: e.amount, reason: A.reason[e.reason] || e.reason, short: e.short};
        if (e.reason === "pot") return fill(L.takes_pot, values);
        if (e.to === "pot") return fill(e.short ? L.pay_pot_short : L.pay_pot, values);
        return fill(e.short ? L.pay_short : L.pay, values);
      }
      case "hand_over": {
        const result = e.result || {};
        const nets = Object.entries(result.net || {}).sort((a, b) => Number(a[0]) - Number(b[0])).map(([s, v]) => `${who(Number(s))} ${signed(v)}`).join(", ");
        return result.winner === null || result.winner === undefined ? fill(E.hand_over_void, {nets})
          : fill(E.hand_over, {name: who(result.winner), nets});
      }
      default: return fill(E.unknown, {type: e.type});
    }
  }
  function by(e) {
    if (e.by === "forced" || e.by === "timeout") return A.by[e.by];
    return e.by === "player" && A.seats[e.seat] && A.seats[e.seat].bot ? A.by.bot : "";
  }
  return record.events.map(e => {
    try { return {text: sentence(e), by: by(e)}; } catch (error) { return {text: fill(E.unknown, {type: e.type}), by: ""}; }
  });
}
// The hand as recorded, event by event: each a sentence, opening onto its JSON as recorded.
function showEvents(record) {
  const told = narrate(record);
  document.getElementById("events").innerHTML = record.events.map((e, i) => `<li id="event-${esc(e.seq)}" data-seq="${esc(e.seq)}" data-type="${esc(e.type)}"><details><summary><span class="seq">${esc(e.seq)}</span> ${esc(told[i].text)}${told[i].by ? ` <span class="by">(${esc(told[i].by)})</span>` : ""}</summary><pre>${esc(JSON.stringify(e, null, 1))}</pre></details></li>`).join("");
  document.getElementById("record-json").textContent = JSON.stringify(record, null, 1);
  // A dispute's event, said in words beside its number, linked to its line above.
  document.querySelectorAll(".event-words[data-event]").forEach(span => {
    const i = record.events.findIndex(e => String(e.seq) === span.dataset.event);
    if (i >= 0) span.innerHTML = `(<a href="#event-${esc(record.events[i].seq)}">${esc(told[i].text)}</a>)`;
  });
}
// Every seat's cards at the deal, in suit and rank order, in words.
function showDeal(record) {
  const n = record.seats.length, hands = Array.from({length: n}, () => []);
  const dealt = record.game === "comet" ? record.deck.length : 3 * n;
  for (let i = 0; i < dealt; i++) hands[(record.dealer + 1 + i) % n].push(record.deck[i]);
  const ranks = record.game === "comet" ? "A23456789TJQK" : "23456789TJQKA";
  const sorted = h => h.slice().sort((a, b) => "SHCD".indexOf(a[1]) - "SHCD".indexOf(b[1]) || ranks.indexOf(a[0]) - ranks.indexOf(b[0]));
  document.getElementById("deal").innerHTML = hands.map((h, s) => `<p class="seat">${say(words.seat, {seat: s, player: seatName(record, s)})}</p><ul class="cards">${sorted(h).map(c => cardItem(c, record.game)).join("")}</ul>`).join("") + `<p class="muted">${say(words.seed, {seed: record.seed})}</p>`;
}

// A failed check in words: its reason in the page's language, at its event when it names one.
function reason(c) {
  let phrase;
  if (c.why === "rules") phrase = words["rules" + cap(c.values.code || "expected")] || words.rulesExpected;
  else phrase = words["why" + cap(c.why)] || c.detail;
  const values = Object.assign({seq: c.seq}, c.values);
  // The deck's cards in words, not as codes.
  if (c.why === "deck") { values.found = theCard(values.found); values.expected = theCard(values.expected); }
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
  showDeal(record);
  showEvents(record);
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
  other.part("which").textContent = known ? fill(words.which, {game: A.games[given.game] || given.game, number: given.number, hand: given.hand}) : "";
  other.result.hidden = false;
}
document.getElementById("other-check").addEventListener("click", () => checkOther(document.getElementById("other-text").value));
document.getElementById("other-file").addEventListener("change", async e => {
  const file = e.target.files[0];
  if (!file) return;
  if (file.size > MAX_BYTES) { e.target.value = ""; return otherError(words.tooBig); }
  await checkOther(await file.text());
});
