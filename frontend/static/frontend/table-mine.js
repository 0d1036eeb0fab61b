// The viewer's hand and his moves, and his standing orders for the Comet (table-cards.js for
// the namespace; table.js sends the moves).
"use strict";
(function (Table) {
  const {T, W, $, fill, who, COMET, cardFace, cardName, theCard, sortCards, moveLabel} = Table;
  const cometMark = c => (c === COMET && T.game === "comet" ? "comet" : "");  // the Comet in a hand, marked

  function movesByCard(h) {
    const v = h.view;
    const mine = v.hand || [];
    const byCard = {};
    for (const m of h.legal_moves || []) {
      if (m.card) byCard[m.card] = m;
      else if (m.type === "open") {
        const lowest = sortCards(mine.filter(c => c[1] === m.suit && c !== COMET))[0];
        if (lowest) byCard[lowest] = m;
      }  // the Comet: its own button ("jouer la Comète"), never a tap on the lit card
    }
    return byCard;
  }
  Table.drawMine = function (h) {
    const v = h.view;
    const seated = T.your_seat !== null;
    // Over, the hand leaves nothing to play: the tray gives way to its result (on a phone it
    // would cover it), and the next hand brings it back.
    $("mine").hidden = !seated || Table.partieOver || h.status === "over";
    if ($("mine").hidden) return;
    const mine = sortCards(v.hand || []);
    const byCard = movesByCard(h);
    const myTurn = (h.to_act || []).includes(T.your_seat) && h.status !== "over";
    // His only move is played for him: after the forced move's delay, or at the end of the
    // Comet's chance when one is open (the deadline then says "comet", not "forced").
    const forced = myTurn && (h.deadline_kind === "forced" || h.deadline_kind === "comet")
      && (h.legal_moves || []).length === 1;
    $("hand").innerHTML = mine.map(c => {
      const m = byCard[c];
      const ok = m && myTurn && !forced;
      // Named by its words (hidden text), the drawn face hidden from screen readers: the
      // name a voice user says is the name the button has.
      return `<button type="button" class="pcb${forced && m ? " forced" : ""}" data-card="${c}"${ok ? "" : " disabled"}><span aria-hidden="true">${cardFace(c, cometMark(c))}</span><span class="sr-only">${esc(cardName(c))}</span></button>`;
    }).join("");
    // The Comet may be played whenever a run needs a card, not only on its holder's turn. An
    // opening is played by its suit's lowest card; a button of its own only when that card
    // is not in the hand (the Comet alone).
    const drawn = new Set(Object.values(byCard));
    const buttons = (h.legal_moves || []).filter(m => !m.card && (myTurn || m.type === "comet")
      && !(m.type === "open" && drawn.has(m)));
    $("actions").innerHTML = !forced && h.status !== "over" ? buttons.map((m, i) =>
      `<button type="button" class="move" data-i="${i}">${esc(moveLabel(m))}</button>`).join("") : "";
    $("hand").querySelectorAll("button[data-card]").forEach(b => {
      b.onclick = () => { const m = byCard[b.dataset.card]; if (m) Table.play(m, b); };
    });
    $("actions").querySelectorAll("button[data-i]").forEach(b => { b.onclick = () => Table.play(buttons[b.dataset.i], b); });
    $("prompt").textContent = promptFor(h, myTurn, forced);
    if (chosen && chosen.seq !== h.seq) Table.showPending(null);
    drawPlan(h);
  };

  // -- The Comet: a choice kept until the chance ends, and the standing orders ----------
  let chosen = null;  // {seq, move}: a click kept for the end of a Comet chance
  Table.showPending = function (answer, move) {
    chosen = answer ? {seq: answer.seq, move} : null;
    $("pending").hidden = !answer;
    if (!answer) return;
    const at = answer.command && answer.command.played_at;
    const label = move.card ? theCard(move.card) : moveLabel(move);
    $("pending").textContent = fill(W.pending, {move: label, time: at ? Table.clockFormat.format(new Date(at)) : ""});
  };
  function drawPlan(h) {
    const plan = $("plan");
    if (!plan || !T.comet_order) return;
    const mine = (h.view && h.view.hand) || [];
    const O = W.orders;
    const order = T.comet_order.order;
    if (h.status === "over" || !mine.includes(COMET)) {
      // Played in this hand (its place on the felt is public): by him, or by another.
      const played = ((h.view && h.view.played) || []).find(p => p.stands_for);
      plan.textContent = h.status === "over" ? "" : !played ? O.none
        : played.seat === T.your_seat ? O.played_mine : O.played;
      return;
    }
    const others = mine.filter(c => c !== COMET);
    if (order === "blocked") {
      const suits = [...new Set(others.map(c => c[1]))].map(x => W.suit[x]);
      plan.textContent = suits.length ? fill(O.blocked, {suits: suits.join(", ")}) : O.blocked_none;
    } else if (order === "out") {
      plan.textContent = others.length ? fill(O.out, {n: others.length}) : O.out_now;
    } else if (order === "ask") {
      plan.textContent = fill(O.ask, {n: T.comet_window});
    } else {
      plan.textContent = O[order] || "";
    }
  }
  if ($("orders")) {
    $("orders").querySelectorAll("input[name=comet-order]").forEach(input => {
      input.onchange = async () => {
        const r = await api(`/api/parties/${T.partie}/comet-order`, {method: "POST", body: JSON.stringify({order: input.value})});
        $("orders-saved").textContent = r.status === 200 ? W.orders.saved : fill(W.refused, {detail: r.body.detail || r.status});
        if (r.status === 200) T.comet_order.order = r.body.order;
        if (Table.current) drawPlan(Table.current);
      };
    });
  }
  function promptFor(h, myTurn, forced) {
    const v = h.view;
    const P = W.prompt;
    if (h.status === "over") return "";
    if (forced) {
      const m = h.legal_moves[0];
      // At a Comet chance the holder may still play the Comet in its place.
      return fill(h.deadline_kind === "comet" ? P.forced_chance : P.forced, {move: m.card ? theCard(m.card) : moveLabel(m)});
    }
    if (myTurn) {
      const types = new Set((h.legal_moves || []).map(m => m.type));
      if (h.deadline_kind === "comet" && types.has("comet")) return holderTurn(h, types);
      if (types.has("announce") && types.size === 1) return P.announce;
      if (types.has("give_back")) return fill(P.give_back, {name: v.offer ? who(v.offer.from) : "?"});
      if (types.has("offer")) return fill(P.offer, {name: who(nextSeat(v))});
      if (types.has("return")) return P.return;
      if (types.has("open")) return P.open;
      if (types.has("comet") || types.has("keep_comet")) return types.has("play") ? P.play + " " + P.comet : P.comet;
      if (types.has("play")) return P.play;
    }
    if (v.waiting_for === "comet" && !(h.to_act || []).length) return P.wait_comet;
    const waiting = (h.to_act || []).map(who).join(", ");
    const said = waiting ? fill(P.wait, {names: waiting}) : "";
    // The Comet's holder may play it while another's card is awaited: the button says so.
    if ((h.legal_moves || []).some(m => m.type === "comet")) {
      const needed = v.run && v.run.next_card;
      const may = needed ? fill(P.comet_instead, {card: theCard(needed), n: v.comet_payment_due ?? "?"}) : P.comet;  // optional: the order decides otherwise
      return said ? `${said} ${may}` : may;
    }
    return said;
  }
  // The holder's own decision at a Comet chance (his card is the next one, or the run is
  // blocked): what his order does when the chance ends, or, with "ask me", that it is his.
  function holderTurn(h, types) {
    const P = W.prompt;
    const order = T.comet_order ? T.comet_order.order : "ask";
    if (order === "ask") return types.has("keep_comet") ? blockedSaid(h.view) + " " + P.ask_blocked : P.ask_turn;
    const v = h.view;
    const mine = v.hand || [];
    const suit = v.run ? v.run.suit : null;  // the run's suit, blocked or not
    const plays = order === "first" || (order === "out" && mine.length === 1)
      || (order === "blocked" && v.phase === "blocked" && mine.some(c => c !== COMET && c[1] === suit));
    // At a blocked run, first why it stopped.
    const why = types.has("keep_comet") ? blockedSaid(v) + " " : "";
    if (plays) return why + P.order_comet;
    const real = (h.legal_moves || []).find(m => m.card);
    return why + (real ? fill(P.order_card, {card: theCard(real.card)}) : P.order_keep);
  }
  // Why the run stopped (the card already played, or the diamonds' gap).
  function blockedSaid(v) {
    return v.run && v.run.blocked === "gap" ? W.prompt.blocked_gap : W.prompt.blocked_played;
  }
  function nextSeat(v) {
    const order = v.speaking_order || [];
    const i = order.indexOf(T.your_seat);
    return order.length ? order[(i + 1) % order.length] : (T.your_seat + 1) % T.seats.length;
  }
})(window.Table);
