// The Comet (RULES.md §2) as a state machine for the replay of a hand record: the deal, the
// legal moves, the move the service plays for an awaited seat, and the service events (stops,
// payments, out, hand_over) each move makes due.
//
// rules.js holds the shared values, the header, the shares and checkPlay; rules-replay.js the
// replay that drives this game; rules-commere.js the other game. Loaded after rules.js: this
// adds comet to its object's games (window.AcademieRules in a page, its module.exports under
// node).
"use strict";
(function (rules) {
  const {RANKS, SUITS, rankOf, legalMove} = rules.shared;

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

  rules.games.comet = comet;
})(typeof module !== "undefined" && module.exports ? require("./rules.js") : window.AcademieRules);
