// The play of a hand record checked in the browser, independently of the server: the header
// against hand_started, the players' shares (versions 2 and 3), then every event re-played
// under RULES.md from the deck as the record gives it (HAND_RECORD.md, "Verifying"). The
// cryptography (commitment, deck, seals, chain) is verify.js's; this file trusts record.deck.
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

  // ---------------------------------------------------------------- shared: the replay

  // A game is a state machine with: queue (the service events now due, already applied),
  // moves() (the legal moves now, each {seat, event}), fallback(seat) (the move the service
  // plays for a seat it awaits when his deadline passes: the RULES.md §3 default, or his only
  // legal move; null for a seat it does not await), play(event) and result().
  function replay(game, events, start) {
    const afterLast = events.length;
    let i = start;
    for (; i < afterLast; i++) {
      const found = events[i], seq = seqOf(found, i);
      if (game.over) fail(seq, "over", "an event after hand_over: " + canonical(bare(found)));
      if (game.queue.length) {
        const expected = game.queue.shift();
        if (sameEvent(found, expected)) {
          if (expected.type === "hand_over") game.over = true;
          continue;
        }
        const code = expected.type === "hand_over" && sameEvent(found, {...expected, result: found.result})
          ? "result" : "expected";
        fail(seq, code, `expected ${canonical(expected)}, found ${canonical(bare(found))}`);
      }
      try {
        checkMove(game, found, seq);
      } catch (error) {
        if (error instanceof Found) throw error;
        fail(seq, "expected", "cannot replay this event: " + (error && error.message));
      }
    }
    if (!game.over) {
      const last = afterLast ? seqOf(events[afterLast - 1], afterLast - 1) : null;
      fail(last, "incomplete", "the record stops before hand_over");
    }
  }

  function checkMove(game, found, seq) {
    if (!isObject(found)) fail(seq, "illegal", "not an event: " + canonical(found));
    const by = found.by;
    if (by === "service") {
      fail(seq, "expected", "no service event is due here, a move is: " + canonical(bare(found)));
    }
    const legal = game.moves();
    const match = legal.find(m => sameEvent(found, m.event, "by"));
    if (!match) {
      const {by: _, ...move} = bare(found);
      const moves = legal.map(m => canonical(m.event)).join(" ") || "none";
      fail(seq, "illegal", `${canonical(move)} is not a legal move; legal: ${moves}`);
    }
    const seat = match.seat;
    if (by === "forced") {
      // Played for a seat the hand waits for, when it is his only legal move.
      if (game.fallback(seat) === null) fail(seq, "forced", `seat ${seat} was not awaited`);
      const own = legal.filter(m => m.seat === seat).length;
      if (own !== 1) fail(seq, "forced", `seat ${seat} had ${own} legal moves, not one`);
    } else if (by === "timeout") {
      const fallback = game.fallback(seat);
      if (fallback === null) fail(seq, "timeout", `seat ${seat} was not awaited`);
      if (!same(fallback, match.event)) {
        fail(seq, "timeout", `the default move is ${canonical(fallback)}, found ${canonical(match.event)}`);
      }
    } else if (by !== "player") {
      fail(seq, "illegal", `a move by ${canonical(by)}`);
    }
    game.play(match.event);
  }

  const legalMove = (seat, event) => ({seat, event});

  // ---------------------------------------------------------------- Comet (RULES.md §2)

  const COMET = "9D";
  const KING = 12;

  function comet(h) {
    const {n, dealer, options, purse} = h;
    const hands = Array.from({length: n}, () => new Set());
    const owner = Object.create(null);     // card -> the seat holding it
    h.deck.forEach((card, k) => {          // deck[0] to the seat after the dealer, and round
      const seat = (dealer + 1 + k) % n;
      hands[seat].add(card);
      owner[card] = seat;
    });
    const played = new Set();              // real cards played (the Comet standing for one is not)
    const game = {queue: [], over: false};
    let phase = "open";                    // open | need | blocked
    let opener = (dealer + 1) % n;         // the player after the dealer opens the first run
    let need = null;                       // the card the run needs (need, blocked)
    let blockedBy = null;                  // gap | played, while the Comet holder is asked
    let lastBy = null;                     // who played the run's last card (he opens next)
    let winner = null;

    const cometHolder = () => (owner[COMET] === undefined ? null : owner[COMET]);
    const give = (seat, card) => { hands[seat].delete(card); delete owner[card]; };
    const emit = event => { if (event) game.queue.push(event); };

    // The deal ends the moment a player plays his last card: he takes the pot, and every
    // other player pays per_card for each card still held (the Comet counts as one).
    function goOut(seat) {
      winner = seat;
      emit({type: "out", by: "service", seat});
      emit(purse.takePot(seat));
      for (let k = 1; k < n; k++) {
        const other = (seat + k) % n;
        emit(purse.debt(other, seat, options.per_card * hands[other].size, "per_card"));
      }
      emit({type: "hand_over", by: "service", result: game.result()});
      phase = "done";
    }

    // A run now stands at `card` (played, or stood for by the Comet) and seat played it.
    function runAt(card, seat) {
      lastBy = seat;
      if (hands[seat].size === 0) return goOut(seat);
      if (rankOf(card) === KING) return stop("king");
      // After 7D comes the missing 8D; the Comet standing for 8D fills the gap up to TD.
      const next = card === "8D" ? "TD" : RANKS[rankOf(card) + 1] + card[1];
      need = next;
      if (next === "8D") return blocked("gap");
      if (played.has(next)) return blocked("played");
      phase = "need";
    }
    // Blocked for a reason but a king: the Comet's holder, if it is still in a hand, is
    // asked first (play it for the needed card, or keep it); else the run stops.
    function blocked(reason) {
      if (cometHolder() === null) return stop(reason);
      phase = "blocked";
      blockedBy = reason;
    }
    function stop(reason) {
      emit({type: "stop", by: "service", reason});
      phase = "open";
      opener = lastBy;
    }

    game.moves = function () {
      const moves = [];
      const holder = cometHolder();
      if (phase === "open") {
        // To open: the lowest card of a suit, the Comet not counted; the Comet opens only as
        // its holder's last card, standing for the 9D.
        for (const suit of SUITS) {
          let lowest = null;
          for (const card of hands[opener]) {
            if (card[1] !== suit || card === COMET) continue;
            if (lowest === null || rankOf(card) < rankOf(lowest)) lowest = card;
          }
          if (lowest !== null) {
            moves.push(legalMove(opener, {type: "open", seat: opener, suit, card: lowest}));
          }
        }
        if (moves.length === 0 && holder === opener) {
          moves.push(legalMove(opener, {type: "comet", seat: opener, stands_for: COMET}));
        }
      } else if (phase === "need") {
        const seat = owner[need];
        moves.push(legalMove(seat, {type: "play", seat, card: need}));
        // The Comet may stand for the card the run needs, whoever holds that card.
        if (holder !== null) {
          moves.push(legalMove(holder, {type: "comet", seat: holder, stands_for: need}));
        }
      } else if (phase === "blocked") {
        moves.push(legalMove(holder, {type: "comet", seat: holder, stands_for: need}));
        moves.push(legalMove(holder, {type: "keep_comet", seat: holder}));
      }
      return moves;
    };

    // RULES.md §3: an opening defaults to the suit with the most cards (the Comet not counted),
    // then the suit whose lowest card is lowest, then suit order; the holder of the next card
    // plays it, even when he holds the Comet too; the holder asked at a block keeps it.
    game.fallback = function (seat) {
      if (phase === "open" && seat === opener) {
        let best = null, bestCount = 0, bestLow = 0;
        for (const suit of SUITS) {
          let count = 0, low = 99;
          for (const card of hands[seat]) {
            if (card[1] === suit && card !== COMET) { count++; low = Math.min(low, rankOf(card)); }
          }
          if (count > bestCount || (count === bestCount && count > 0 && low < bestLow)) {
            best = suit; bestCount = count; bestLow = low;
          }
        }
        if (best === null) return {type: "comet", seat, stands_for: COMET};   // his only move
        return {type: "open", seat, suit: best, card: RANKS[bestLow] + best};
      }
      // The holder of the next card is awaited (his only move, unless he holds the Comet too);
      // the Comet's holder is not: letting his chance pass is no event.
      if (phase === "need" && seat === owner[need]) return {type: "play", seat, card: need};
      if (phase === "blocked" && seat === cometHolder()) return {type: "keep_comet", seat};
      return null;
    };

    game.play = function (event) {
      const seat = event.seat;
      if (event.type === "open" || event.type === "play") {
        give(seat, event.card);
        played.add(event.card);
        runAt(event.card, seat);
      } else if (event.type === "comet") {
        give(seat, COMET);
        // Every other player pays the holder at once, starting with the seat after him.
        for (let k = 1; k < n; k++) emit(purse.debt((seat + k) % n, seat, h.cometDue, "comet"));
        if (event.stands_for === COMET) goOut(seat); else runAt(event.stands_for, seat);
      } else {
        stop(blockedBy);              // keep_comet: the run stops where it was blocked
      }
    };

    game.result = () => ({winner, net: purse.net()});
    return game;
  }

  // ---------------------------------------------------------------- Ma commère (RULES.md §1)

  const POINTS = [11, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10];   // by RANKS index
  const high = card => (rankOf(card) === 0 ? 13 : rankOf(card)); // A high: 2 = 1 … A = 13
  const TYPES = {3: "tricon", 2: "sequence", 1: "point"};

  // The strength of three cards as a list compared left to right: type (tricon 3, séquence 2,
  // point 1), then 0 for the ace-low A-2-3 (below every other séquence) else 1, then points,
  // then the ranks from the highest down. null when they make no combination.
  function strength(cards, aceLow) {
    const v = cards.map(high).sort((a, b) => b - a);
    const points = cards.reduce((sum, c) => sum + POINTS[rankOf(c)], 0);
    let type = 0, lowAce = 1;
    if (v[0] === v[1] && v[1] === v[2]) type = 3;
    else if (v[0] === v[1] + 1 && v[1] === v[2] + 1) type = 2;
    else if (aceLow && v[0] === 13 && v[1] === 2 && v[2] === 1) { type = 2; lowAce = 0; }
    else if (cards[0][1] === cards[1][1] && cards[1][1] === cards[2][1]) type = 1;
    return type ? [type, lowAce, points, v[0], v[1], v[2]] : null;
  }
  function compare(a, b) {
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] - b[i];
    return 0;
  }

  // The best two-card part of kept cards: a pair 3, two consecutive ranks as a séquence would
  // allow 2 (A-K; A-2 only with ace_low_sequence), two of a suit 1, nothing 0.
  function bestPair(cards, aceLow) {
    let best = 0;
    for (let i = 0; i < cards.length; i++) {
      for (let j = i + 1; j < cards.length; j++) {
        const a = high(cards[i]), b = high(cards[j]);
        const part = a === b ? 3
          : Math.abs(a - b) === 1 || (aceLow && Math.min(a, b) === 1 && Math.max(a, b) === 13) ? 2
          : cards[i][1] === cards[j][1] ? 1 : 0;
        best = Math.max(best, part);
      }
    }
    return best;
  }

  // RULES.md §3, the card to give on a time-out: the one whose loss leaves the strongest
  // holding (kept cards plus, for a give-back, the offered card): by the combination of three
  // kept cards, then the best two-card part, then the points; then the lowest card given.
  function defaultGift(choices, held, extra, aceLow) {
    let best = null, bestKey = null;
    for (const card of choices) {
      const kept = held.filter(c => c !== card).concat(extra);
      const points = kept.reduce((sum, c) => sum + POINTS[rankOf(c)], 0);
      const combo = (kept.length === 3 && strength(kept, aceLow)) || [0, 0, 0, 0, 0, 0];
      const key = combo.concat(bestPair(kept, aceLow), points);
      const cmp = best === null ? 1 : compare(key, bestKey);
      const lower = best !== null
        && (high(card) < high(best) || (high(card) === high(best) && suitOf(card) < suitOf(best)));
      if (cmp > 0 || (cmp === 0 && lower)) { best = card; bestKey = key; }
    }
    return best;
  }

  function commere(h) {
    const {n, dealer, options, purse} = h;
    const aceLow = options.ace_low_sequence, compulsory = options.compulsory_announce;
    const speakers = Array.from({length: n}, (_, k) => (dealer + 1 + k) % n);  // banker last
    const hands = Array.from({length: n}, () => []);
    // Three rounds of one card each, starting with the seat after the banker; the rest is
    // the talon, deck[3n] on top; returned cards go under it.
    for (let k = 0; k < 3 * n; k++) hands[speakers[k % n]].push(h.deck[k]);
    const talon = h.deck.slice(3 * n);
    const game = {queue: [], over: false};
    let turn = 1;
    let step = 0;            // index in speakers of the seat speaking (phase 1) or returning (phase 2)
    let phase = "speak";     // speak | asked | last (end of phase 1) | return | done
    let offered = null;      // the card offered to the asked seat
    let winner = null, combination = null;

    const combo = seat => strength(hands[seat], aceLow);
    const shown = () => {
      const all = {};
      hands.forEach((cards, s) => { all[String(s)] = cards.slice().sort(byDeckOrder); });
      return all;
    };
    const emit = event => { if (event) game.queue.push(event); };

    // The strongest combination on the table wins; equal ones go to the seat nearest the
    // banker's next seat in speaking order. Only the winning combination is paid.
    function showdown() {
      let bestSeat = null, best = null;
      for (const seat of speakers) {
        const s = combo(seat);
        if (s && (best === null || compare(s, best) > 0)) { best = s; bestSeat = seat; }
      }
      winner = bestSeat;
      combination = TYPES[best[0]];
      emit({type: "showdown", by: "service", hands: shown(), winner, combination});
      emit(purse.takePot(winner));
      const each = combination === "tricon" ? 2 : combination === "sequence" ? 1 : 0;
      for (let k = 1; k < n; k++) emit(purse.debt((winner + k) % n, winner, each, combination));
      finish();
    }
    function finish() {
      emit({type: "hand_over", by: "service", result: game.result()});
      phase = "done";
    }
    // Every player has spoken: a combination anywhere ends the round as if its first holder
    // in speaking order had announced; none at turn max_turns voids it; else phase 2.
    function endOfPhaseOne() {
      if (speakers.some(s => combo(s))) { phase = "last"; return; }
      if (options.max_turns !== null && turn >= options.max_turns) {
        emit({type: "void", by: "service", hands: shown()});
        return finish();
      }
      phase = "return";
      step = 0;
      draw();
    }
    function draw() {
      const seat = speakers[step], card = talon.shift();
      hands[seat].push(card);
      emit({type: "draw", by: "service", seat, card});
    }

    const speaker = () => speakers[step];
    const asked = () => (speakers[step] + 1) % n;

    game.moves = function () {
      const moves = [];
      const add = (seat, type, cards) => {
        for (const card of cards) moves.push(legalMove(seat, {type, seat, card}));
      };
      if (phase === "speak" || phase === "asked") {
        const seat = phase === "speak" ? speaker() : asked();
        const holds = combo(seat) !== null;
        if (holds) moves.push(legalMove(seat, {type: "announce", seat}));
        if (!holds || !compulsory) add(seat, phase === "speak" ? "offer" : "give_back", hands[seat]);
      } else if (phase === "last") {
        const seat = speakers.find(s => combo(s));
        moves.push(legalMove(seat, {type: "announce", seat}));
      } else if (phase === "return") {
        add(speaker(), "return", hands[speaker()]);
      }
      return moves;
    };

    // RULES.md §3: announce when announcing is allowed; otherwise the card whose loss leaves
    // the strongest holding.
    game.fallback = function (seat) {
      if (phase === "speak" || phase === "asked") {
        if (seat !== (phase === "speak" ? speaker() : asked())) return null;
        if (combo(seat)) return {type: "announce", seat};
        const extra = phase === "asked" ? [offered] : [];
        const card = defaultGift(hands[seat], hands[seat], extra, aceLow);
        return {type: phase === "speak" ? "offer" : "give_back", seat, card};
      }
      if (phase === "last") {
        const first = speakers.find(s => combo(s));
        return seat === first ? {type: "announce", seat} : null;
      }
      if (phase === "return" && seat === speaker()) {
        return {type: "return", seat, card: defaultGift(hands[seat], hands[seat], [], aceLow)};
      }
      return null;
    };

    game.play = function (event) {
      const seat = event.seat;
      if (event.type === "announce") return showdown();   // an offer, if any, is withdrawn
      if (event.type === "offer") {
        offered = event.card;
        phase = "asked";
      } else if (event.type === "give_back") {
        // The two cards change hands together.
        const from = speaker();
        hands[from] = hands[from].filter(c => c !== offered).concat(event.card);
        hands[seat] = hands[seat].filter(c => c !== event.card).concat(offered);
        offered = null;
        step += 1;
        if (step < n) phase = "speak"; else endOfPhaseOne();
      } else if (event.type === "return") {
        hands[seat] = hands[seat].filter(c => c !== event.card);
        talon.push(event.card);
        step += 1;
        if (step < n) {
          draw();
        } else {
          turn += 1;
          step = 0;
          phase = "speak";
        }
      }
    };

    game.result = () => ({winner, net: purse.net(), combination});
    return game;
  }

  // ---------------------------------------------------------------- the check

  function checkPlay(record) {
    let stage = "header";
    try {
      const h = readHeader(record);
      const events = record.events;
      stage = "events";
      checkStarted(record, events[0]);
      let start = 1;
      if (record.format !== FORMATS[0]) start = checkShares(events, h.n);
      const game = h.game === "comet" ? comet(h) : commere(h);
      // The antes come first, one per seat from the seat after the dealer.
      for (let k = 1; k <= h.n; k++) {
        const ante = h.purse.debt((h.dealer + k) % h.n, "pot", h.options.ante, "ante");
        if (ante) game.queue.push(ante);
      }
      replay(game, events, start);
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

  if (typeof window !== "undefined") window.AcademieRules = {checkPlay};
  if (typeof module !== "undefined" && module.exports) module.exports = {checkPlay};
})();
