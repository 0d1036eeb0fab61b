// The replay of a hand record's events against a game (RULES.md), for checkPlay: the service
// events the rules make due must come next, in order; every other event must be a legal move,
// and one played for a seat (forced, timeout) the move the service may play for him.
//
// rules.js holds the shared values, the header, the shares and checkPlay; rules-comet.js and
// rules-commere.js the games this replays. Loaded after rules.js: this adds replay to its
// object (window.AcademieRules in a page, its module.exports under node).
"use strict";
(function (rules) {
  const {isObject, same, sameEvent, canonical, bare, Found, fail, seqOf} = rules.shared;

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

  rules.replay = replay;
})(typeof module !== "undefined" && module.exports ? require("./rules.js") : window.AcademieRules);
