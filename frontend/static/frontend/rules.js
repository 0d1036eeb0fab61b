// The play of a hand record checked in the browser, independently of the server: the header
// against hand_started, the players' shares (versions 2 and 3), then every event re-played
// under RULES.md from the deck as the record gives it (HAND_RECORD.md, "Verifying"). The
// cryptography (commitment, deck, seals, chain) is verify.js's; these files trust record.deck.
//
// This file holds what the parts share (values, cards, chips), the header, the shares and
// checkPlay. Its siblings add themselves to the object it exports: rules-replay.js the
// replay of the events against a game, rules-comet.js and rules-commere.js the two games
// (RULES.md §2 and §1). A page loads this file first, then the three as plain scripts, and
// finds the object at window.AcademieRules; node requires this file, then the three, and the
// object is this file's module.exports.
//
// checkPlay(record) returns null when the play holds, else the first discrepancy:
// {seq, code, detail}, code one of header, shares, illegal, forced, timeout, expected, over,
// incomplete, result. It never throws: a tampered record may hold anything.
"use strict";
(function () {
  const RANKS = "A23456789TJQK";
  const SUITS = "CDHS";
  const FORMATS = ["academie.hand/1", "academie.hand/2", "academie.hand/3"];
  // Fields of an event that say where it stands in the chain, not what happened.
  const IGNORED = new Set(["seq", "at", "prev", "hash", "seals"]);
  const HEX64 = /^[0-9a-f]{64}$/;

  // ---------------------------------------------------------------- shared: values

  const isObject = v => v !== null && typeof v === "object" && !Array.isArray(v);
  const has = (object, key) => Object.prototype.hasOwnProperty.call(object, key);
  // Counts beyond 2**53 cannot be added exactly here (and JSON's 1e300 reads as one): refused.
  const isCount = v => Number.isSafeInteger(v) && v >= 0;

  // Two JSON values are the same when their types are (1 is not "1" nor true, null is not a
  // missing key) and so are their members; the order of an object's keys does not matter.
  function same(a, b) {
    if (a === b) return true;
    if (Array.isArray(a)) {
      return Array.isArray(b) && a.length === b.length && a.every((v, i) => same(v, b[i]));
    }
    if (!isObject(a) || !isObject(b)) return false;
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every(k => has(b, k) && same(a[k], b[k]));
  }
  // An event found in the record against the one the rules expect, without the fields that
  // place it in the chain (and without `skip`: a move's `by` is judged apart).
  function sameEvent(found, expected, skip) {
    if (!isObject(found)) return false;
    let fields = 0;
    for (const key of Object.keys(found)) {
      if (IGNORED.has(key) || key === skip) continue;
      if (!has(expected, key) || !same(found[key], expected[key])) return false;
      fields++;
    }
    return fields === Object.keys(expected).length;
  }

  // Canonical JSON (keys sorted), to name values in a discrepancy's detail.
  function canonical(value) {
    if (Array.isArray(value)) return "[" + value.map(canonical).join(",") + "]";
    if (isObject(value)) {
      return "{" + Object.keys(value).sort()
        .map(k => JSON.stringify(k) + ":" + canonical(value[k])).join(",") + "}";
    }
    const text = JSON.stringify(value);
    return text === undefined ? "null" : text;
  }

  // An event as a discrepancy shows it: without its place in the chain. (No prototype, so that
  // a "__proto__" key stays a field.)
  function bare(event) {
    if (!isObject(event)) return event;
    const out = Object.create(null);
    for (const key of Object.keys(event)) if (!IGNORED.has(key)) out[key] = event[key];
    return out;
  }

  // A legal move of a game (moves() in rules-replay.js): who may play it, and its event.
  const legalMove = (seat, event) => ({seat, event});

  const rankOf = card => RANKS.indexOf(card[0]);       // A = 0 … K = 12
  const suitOf = card => SUITS.indexOf(card[1]);       // C < D < H < S
  const byDeckOrder = (a, b) => suitOf(a) * 13 + rankOf(a) - (suitOf(b) * 13 + rankOf(b));
  function fullDeck(game) {
    const deck = [];
    for (const s of SUITS) for (const r of RANKS) deck.push(r + s);
    return game === "comet" ? deck.filter(c => c !== "8D") : deck;
  }

  // The first discrepancy travels up as an exception and leaves checkPlay as a value.
  class Found {
    constructor(seq, code, detail) { this.seq = seq; this.code = code; this.detail = detail; }
  }
  const fail = (seq, code, detail) => { throw new Found(seq, code, detail); };
  const seqOf = (event, index) =>
    (isObject(event) && Number.isInteger(event.seq) ? event.seq : index + 1);

  // ---------------------------------------------------------------- shared: chips

  // Chips never go below zero: a debtor pays what he has, the rest is recorded as short.
  // Every debt that falls due gives one pay event, a debt of nothing gives none.
  class Purse {
    constructor(chipsBefore, pot, n) {
      this.before = [];
      for (let s = 0; s < n; s++) this.before.push(chipsBefore[String(s)]);
      this.chips = this.before.slice();
      this.pot = pot;
    }
    debt(from, to, due, reason) {
      if (due <= 0) return null;
      const amount = Math.min(due, this.chips[from]);
      this.chips[from] -= amount;
      if (to === "pot") this.pot += amount; else this.chips[to] += amount;
      return {type: "pay", by: "service", from, to, amount, reason, short: due - amount};
    }
    takePot(to) {
      if (this.pot <= 0) return null;
      const amount = this.pot;
      this.pot = 0;
      this.chips[to] += amount;
      return {type: "pay", by: "service", from: "pot", to, amount, reason: "pot", short: 0};
    }
    net() {
      const net = {};
      this.chips.forEach((c, s) => { net[String(s)] = c - this.before[s]; });
      return net;
    }
  }

  // ---------------------------------------------------------------- shared: the header

  // Every option of RULES.md is in the record ("options holds every option"), and no other.
  const isFlag = v => typeof v === "boolean";
  const isLimit = v => v === null || (Number.isSafeInteger(v) && v >= 1);
  const GAMES = {
    comet: {min: 2, max: 6, options: {ante: isCount, per_card: isCount, comet_payment: isCount,
                                      progressive_comet: isFlag, deals: isLimit, until_broke: isFlag}},
    commere: {min: 4, max: 12, options: {ante: isCount, compulsory_announce: isFlag,
                                         ace_low_sequence: isFlag, max_turns: isLimit,
                                         rounds: isLimit, until_broke: isFlag}},
  };
  const STARTED_FIELDS = ["dealer", "seats", "options", "chips_before", "pot_before", "commitment"];

  function readHeader(record) {
    const bad = detail => fail(null, "header", detail);
    if (!isObject(record)) bad("the record is not an object");
    if (!FORMATS.includes(record.format)) bad("unknown format " + canonical(record.format));
    const rules = has(GAMES, record.game) ? GAMES[record.game] : null;
    if (!rules) bad("unknown game " + canonical(record.game));
    const seats = record.seats;
    if (!Array.isArray(seats) || seats.length < rules.min || seats.length > rules.max) {
      bad(`seats: ${rules.min} to ${rules.max} seats needed`);
    }
    seats.forEach((s, i) => { if (!isObject(s) || s.seat !== i) bad(`seats[${i}] is not seat ${i}`); });
    const n = seats.length;
    const dealer = record.dealer;
    if (!Number.isInteger(dealer) || dealer < 0 || dealer >= n) bad("dealer is not a seat");
    const options = record.options;
    if (!isObject(options)) bad("options is not an object");
    for (const [name, valid] of Object.entries(rules.options)) {
      if (!has(options, name)) bad(`option ${name} is missing`);
      if (!valid(options[name])) bad(`option ${name} = ${canonical(options[name])}`);
    }
    for (const name of Object.keys(options)) {
      if (!has(rules.options, name)) bad(`unknown option ${name}`);
    }
    if (!Number.isSafeInteger(record.number) || record.number < 1) bad("number is not a hand number");
    const chips = record.chips_before;
    if (!isObject(chips) || Object.keys(chips).length !== n) bad("chips_before does not name every seat");
    for (let s = 0; s < n; s++) {
      if (!has(chips, String(s)) || !isCount(chips[String(s)])) bad(`chips_before of seat ${s}`);
    }
    if (!isCount(record.pot_before)) bad("pot_before is not a count of chips");
    if (record.game === "comet") {
      // The payment in force: the base, doubled once per consecutive earlier deal of the
      // partie without the Comet, so at most number - 1 doublings (none without the option).
      const due = record.comet_payment_due, base = options.comet_payment;
      const doublings = options.progressive_comet && base > 0 ? record.number - 1 : 0;
      let ok = due === base;
      for (let k = 1, d = 2 * base; !ok && k <= doublings && d <= Number.MAX_SAFE_INTEGER; k++) {
        ok = due === d;
        d *= 2;
      }
      if (!ok) {
        bad(`comet_payment_due ${canonical(due)} cannot follow comet_payment ${base} `
            + `in hand ${record.number}`);
      }
    } else if (has(record, "comet_payment_due")) {
      bad("comet_payment_due in a Ma commère record");
    }
    const deck = record.deck, cards = new Set(fullDeck(record.game));
    if (!Array.isArray(deck) || deck.length !== cards.size || new Set(deck).size !== cards.size
        || !deck.every(c => cards.has(c))) {
      bad("deck is not a full deck of the game");
    }
    if (!Array.isArray(record.events) || record.events.length === 0) bad("no events");
    return {game: record.game, n, dealer, options, deck,
            purse: new Purse(chips, record.pot_before, n),
            cometDue: record.comet_payment_due};
  }

  // hand_started repeats the header, field for field.
  function checkStarted(record, event) {
    const expected = {type: "hand_started", by: "service"};
    for (const f of STARTED_FIELDS) expected[f] = record[f];
    if (record.game === "comet") expected.comet_payment_due = record.comet_payment_due;
    if (!sameEvent(event, expected)) {
      fail(seqOf(event, 0), "header",
           `hand_started ≠ the header: expected ${canonical(expected)}, found ${canonical(bare(event))}`);
    }
  }

  // Versions 2 and 3: the shares sent between hand_started and deal, one per seat at most,
  // then deal naming exactly their seats in ascending order. Returns the index after deal.
  function checkShares(events, n) {
    const sent = [];
    let i = 1;
    for (; i < events.length; i++) {
      const e = events[i];
      if (!isObject(e) || e.type !== "share") break;
      const {seat, share} = e;
      const ok = Number.isInteger(seat) && seat >= 0 && seat < n && !sent.includes(seat)
        && typeof share === "string" && HEX64.test(share);
      if (!ok || !sameEvent(e, {type: "share", by: "player", seat, share})) {
        fail(seqOf(e, i), "shares", "not a share a seat may send: " + canonical(bare(e)));
      }
      sent.push(seat);
    }
    if (i === events.length) {
      fail(seqOf(events[i - 1], i - 1), "incomplete", "the record stops before the deal");
    }
    const expected = {type: "deal", by: "service", contributors: sent.slice().sort((a, b) => a - b)};
    if (!sameEvent(events[i], expected)) {
      fail(seqOf(events[i], i), "shares",
           `expected ${canonical(expected)}, found ${canonical(bare(events[i]))}`);
    }
    return i + 1;
  }

  // ---------------------------------------------------------------- the check

  // The games and the replay are looked up here when a record is checked: their files are
  // loaded after this one.
  const rules = {
    checkPlay,
    games: {},
    shared: {RANKS, SUITS, isObject, same, sameEvent, canonical, bare, Found, fail, seqOf,
             rankOf, suitOf, byDeckOrder, legalMove},
  };

  function checkPlay(record) {
    let stage = "header";
    try {
      const h = readHeader(record);
      const events = record.events;
      stage = "events";
      checkStarted(record, events[0]);
      let start = 1;
      if (record.format !== FORMATS[0]) start = checkShares(events, h.n);
      const game = rules.games[h.game](h);
      // The antes come first, one per seat from the seat after the dealer.
      for (let k = 1; k <= h.n; k++) {
        const ante = h.purse.debt((h.dealer + k) % h.n, "pot", h.options.ante, "ante");
        if (ante) game.queue.push(ante);
      }
      rules.replay(game, events, start);
      if (!same(record.result, game.result())) {
        fail(null, "result",
             `the record's result ${canonical(record.result)} ≠ ${canonical(game.result())}`);
      }
      return null;
    } catch (error) {
      if (error instanceof Found) return {seq: error.seq, code: error.code, detail: error.detail};
      return {seq: null, code: stage === "header" ? "header" : "expected",
              detail: "unreadable record: " + (error && error.message ? error.message : error)};
    }
  }

  if (typeof window !== "undefined") window.AcademieRules = rules;
  if (typeof module !== "undefined" && module.exports) module.exports = rules;
})();
