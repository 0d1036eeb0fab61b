// The card table: draws the hand as the API and the live channel give it (the same fields),
// in words from the page's catalogue (frontend/words.py). It never knows more than its
// viewer may see: every card it draws came from the server's view for this viewer.
"use strict";
(function () {
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
  const seatName = s => s.name;  // a bot too: the club's bots are named players
  T.seats.forEach(s => { names[s.number] = seatName(s); });
  const baseTitle = document.title;
  let current = null;
  let logged = 0;  // the last seq written in the log
  let sending = false;

  function cardName(c) { return fill(W.card, {rank: W.rank[c[0]], suit: W.suit[c[1]]}); }
  function theCard(c) { return fill(W.card, {rank: W.the_rank[c[0]], suit: W.suit[c[1]]}); }
  function who(seat) {
    if (seat === null || seat === undefined) return "?";
    if (seat === "pot") return W.the_pot;
    if (seat === "talon") return "talon";
    return seat === T.your_seat ? `${names[seat]} (${W.you})` : names[seat];
  }
  function sortCards(cards) {
    return cards.slice().sort((a, b) => SUIT_ORDER.indexOf(a[1]) - SUIT_ORDER.indexOf(b[1])
      || RANK_ORDER.indexOf(a[0]) - RANK_ORDER.indexOf(b[0]));
  }
  function cardFace(c, extra) {
    if (!c) return `<span class="pc back ${extra || ""}" aria-label="?"></span>`;
    const red = c[1] === "D" || c[1] === "H" ? " red" : "";
    const rank = c[0] === "T" ? "10" : c[0];
    return `<span class="pc${red} ${extra || ""}" title="${esc(cardName(c))}"><b>${rank}</b><i>${SYMBOL[c[1]]}</i></span>`;
  }
  function combinationOf(cards) {
    // RULES.md §1: tricon, then séquence (A high; A-2-3 only with ace_low_sequence), then point.
    if (!cards || cards.length !== 3) return null;
    const ranks = cards.map(c => "23456789TJQKA".indexOf(c[0])).sort((a, b) => a - b);
    if (ranks[0] === ranks[2]) return fill(W.combination.tricon, {ranks: W.ranks_plural[cards[0][0]]});
    const aceLow = current && current.view.options && current.view.options.ace_low_sequence;
    if (ranks[1] === ranks[0] + 1 && ranks[2] === ranks[1] + 1)
      return fill(W.combination.sequence, {the_rank: W.the_rank["23456789TJQKA"[ranks[2]]]});
    if (aceLow && ranks[0] === 0 && ranks[1] === 1 && ranks[2] === 12)
      return fill(W.combination.sequence, {the_rank: W.the_rank["3"]});
    if (cards[0][1] === cards[1][1] && cards[1][1] === cards[2][1])
      return fill(W.combination.point, {suit: W.suit[cards[0][1]]});
    return null;
  }

  // -- The log, in words -----------------------------------------------------------------
  function sentence(e) {
    const L = W.log;
    switch (e.type) {
      case "hand_started": return fill(L.hand_started, {number: T.number, name: who(e.dealer)});
      case "open": return fill(L.open, {name: who(e.seat), card: e.card ? theCard(e.card) : W.suit[e.suit]});
      case "play": return fill(L.play, {name: who(e.seat), card: theCard(e.card)});
      case "comet": return fill(L.comet, {name: who(e.seat), card: theCard(e.stands_for)});
      case "keep_comet": return e.seat === null ? L.keep_comet_hidden : fill(L.keep_comet, {name: who(e.seat)});
      case "stop": return e.reason === "king" ? L.stop_king : e.reason === "gap" ? L.stop_gap
        : fill(L.stop_played, {card: lastCard ? theCard(successor(lastCard)) : "?"});
      case "out": return fill(L.out, {name: who(e.seat)});
      case "offer": case "give_back": {
        const to = e.type === "offer" ? (e.seat + 1) % T.seats.length : lastOfferer;
        if (e.type === "offer") { lastOfferer = e.seat; offerOpen = true; } else offerOpen = false;
        return fill(e.card ? L[e.type] : L[e.type + "_hidden"], {name: who(e.seat), to: who(to), card: e.card ? theCard(e.card) : ""});
      }
      case "draw": return fill(e.card ? L.draw : L.draw_hidden, {name: who(e.seat), card: e.card ? theCard(e.card) : ""});
      case "return": return fill(e.card ? L.return : L.return_hidden, {name: who(e.seat), card: e.card ? theCard(e.card) : ""});
      case "announce": {
        // The asked player announces instead of giving back: the offer is withdrawn, and
        // nothing changes hands (RULES.md §1).
        const withdrawn = offerOpen && lastOfferer !== null && e.seat === (lastOfferer + 1) % T.seats.length;
        offerOpen = false;
        const said = fill(L.announce, {name: who(e.seat)});
        return withdrawn ? said + " " + fill(L.offer_withdrawn, {name: who(lastOfferer)}) : said;
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
  let lastOfferer = null;
  let offerOpen = false;  // an offer not yet answered
  let lastCard = null;  // the card the run has reached, as the log goes
  let lastMover = null;  // the seat of the last move, marked on the table
  function successor(card) {
    const rank = "A23456789TJQK".indexOf(card[0]);
    return rank < 12 ? "A23456789TJQK"[rank + 1] + card[1] : card;
  }
  function logEvents(events) {
    const list = $("log");
    for (const e of events) {
      if (e.seq <= logged) continue;
      logged = e.seq;
      if (e.seat !== undefined && e.seat !== null && e.by !== "service") lastMover = e.seat;
      if (e.type === "open" || e.type === "play") lastCard = e.card;
      if (e.type === "comet") lastCard = e.stands_for;
      let text = sentence(e);
      if (!text) continue;
      if (e.by === "timeout") text += " " + W.log.timeout;
      const item = document.createElement("li");
      item.textContent = text;
      item.dataset.seq = e.seq;
      list.appendChild(item);
    }
    list.scrollTop = list.scrollHeight;
    document.querySelectorAll("#seats li").forEach(li => li.classList.toggle("moved", Number(li.dataset.seat) === lastMover));
  }

  // -- The table ---------------------------------------------------------------------------
  function lastMoves(v) {
    // The last card each seat put on the table (Comet) is marked at its seat.
    const out = {};
    (v.played || []).forEach(p => { out[p.seat] = p; });
    return out;
  }
  function drawSeats(h) {
    const v = h.view;
    const n = T.seats.length;
    const me = T.your_seat === null ? 0 : T.your_seat;
    const acting = new Set(h.to_act || []);
    const dealer = T.game === "comet" ? v.dealer : v.banker;
    const counts = v.cards_in_hand || v.hand_sizes || {};
    const last = lastMoves(v);
    const lastPlayed = (v.played || []).length ? v.played[v.played.length - 1] : null;
    $("seats").innerHTML = T.seats.map(s => {
      // The viewer sits at the bottom; the others follow round the table.
      const classes = ["tp-seat"];
      if (acting.has(s.number)) classes.push("acting");
      if (s.number === T.your_seat) classes.push("me");
      if (s.number === lastMover) classes.push("moved");
      const badges = [];
      if (s.number === dealer) badges.push(`<span class="badge" title="${esc(T.game === "comet" ? W.dealer : W.banker)}">${T.game === "comet" ? "D" : "B"}</span>`);
      if (s.bot) {
        const level = W.botLevels[s.level];
        badges.push(`<span class="badge bot"${level ? ` title="${esc(level)}"` : ""}>${esc(W.bot)}${level ? ` · ${esc(level)}` : ""}</span>`);
      }
      const chips = v.chips ? v.chips[String(s.number)] : undefined;
      const mark = last[s.number] ? cardFace(last[s.number].stands_for ? COMET : last[s.number].card, "mini" + (lastPlayed && lastPlayed === last[s.number] ? " latest" : "")) : "";
      return `<li class="${classes.join(" ")}" data-seat="${s.number}">
        <span class="name">${esc(seatName(s))}${s.number === T.your_seat ? ` <small>(${esc(W.you)})</small>` : ""} ${badges.join("")}</span>
        <span class="facts">${chips === undefined ? "" : esc(fill(W.chips, {n: chips}))} · ${esc(fill(counts[String(s.number)] === 1 ? W.card_one : W.cards, {n: counts[String(s.number)] ?? "?"}))}</span>
        ${acting.has(s.number) ? `<span class="turn">${esc(W.to_act)}</span>` : ""}${mark}</li>`;
    }).join("");
    // Round the table, the viewer at the bottom (set through the CSSOM: the page's CSP
    // refuses style attributes).
    $("seats").querySelectorAll("li[data-seat]").forEach(li => {
      const angle = Math.PI / 2 + 2 * Math.PI * ((Number(li.dataset.seat) - me + n) % n) / n;
      li.style.setProperty("--x", `${(50 + 42 * Math.cos(angle)).toFixed(1)}%`);
      li.style.setProperty("--y", `${(50 + 38 * Math.sin(angle)).toFixed(1)}%`);
    });
  }
  function runsOf(played) {
    // Consecutive cards of one suit, each one rank above the last, are one run; a Comet
    // continues the run as the card it stood for.
    const runs = [];
    let run = null;
    for (const p of played) {
      const card = p.stands_for || p.card;
      const rank = RANK_ORDER.indexOf(card[0]);
      const prev = run ? run.top : null;
      const follows = run && card[1] === run.suit && (rank === prev + 1 || (card === "TD" && prev === RANK_ORDER.indexOf("7")));
      if (!follows) { run = {suit: card[1], cards: [], top: rank}; runs.push(run); }
      run.cards.push(p);
      run.top = rank;
    }
    return runs;
  }
  // -- The shares of randomness (HAND_RECORD.md, version 2) ----------------------------
  // Before the deal, each seated person's browser adds 32 random bytes to the shuffle. The
  // share is kept by hand, so that a page loaded again during the window sends the same one
  // and the audit page can find it in the record.
  const shareOf = hand => {
    const key = `academie.share.${hand}`;
    let share = localStorage.getItem(key);
    if (!share) {
      share = Array.from(crypto.getRandomValues(new Uint8Array(32)), b => b.toString(16).padStart(2, "0")).join("");
      localStorage.setItem(key, share);
    }
    return share;
  };
  // The next hand of this table starts while this page still shows the last one's result:
  // its share goes at once, since the page follows only a few seconds later, after the window.
  const present = new Set();
  function shareAhead(hand) {
    if (T.your_seat === null || T.replay || present.has(hand)) return;
    present.add(hand);
    api(`/api/hands/${hand}/share`, {method: "POST", body: JSON.stringify({share: shareOf(hand)})});
  }
  let shareSaid = "";
  async function sendShare(h) {
    if (T.your_seat === null || T.replay || (h.view.shares || []).includes(T.your_seat)) {
      if ((h.view.shares || []).includes(T.your_seat)) shareSaid = W.share.in;
      return;
    }
    if (sending) return;
    const share = shareOf(T.hand);
    sending = true;
    shareSaid = W.share.sending;
    let r;
    try {
      r = await api(`/api/hands/${T.hand}/share`, {method: "POST", body: JSON.stringify({share})});
    } finally { sending = false; }
    if (r.status === 201 || r.body.error === "share_already_sent") shareSaid = W.share.in;
    else if (r.body.error === "already_dealt") shareSaid = W.share.late;
    else shareSaid = fill(W.refused, {detail: r.body.detail || r.status});
    if (current && current.view.phase === "shuffling") drawCentre(current);
    if (r.status === 201 && r.body.dealt) await refresh();
  }
  function drawCentre(h) {
    const v = h.view;
    const parts = [];
    if (v.phase === "shuffling") {
      parts.push(`<p class="tp-phase">${esc(W.phase.shuffling)}</p>`);
      parts.push(`<p class="tp-money"><span>${esc(fill(W.pot, {n: v.pot ?? 0}))}</span></p>`);
      parts.push(`<p class="muted">${esc(W.share.waiting)}</p>`);
      if (shareSaid) parts.push(`<p id="share-status" class="tp-share" role="status">${esc(shareSaid)}</p>`);
      $("centre").innerHTML = parts.join("");
      return;
    }
    if (T.game === "comet") {
      parts.push(`<p class="tp-phase">${esc(W.phase[v.phase] || v.phase)}</p>`);
      parts.push(`<p class="tp-money"><span>${esc(fill(W.pot, {n: v.pot}))}</span> <span>${esc(fill(W.comet_payment, {n: v.comet_payment_due ?? "—"}))}</span></p>`);
      const runs = runsOf(v.played || []);
      parts.push(`<h2 class="sr-only">${esc(W.runs)}</h2>`);
      if (!runs.length) parts.push(`<p class="muted">${esc(W.no_run)}</p>`);
      // The last runs only: on a phone, the table must not outgrow the screen.
      if (runs.length > 4) parts.push(`<p class="muted">${esc(fill(W.earlier_runs, {n: runs.length - 4}))}</p>`);
      parts.push('<ol class="tp-runs">' + runs.slice(-4).map(r => `<li><span class="suit ${r.suit === "D" || r.suit === "H" ? "red" : ""}" aria-label="${esc(W.suit[r.suit])}">${SYMBOL[r.suit]}</span>` +
        r.cards.map(p => p.stands_for
          ? `<span class="comet" title="${esc(fill(W.comet_for, {card: theCard(p.stands_for)}))}">${cardFace(COMET, "mini")}<small>${esc(fill(W.comet_for, {card: theCard(p.stands_for)}))}</small></span>`
          : cardFace(p.card, "mini")).join("") + "</li>").join("") + "</ol>");
      if (v.run && v.run.next_card) {
        parts.push(`<p class="tp-waiting">${esc(fill(W.waiting_card, {card: theCard(v.run.next_card)}))}</p>`);
        if (v.run.next_card === "8D") parts.push(`<p class="muted">${esc(W.gap)}</p>`);
      }
    } else {
      parts.push(`<p class="tp-phase">${esc(fill(W.turn, {n: v.turn || 1}))} · ${esc(W.phase[v.phase] || v.phase)}</p>`);
      if (v.offer) parts.push(`<p class="tp-offer">${cardFace(v.offer.card, "mini")} ${esc(fill(W.offer_pending, {name: who(v.offer.from), to: who(v.offer.to)}))}</p>`);
      parts.push(`<p class="tp-money"><span>${esc(fill(W.pot, {n: v.pot}))}</span> <span>${esc(fill(W.talon, {n: v.talon}))}</span></p>`);
      if (v.hands) {
        parts.push('<ul class="tp-shown">' + Object.entries(v.hands).map(([seat, cards]) => {
          const combo = combinationOf(cards);
          const won = String(v.winner) === seat ? " won" : "";
          return `<li class="${won}"><span class="name">${esc(who(Number(seat)))}</span> ${sortCards(cards).map(c => cardFace(c, "mini")).join("")} <small>${esc(combo || "")}</small></li>`;
        }).join("") + "</ul>");
      }
    }
    $("centre").innerHTML = parts.join("");
  }

  // -- Your hand and your moves ---------------------------------------------------------
  function movesByCard(h) {
    const v = h.view;
    const mine = v.hand || [];
    const byCard = {};
    for (const m of h.legal_moves || []) {
      if (m.card) byCard[m.card] = m;
      else if (m.type === "open") {
        const lowest = sortCards(mine.filter(c => c[1] === m.suit && c !== COMET))[0];
        if (lowest) byCard[lowest] = m;
      } else if (m.type === "comet") byCard[COMET] = m;
    }
    return byCard;
  }
  function moveLabel(m) {
    if (m.type === "open") return fill(W.button.open, {suit: W.suit[m.suit]});
    return W.button[m.type] || m.type;
  }
  function drawMine(h) {
    const v = h.view;
    const seated = T.your_seat !== null;
    $("mine").hidden = !seated;
    if (!seated) return;
    const mine = sortCards(v.hand || []);
    const byCard = movesByCard(h);
    const myTurn = (h.to_act || []).includes(T.your_seat) && h.status !== "over";
    const forced = myTurn && h.deadline_kind === "forced" && (h.legal_moves || []).length === 1;
    $("hand").innerHTML = mine.map(c => {
      const m = byCard[c];
      const ok = m && myTurn && !forced;
      // Named by its words (hidden text), the drawn face hidden from screen readers: the
      // name a voice user says is the name the button has.
      return `<button type="button" class="pcb${forced && m ? " forced" : ""}" data-card="${c}"${ok ? "" : " disabled"}><span aria-hidden="true">${cardFace(c)}</span><span class="sr-only">${esc(cardName(c))}</span></button>`;
    }).join("");
    // The Comet may be played whenever a run needs a card, not only on its holder's turn.
    const buttons = (h.legal_moves || []).filter(m => !m.card && (myTurn || m.type === "comet"));
    $("actions").innerHTML = !forced && h.status !== "over" ? buttons.map((m, i) =>
      `<button type="button" class="move" data-i="${i}">${esc(moveLabel(m))}</button>`).join("") : "";
    $("hand").querySelectorAll("button[data-card]").forEach(b => {
      b.onclick = () => { const m = byCard[b.dataset.card]; if (m) play(m, b); };
    });
    $("actions").querySelectorAll("button[data-i]").forEach(b => { b.onclick = () => play(buttons[b.dataset.i], b); });
    $("prompt").textContent = promptFor(h, myTurn, forced);
    if (chosen && chosen.seq !== h.seq) showPending(null);
    drawPlan(h);
  }

  // -- The Comet: a choice kept until the chance ends, and the standing orders ----------
  let chosen = null;  // {seq, move}: a click kept for the end of a Comet chance
  function showPending(answer, move) {
    chosen = answer ? {seq: answer.seq, move} : null;
    $("pending").hidden = !answer;
    if (!answer) return;
    const at = answer.command && answer.command.played_at;
    const label = move.card ? theCard(move.card) : moveLabel(move);
    $("pending").textContent = fill(W.pending, {move: label, time: at ? clockFormat.format(new Date(at)) : ""});
  }
  function drawPlan(h) {
    const plan = $("plan");
    if (!plan || !T.comet_order) return;
    const mine = (h.view && h.view.hand) || [];
    const O = W.orders;
    const order = T.comet_order.order;
    if (h.status === "over" || !mine.includes(COMET)) {
      plan.textContent = h.status === "over" ? "" : O.none;
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
        if (current) drawPlan(current);
      };
    });
  }
  function promptFor(h, myTurn, forced) {
    const v = h.view;
    const P = W.prompt;
    if (h.status === "over") return "";
    if (forced) {
      const m = h.legal_moves[0];
      return fill(P.forced, {move: m.card ? theCard(m.card) : moveLabel(m)});
    }
    if (myTurn) {
      const types = new Set((h.legal_moves || []).map(m => m.type));
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
    return waiting ? fill(P.wait, {names: waiting}) : "";
  }
  function nextSeat(v) {
    const order = v.speaking_order || [];
    const i = order.indexOf(T.your_seat);
    return order.length ? order[(i + 1) % order.length] : (T.your_seat + 1) % T.seats.length;
  }
  async function play(move, button) {
    if (sending || !current) return;
    // One move at a time: a second click before the first is answered is not sent, and the
    // click shows it is on its way until the answer comes.
    sending = true;
    const answered = current.seq;
    $("mine").classList.add("sending");
    if (button) { button.classList.add("pending"); button.setAttribute("aria-busy", "true"); }
    let r;
    try {
      r = await api(`/api/hands/${T.hand}/moves`, {method: "POST", body: JSON.stringify({command_id: crypto.randomUUID(), seq: answered, move})});
    } finally {
      sending = false;
      $("mine").classList.remove("sending");
      if (button) { button.classList.remove("pending"); button.removeAttribute("aria-busy"); }
    }
    if (r.status === 202) {  // kept: played when the Comet's chance ends
      $("error").textContent = "";
      showPending(r.body, move);
    } else if (r.status === 201) {
      $("error").textContent = "";
      if (!$("away").hidden) showAway(false);  // a move brings the player back
      if (r.body.seq > current.seq) render(r.body);
      watch(r.body);
      await catchUpLog();
    } else if (r.status === 409 && r.body.error === "stale_sequence") {
      await refresh();
      say(await whyMoved(answered));
    } else {
      $("error").textContent = fill(W.refused, {detail: r.body.detail || r.status});
    }
  }

  // -- Time ----------------------------------------------------------------------------
  let ticking = null;
  let announced = 0;
  const clockFormat = new Intl.DateTimeFormat(document.documentElement.lang || "fr", {hour: "2-digit", minute: "2-digit", second: "2-digit", timeZone: T.time_zone});
  function drawClock(h) {
    clearInterval(ticking);
    const mine = (h.to_act || []).includes(T.your_seat);
    const tray = $("tray-clock");
    if (!h.deadline || h.status === "over") { $("clock").hidden = true; tray.hidden = true; return; }
    const end = new Date(h.deadline).getTime();
    $("clock").hidden = false;
    tray.hidden = false;
    $("deadline").textContent = fill(W.deadline, {time: clockFormat.format(new Date(end))});
    announced = 0;
    const tick = () => {
      const left = Math.max(0, Math.ceil((end - Date.now()) / 1000));
      $("countdown").textContent = `${left} s`;
      tray.textContent = `${left} s`;  // beside the cards, in a phone's tray
      $("clock").classList.toggle("urgent", mine && left <= 10);
      tray.classList.toggle("urgent", mine && left <= 10);
      // Near the end, once at 10 s and once at 5 s, the screen reader is told.
      if (mine && (left === 10 || left === 5) && announced !== left) {
        announced = left;
        $("sr-clock").textContent = fill(W.seconds_left, {n: left});
      }
      if (left === 0) clearInterval(ticking);
    };
    tick();
    ticking = setInterval(tick, 250);
  }
  const sound = $("sound") || {checked: false};  // a replay has no sound
  sound.checked = sound.checked !== false && localStorage.getItem("academie.sound") !== "off";
  sound.onchange = () => localStorage.setItem("academie.sound", sound.checked ? "on" : "off");
  let wasMyTurn = false;
  function signalTurn(h) {
    const mine = (h.to_act || []).includes(T.your_seat) && h.status !== "over" && (h.legal_moves || []).length > 0;
    document.title = mine ? `▶ ${W.your_turn} — ${baseTitle}` : baseTitle;
    if (mine && !wasMyTurn && sound.checked) beep();
    wasMyTurn = mine;
  }
  function beep() {
    try {
      const ctx = new (window.AudioContext || window.webkitAudioContext)();
      const osc = ctx.createOscillator();
      const gain = ctx.createGain();
      osc.frequency.value = 660;
      gain.gain.setValueAtTime(0.08, ctx.currentTime);
      gain.gain.exponentialRampToValueAtTime(0.001, ctx.currentTime + 0.25);
      osc.connect(gain).connect(ctx.destination);
      osc.start();
      osc.stop(ctx.currentTime + 0.25);
    } catch (e) { /* no sound here: the title still says it */ }
  }

  // -- The result ----------------------------------------------------------------------
  function drawResult(h) {
    const v = h.view;
    if (h.status !== "over" || !v.result) { $("result").hidden = true; return; }
    const r = v.result;
    const lines = [];
    if (r.winner === null || r.winner === undefined) lines.push(`<p>${esc(W.result_void)}</p>`);
    else {
      let how = "";
      if (T.game === "commere" && v.hands) how = combinationOf(v.hands[String(r.winner)]) || "";
      lines.push(`<p class="won">${esc(fill(W.result_winner, {name: who(r.winner)}))}${how ? " — " + esc(how) : ""}</p>`);
    }
    lines.push("<ul>" + Object.entries(r.net).map(([seat, net]) => {
      const held = v.hands ? (v.hands[seat] || []).length : 0;
      const left = T.game === "comet" && v.hands ? " · " + fill(held <= 1 ? W.result_card_left : W.result_cards_left, {n: held}) : "";
      const shown = T.game === "comet" && v.hands && v.hands[seat] && v.hands[seat].length ? " " + sortCards(v.hands[seat]).map(c => cardFace(c, "mini")).join("") : "";
      return `<li>${esc(fill(W.result_net, {name: who(Number(seat)), net: (net > 0 ? "+" : "") + net}))}${esc(left)}${shown}</li>`;
    }).join("") + "</ul>");
    $("result-body").innerHTML = lines.join("");
    $("result").hidden = false;
  }

  // What the page says of the last click; it stands until the table moves on.
  let saidAt = null;
  function say(text) {
    $("error").textContent = text;
    saidAt = text ? (current && current.seq) : null;
  }
  // A click that lost to a move already made: the move the service played for this player
  // (his only move, or the time-out rule's), or somebody else's.
  async function whyMoved(answered) {
    const r = await api(`/api/hands/${T.hand}/events`);
    const next = r.status === 200 ? r.body.events.find(e => e.seq > answered && e.seat !== undefined && e.seat !== null && e.type !== "pay") : null;
    if (next && next.seat === T.your_seat && (next.by === "forced" || next.by === "timeout")) {
      const moved = next.card ? theCard(next.card) : (W.button[next.type] || next.type);
      return fill(next.by === "forced" ? W.played_for_you.forced : W.played_for_you.timeout, {move: moved});
    }
    return next && next.seat !== T.your_seat ? fill(W.played_first, {name: who(next.seat)}) : W.reload;
  }
  function render(h) {
    if (saidAt !== null && h.seq !== saidAt) say("");  // the table moved on
    current = h;
    if (h.view.phase === "shuffling") sendShare(h);
    else if (shareSaid === W.share.sending) shareSaid = "";
    drawSeats(h);
    drawCentre(h);
    drawMine(h);
    drawClock(h);
    drawResult(h);
    signalTurn(h);
    if (h.next_hand) offerNext(h.next_hand.id, h.next_hand.number, true);
  }
  async function refresh() {
    const r = await api(`/api/hands/${T.hand}/`);
    if (r.status !== 200) { $("centre").textContent = r.body.detail || String(r.status); return; }
    render(r.body);
    watch(r.body);
    await catchUpLog();
  }
  async function catchUpLog() {
    const r = await api(`/api/hands/${T.hand}/events`);
    if (r.status !== 200) return;
    logEvents(r.body.events);
    chain.feed(r.body.events);
    chain.claim(r.body.receipt);
    AcademieChain.keepReceipt(r.body.receipt);
  }

  // -- The hash chain and the receipts (HAND_RECORD.md, version 3; chain.js) ------------
  // Every event and receipt of a version-3 hand is checked as it comes, after the page has
  // drawn it (the hashing is asynchronous; the game does not wait on it). A break is said
  // in the page, and the hand is loaded again from the API, the check started again there.
  const chain = new AcademieChain.Follower({
    onBreak: chainBroken,
    fetchEvents: async () => (await api(`/api/hands/${T.hand}/events`)).body,
  });
  let reloading = null;  // the frames that come while the hand is loaded again, or null
  let reloads = Promise.resolve();  // one reload after another
  let breaks = 0;
  function watch(h) {
    if (!h || h.hand !== T.hand) return;
    chain.view(h);
    AcademieChain.keepReceipt(h.receipt);
  }
  function chainBroken({seq, reason}) {
    const box = $("chain-alert");
    box.hidden = false;
    box.dataset.seq = seq;
    box.dataset.reason = reason;
    $("chain-said").textContent = fill(box.dataset.broken, {seq});
    breaks += 1;
    if (breaks > 3) return;  // a server that keeps breaking its chain is not asked again and again
    reloading = reloading || [];
    reloads = reloads.then(async () => {
      chain.reset();
      logged = 0; lastOfferer = null; offerOpen = false; lastCard = null; lastMover = null;
      $("log").innerHTML = "";
      try {
        await refresh();
      } finally {
        const held = reloading;
        reloading = null;
        held.forEach(framed);
      }
      $("chain-said").textContent = fill(box.dataset.reloaded, {seq});
    }).catch(e => console.error("reload", e));
  }

  // -- From hand to hand ----------------------------------------------------------------
  const tableUrl = id => T.urls.table.replace("00000000-0000-0000-0000-000000000000", id);
  function offerNext(id, number, follow) {
    const next = $("next");
    if (!next.hidden) return;
    next.href = tableUrl(id);
    next.textContent = fill(W.next_hand, {n: number});
    next.hidden = false;
    // The result stays on screen a few seconds, then the page follows the table.
    if (follow && number === T.number + 1) {
      shareAhead(id);
      setTimeout(() => { window.location = next.href; }, 6000);
    }
  }
  async function followPartie() {
    // The partie is over: at a soirée, the next partie of this table seats its people again.
    $("closed").textContent = W.partie_over;
    $("closed").hidden = false;
    if ($("leave")) $("leave").hidden = true;
    if (T.soiree && T.urls.results) {  // the soirée's standings so far, and at its close
      const link = document.createElement("a");
      link.href = T.urls.results;
      link.textContent = W.soiree_results;
      $("closed").append(" ", link);
    }
    if (!T.soiree || T.your_seat === null) return;
    for (let i = 0; i < 180; i++) {
      const r = await api(`/api/soirees/${T.soiree}/my-table`);
      const table = r.status === 200 ? r.body.table : null;
      if (table && table.current_hand && table.current_hand.hand !== T.hand && table.partie !== (current && current.partie)) {
        const next = $("next");
        next.href = tableUrl(table.current_hand.hand);
        next.textContent = table.table === T.table_number ? W.next_partie : fill(W.next_partie_at, {n: table.table});
        next.hidden = false;
        shareAhead(table.current_hand.hand);
        setTimeout(() => { window.location = next.href; }, 6000);
        return;
      }
      // Often enough to send the next partie's first share within its window.
      await new Promise(ok => setTimeout(ok, 1000));
    }
  }
  // -- The soirée's announcements for this table: moves between hands, the organiser's words.
  async function news() {
    const r = await api(`/api/soirees/${T.soiree}/announcements`);
    if (r.status !== 200) return;
    const since = Date.now() - 10 * 60 * 1000;  // what is still news: the last ten minutes
    const mine = r.body.announcements.filter(a => new Date(a.at) >= since && (a.kind === "message"
      || a.from_table === T.table_number || a.to_table === T.table_number)).slice(0, 3);
    $("news").innerHTML = mine.map(a => `<li class="${a.done ? "" : "pending"}">${esc(a.text)}</li>`).join("");
    $("news").hidden = mine.length === 0;
  }
  if (T.soiree) { news(); setInterval(news, 10000); }
  function framed(f) {
    if (reloading) { reloading.push(f); return; }
    if (f.kind === "hand" && f.hand === T.hand) {
      if (!current || f.seq > current.seq) render(f);
      watch(f);
      if (f.event) { logEvents([f.event]); chain.feed([f.event]); }
    } else if (f.kind === "hand" && f.number > T.number) {
      offerNext(f.hand, f.number, current && current.status === "over");
    } else if (f.kind === "partie" && f.partie_status === "over") {
      followPartie();
    }
  }
  // -- Leaving the table, and coming back ------------------------------------------------
  const mySeat = T.seats.find(s => s.number === T.your_seat);
  function showAway(away) { $("away").hidden = !away; if ($("leave")) $("leave").hidden = away; }
  async function setAway(away) {
    const r = await api(`/api/parties/${T.partie}/away`, {method: "POST", body: JSON.stringify({away})});
    if (r.status !== 200) { $("error").textContent = fill(W.refused, {detail: r.body.detail || r.status}); return false; }
    showAway(r.body.away);
    return true;
  }
  // -- Replay: a finished hand step by step (frontend/views.py replay_page) -------------
  async function replay() {
    const r = await api(`/api/hands/${T.hand}/replay`);
    if (r.status !== 200) { $("centre").textContent = r.body.detail || String(r.status); return; }
    const steps = r.body.steps;
    const R = W.replay;
    let pos = steps.length - 1;
    const asked = /seq=(\d+)/.exec(location.hash);
    if (asked) pos = Math.min(Math.max(Number(asked[1]) - 1, 0), steps.length - 1);
    // A turn (Ma commère) or a run (Comet) begins where the view's turn changes, or a run opens.
    const startsTurn = i => i === 0 || (T.game === "comet" ? steps[i].event.type === "open"
      : steps[i].view.turn !== steps[i - 1].view.turn);
    function byWords(step) {
      const e = step.event;
      if (e.by === "player" && step.seat !== null && T.seats[step.seat] && T.seats[step.seat].bot) return R.by.bot;
      return fill(R.by[e.by] || e.by || "", {name: who(step.seat)});
    }
    function show() {
      const step = steps[pos];
      const v = Object.assign({}, step.view);
      const over = pos === steps.length - 1;
      current = {view: v, to_act: over ? [] : step.to_act, status: over ? "over" : "playing"};
      logged = 0; lastOfferer = null; offerOpen = false; lastCard = null; lastMover = null;
      $("log").innerHTML = "";
      logEvents(steps.slice(0, pos + 1).map(s => s.event));
      drawSeats(current);
      drawCentre(current);
      drawResult(current);
      $("all-hands").innerHTML = T.seats.map(s => `<li><span class="name">${esc(s.name)}</span> ${sortCards(v.all_hands[String(s.number)] || []).map(c => cardFace(c, "mini")).join("") || "—"}</li>`).join("");
      const e = step.event;
      $("step-where").textContent = fill(R.step, {seq: e.seq, count: steps.length});
      $("step-words").textContent = sentence(e) || e.type;
      $("step-by").textContent = step.move || e.by !== "service" ? byWords(step) : R.by.service;
      $("step-json").textContent = JSON.stringify(e, null, 1);
      $("log").querySelectorAll("li").forEach(li => li.classList.toggle("now", Number(li.dataset.seq) === e.seq));
      history.replaceState(null, "", `#seq=${e.seq}`);
      if ($("whatif-branch")) $("whatif-branch").hidden = true;  // back on the hand as played
    }
    function go(how) {
      const find = (from, dir, test) => { for (let i = from + dir; i >= 0 && i < steps.length; i += dir) if (test(i)) return i; return dir < 0 ? 0 : steps.length - 1; };
      if (how === "first") pos = 0;
      else if (how === "last") pos = steps.length - 1;
      else if (how === "event-") pos = Math.max(pos - 1, 0);
      else if (how === "event+") pos = Math.min(pos + 1, steps.length - 1);
      else if (how === "move-") pos = find(pos, -1, i => steps[i].move);
      else if (how === "move+") pos = find(pos, 1, i => steps[i].move);
      else if (how === "turn-") pos = find(pos, -1, startsTurn);
      else if (how === "turn+") pos = find(pos, 1, startsTurn);
      show();
    }
    document.querySelectorAll("#replay button[data-step]").forEach(b => { b.onclick = () => go(b.dataset.step); });
    document.addEventListener("keydown", ev => {
      if (ev.target.closest && ev.target.closest("input, textarea, select")) return;
      const keys = {ArrowLeft: ev.shiftKey ? "move-" : "event-", ArrowRight: ev.shiftKey ? "move+" : "event+",
                    PageUp: "turn-", PageDown: "turn+", Home: "first", End: "last"};
      if (keys[ev.key]) { ev.preventDefault(); go(keys[ev.key]); }
    });
    window.addEventListener("hashchange", () => {
      const m = /seq=(\d+)/.exec(location.hash);
      if (m && Number(m[1]) - 1 !== pos) { pos = Math.min(Math.max(Number(m[1]) - 1, 0), steps.length - 1); show(); }
    });
    show();
    if (T.dispute) whatIf(() => steps[pos].event.seq, show, seq => steps.slice(0, seq).map(s => s.event));
  }
  // -- What if: the arbiter branches the disputed hand (tournaments/api/disputes.py) ----
  function whatIf(stepNow, backToReplay, eventsUpTo) {
    const R = W.replay;
    let branch = null;  // {from_seq, moves, play_out}
    $("whatif-start").textContent = R.whatif_start;
    $("whatif-playout").textContent = R.play_out;
    $("whatif-leave").textContent = R.leave;
    $("whatif-keep").textContent = R.keep;
    $("whatif-note-label").textContent = R.note;
    async function ask(keep) {
      const body = Object.assign({}, branch, keep ? {keep: true, note: $("whatif-note").value} : {});
      const r = await api(`/api/disputes/${T.dispute}/whatifs`, {method: "POST", body: JSON.stringify(body)});
      if (r.status >= 300) { $("whatif-said").textContent = fill(W.refused, {detail: r.body.detail || r.status}); return null; }
      return r.body;
    }
    function draw(b) {
      const over = !!b.result;
      current = {view: b.view, to_act: b.to_act, status: over ? "over" : "playing"};
      // The log: the hand as played up to the branch, then the branch's own events.
      logged = 0; lastOfferer = null; offerOpen = false; lastCard = null; lastMover = null;
      $("log").innerHTML = "";
      logEvents(eventsUpTo(branch.from_seq).concat(b.events.map((e, i) => Object.assign({}, e, {seq: branch.from_seq + i + 1}))));
      $("log").querySelectorAll("li").forEach(li => li.classList.toggle("branch", Number(li.dataset.seq) > branch.from_seq));
      drawSeats(current);
      drawCentre(current);
      drawResult(current);
      $("all-hands").innerHTML = T.seats.map(s => `<li><span class="name">${esc(s.name)}</span> ${sortCards(b.view.all_hands[String(s.number)] || []).map(c => cardFace(c, "mini")).join("") || "—"}</li>`).join("");
      $("whatif-title").textContent = fill(R.whatif_title, {seq: branch.from_seq, n: branch.moves.length});
      const buttons = [];
      for (const [seat, moves] of Object.entries(b.legal_moves)) {
        moves.forEach((m, i) => buttons.push(`<button type="button" class="button" data-seat="${seat}" data-i="${i}">${esc(who(Number(seat)))}: ${esc(moveLabel(m))}${m.card ? " " + cardFace(m.card, "mini") : ""}</button>`));
      }
      $("whatif-moves").innerHTML = over ? `<p>${esc(R.branch_over)}</p>` : buttons.join(" ");
      $("whatif-moves").querySelectorAll("button[data-seat]").forEach(btn => {
        btn.onclick = async () => {
          branch.moves.push({seat: Number(btn.dataset.seat), move: b.legal_moves[btn.dataset.seat][Number(btn.dataset.i)]});
          const next = await ask(false);
          if (next) draw(next); else branch.moves.pop();
        };
      });
      $("whatif-playout").hidden = over;
    }
    $("whatif-start").onclick = async () => {
      branch = {from_seq: stepNow(), moves: [], play_out: false};
      $("whatif-said").textContent = "";
      const b = await ask(false);
      if (!b) return;
      $("whatif-branch").hidden = false;
      draw(b);
    };
    $("whatif-playout").onclick = async () => {
      branch.play_out = true;
      const b = await ask(false);
      if (b) draw(b);
    };
    $("whatif-keep").onclick = async () => {
      const b = await ask(true);
      if (b) $("whatif-said").textContent = fill(R.kept, {id: b.id});
    };
    $("whatif-leave").onclick = () => { $("whatif-branch").hidden = true; branch = null; backToReplay(); };
  }
  if (T.replay) {
    replay();
  } else {
    if (mySeat) {
      showAway(mySeat.away);
      $("leave").onclick = async () => { if (await setAway(true)) window.location = T.urls.lobby; };
      $("back").onclick = () => setAway(false);
    }
    refresh().then(() => { window.live = liveSocket(T.live_path, framed); });
  }
  window.tablePage = {current: () => current, chain, framed};
})();
