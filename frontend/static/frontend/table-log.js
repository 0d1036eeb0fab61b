// The card table's log: each event in words (table-cards.js for the namespace).
"use strict";
(function (Table) {
  const {T, W, $, fill, who, theCard, successor, combinationOf} = Table;
  // What the log has told so far: the sentences of some events depend on earlier ones.
  const told = {
    seq: 0,  // the last seq written in the log
    offerer: null,  // the seat of the last offer
    offerOpen: false,  // an offer not yet answered
    card: null,  // the card the run has reached, as the log goes
    mover: null,  // the seat of the last move, marked on the table
  };
  Table.told = told;

  function sentence(e) {
    const L = W.log;
    switch (e.type) {
      case "hand_started": return fill(L.hand_started, {number: T.number, name: who(e.dealer)});
      case "open": return fill(L.open, {name: who(e.seat), card: e.card ? theCard(e.card) : W.suit[e.suit]});
      case "play": return fill(L.play, {name: who(e.seat), card: theCard(e.card)});
      case "comet": return fill(L.comet, {name: who(e.seat), card: theCard(e.stands_for)});
      case "keep_comet": return e.seat === null ? L.keep_comet_hidden : fill(L.keep_comet, {name: who(e.seat)});
      case "stop": return e.reason === "king" ? L.stop_king : e.reason === "gap" ? L.stop_gap
        : fill(L.stop_played, {card: told.card ? theCard(successor(told.card)) : "?"});
      case "out": return fill(L.out, {name: who(e.seat)});
      case "offer": case "give_back": {
        const to = e.type === "offer" ? (e.seat + 1) % T.seats.length : told.offerer;
        if (e.type === "offer") { told.offerer = e.seat; told.offerOpen = true; } else told.offerOpen = false;
        return fill(e.card ? L[e.type] : L[e.type + "_hidden"], {name: who(e.seat), to: who(to), card: e.card ? theCard(e.card) : ""});
      }
      case "draw": return fill(e.card ? L.draw : L.draw_hidden, {name: who(e.seat), card: e.card ? theCard(e.card) : ""});
      case "return": return fill(e.card ? L.return : L.return_hidden, {name: who(e.seat), card: e.card ? theCard(e.card) : ""});
      case "announce": {
        // The asked player announces instead of giving back: the offer is withdrawn, and
        // nothing changes hands (RULES.md §1).
        const withdrawn = told.offerOpen && told.offerer !== null && e.seat === (told.offerer + 1) % T.seats.length;
        told.offerOpen = false;
        const said = fill(L.announce, {name: who(e.seat)});
        return withdrawn ? said + " " + fill(L.offer_withdrawn, {name: who(told.offerer)}) : said;
      }
      case "showdown": return e.winner === null || e.winner === undefined ? "" :
        fill(L.showdown, {name: who(e.winner), combination: combinationOf(e.hands[String(e.winner)]) || W.reason[e.combination] || ""});
      case "void": return L.void;
      case "pay": {
        if (!e.amount && !e.short) return "";
        const values = {from: who(e.from), to: who(e.to), amount: e.amount, reason: W.reason[e.reason] || e.reason, short: e.short};
        if (e.reason === "pot") return fill(L.takes_pot, values);
        if (e.to === "pot") return fill(e.short ? L.pay_pot_short : L.pay_pot, values);
        return fill(e.short ? L.pay_short : L.pay, values);
      }
      default: return "";
    }
  }
  Table.sentence = sentence;

  Table.logEvents = function (events) {
    const list = $("log");
    for (const e of events) {
      if (e.seq <= told.seq) continue;
      told.seq = e.seq;
      if (e.seat !== undefined && e.seat !== null && e.by !== "service") told.mover = e.seat;
      if (e.type === "open" || e.type === "play") told.card = e.card;
      if (e.type === "comet") told.card = e.stands_for;
      let text = sentence(e);
      if (!text) continue;
      if (e.by === "timeout") text += " " + W.log.timeout;
      const item = document.createElement("li");
      item.textContent = text;
      item.dataset.seq = e.seq;
      list.appendChild(item);
    }
    list.scrollTop = list.scrollHeight;
    document.querySelectorAll("#seats li").forEach(li => li.classList.toggle("moved", Number(li.dataset.seat) === told.mover));
  };
  // The log written again from its start (a replay's step, a branch, a hand loaded again).
  Table.resetLog = function () {
    Object.assign(told, {seq: 0, offerer: null, offerOpen: false, card: null, mover: null});
    $("log").innerHTML = "";
  };
})(window.Table);
