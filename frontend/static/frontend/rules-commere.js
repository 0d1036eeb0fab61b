// Ma commère (RULES.md §1) as a state machine for the replay of a hand record: the deal, the
// strength of three cards, the legal moves, the move the service plays for an awaited seat
// (the card whose loss leaves the strongest holding), and the service events (draws,
// showdown, void, payments, hand_over) each move makes due.
//
// rules.js holds the shared values, the header, the shares and checkPlay; rules-replay.js the
// replay that drives this game; rules-comet.js the other game. Loaded after rules.js: this
// adds commere to its object's games (window.AcademieRules in a page, its module.exports
// under node).
"use strict";
(function (rules) {
  const {rankOf, suitOf, byDeckOrder, legalMove} = rules.shared;

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

  rules.games.commere = commere;
})(typeof module !== "undefined" && module.exports ? require("./rules.js") : window.AcademieRules);
