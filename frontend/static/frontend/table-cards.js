// The card table's shared pieces (frontend/templates/frontend/table.html): the page's data and
// words (frontend/words.py), and cards named and drawn. The table's other scripts read them
// from the one namespace object, window.Table, and add their own parts to it:
//   table-cards.js  this file: data, words, cards
//   table-log.js    the log, in words
//   table-felt.js   the felt: seats, runs, talon, result
//   table-motion.js cards that move on the felt, one move after another
//   table-mine.js   your hand, your moves and your Comet orders
//   table-clock.js  the clock, the turn's sound
//   table-shares.js the viewer's share of randomness in the shuffle
//   table-next.js   from hand to hand, and the soirée's announcements
//   table-leave.js  leaving the table (paused, or the time-out rule) and coming back
//   replay.js, whatif.js   a finished hand step by step, and the arbiter's branches
//   table.js        the live table: moves, frames, shares, the hash chain; starts the page
// It never knows more than its viewer may see: every card it draws came from the server's view
// for this viewer.
"use strict";
window.Table = (function () {
  const T = JSON.parse(document.getElementById("table-data").textContent);
  const W = JSON.parse(document.getElementById("table-words").textContent);
  const $ = id => document.getElementById(id);
  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, (m, k) => (k in values ? values[k] : m));
  }
  const SYMBOL = {C: "♣", D: "♦", H: "♥", S: "♠"};
  const SUIT_ORDER = "SHCD";  // black, red, black, red: easy on the eye
  // Comet runs from A (low) to K; in Ma commère the ace is high.
  const RANK_ORDER = T.game === "comet" ? "A23456789TJQK" : "23456789TJQKA";
  const COMET = "9D";
  const names = {};
  T.seats.forEach(s => { names[s.number] = s.name; });  // a bot too: the club's bots are named
  const Table = {T, W, $, fill, SYMBOL, SUIT_ORDER, RANK_ORDER, COMET, current: null};

  Table.cardName = c => fill(W.card, {rank: W.rank[c[0]], suit: W.suit[c[1]]});
  Table.theCard = c => fill(W.card, {rank: W.the_rank[c[0]], suit: W.suit[c[1]]});
  Table.isRed = c => c[1] === "D" || c[1] === "H";
  Table.who = function (seat) {
    if (seat === null || seat === undefined) return "?";
    if (seat === "pot") return W.the_pot;
    if (seat === "talon") return "talon";
    return seat === T.your_seat ? `${names[seat]} (${W.you})` : names[seat];
  };
  Table.sortCards = cards => cards.slice().sort((a, b) =>
    SUIT_ORDER.indexOf(a[1]) - SUIT_ORDER.indexOf(b[1]) || RANK_ORDER.indexOf(a[0]) - RANK_ORDER.indexOf(b[0]));
  // A card drawn in CSS; "extra": more classes. Given a "label", the card is an image of that
  // name (a card on the table); else its name is only a tooltip (the hand's buttons carry
  // theirs). "attrs": more attributes, already escaped.
  Table.cardFace = function (c, extra, label, attrs) {
    if (!c) return `<span class="pc back ${extra || ""}" role="img" aria-label="?"${attrs || ""}></span>`;
    const red = Table.isRed(c) ? " red" : "";
    const rank = c[0] === "T" ? "10" : (W.face[c[0]] || c[0]);  // a French pack: V, D, R
    const named = label ? `role="img" aria-label="${esc(label)}" title="${esc(label)}"` : `title="${esc(Table.cardName(c))}"`;
    return `<span class="pc${red} ${extra || ""}" ${named}${attrs || ""}><b>${rank}</b><i>${SYMBOL[c[1]]}</i></span>`;
  };
  Table.combinationOf = function (cards) {
    // RULES.md §1: tricon, then séquence (A high; A-2-3 only with ace_low_sequence), then point.
    if (!cards || cards.length !== 3) return null;
    const ranks = cards.map(c => "23456789TJQKA".indexOf(c[0])).sort((a, b) => a - b);
    if (ranks[0] === ranks[2]) return fill(W.combination.tricon, {ranks: W.ranks_plural[cards[0][0]]});
    const current = Table.current;
    const aceLow = current && current.view.options && current.view.options.ace_low_sequence;
    if (ranks[1] === ranks[0] + 1 && ranks[2] === ranks[1] + 1)
      return fill(W.combination.sequence, {the_rank: W.the_rank["23456789TJQKA"[ranks[2]]]});
    if (aceLow && ranks[0] === 0 && ranks[1] === 1 && ranks[2] === 12)
      return fill(W.combination.sequence, {the_rank: W.the_rank["3"]});
    if (cards[0][1] === cards[1][1] && cards[1][1] === cards[2][1])
      return fill(W.combination.point, {suit: W.suit[cards[0][1]]});
    return null;
  };
  Table.successor = function (card) {
    const rank = "A23456789TJQK".indexOf(card[0]);
    return rank < 12 ? "A23456789TJQK"[rank + 1] + card[1] : card;
  };
  Table.moveLabel = function (m) {
    if (m.type === "open") return fill(W.button.open, {suit: W.suit[m.suit]});
    return W.button[m.type] || m.type;
  };
  Table.clockFormat = new Intl.DateTimeFormat(document.documentElement.lang || "fr",
    {hour: "2-digit", minute: "2-digit", second: "2-digit", timeZone: T.time_zone});
  return Table;
})();
