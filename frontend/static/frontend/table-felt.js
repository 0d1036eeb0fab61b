// The felt of the card table: the seats round it, the runs or the talon in its centre, and the
// result of the hand (table-cards.js for the namespace). Drawn whole from a hand's view: the
// live table (through table-motion.js), the replay and the what-if branches all draw it so.
"use strict";
(function (Table) {
  const {T, W, $, fill, who, SYMBOL, SUIT_ORDER, RANK_ORDER} = Table;
  const {cardFace, cardName, theCard, sortCards, combinationOf} = Table;

  // A card on the table as played: the Comet shows as the card it stood for, marked as the
  // Comet and named so ("the Comet for the eight of diamonds"); ``i`` its place in the table.
  function playedFace(p, extra, i) {
    const at = i === undefined ? "" : ` data-i="${i}"`;
    if (!p.stands_for) return cardFace(p.card, extra, cardName(p.card), at);
    return cardFace(p.stands_for, `${extra} comet`, fill(W.comet_for, {card: theCard(p.stands_for)}), at);
  }

  Table.drawSeats = function (h) {
    const v = h.view;
    const n = T.seats.length;
    const me = T.your_seat === null ? 0 : T.your_seat;
    const acting = new Set(h.to_act || []);
    const dealer = T.game === "comet" ? v.dealer : v.banker;
    const counts = v.cards_in_hand || v.hand_sizes || {};
    const played = v.played || [];
    const last = {};  // the last card each seat put on the table (Comet), marked at its seat
    played.forEach((p, i) => { last[p.seat] = i; });
    $("seats").innerHTML = T.seats.map(s => {
      const classes = ["tp-seat"];
      if (acting.has(s.number)) classes.push("acting");
      if (s.number === T.your_seat) classes.push("me");
      if (s.number === Table.told.mover) classes.push("moved");
      const badges = [];
      if (s.number === dealer) badges.push(`<span class="badge role">${esc(T.game === "comet" ? W.dealer : W.banker)}</span>`);
      if (s.bot) {
        const level = W.botLevels[s.level];
        badges.push(`<span class="badge bot"${level ? ` title="${esc(level)}"` : ""}>${esc(W.bot)}${level ? ` · ${esc(level)}` : ""}</span>`);
      }
      const chips = v.chips ? v.chips[String(s.number)] : undefined;
      const i = last[s.number];
      const mark = i === undefined ? "" : playedFace(played[i], "mini" + (i === played.length - 1 ? " latest" : ""));
      return `<li class="${classes.join(" ")}" data-seat="${s.number}">
        <span class="name">${esc(s.name)}${s.number === T.your_seat ? ` <small>(${esc(W.you)})</small>` : ""} ${badges.join("")}</span>
        <span class="facts">${chips === undefined ? "" : esc(fill(W.chips, {n: chips}))} · ${esc(fill(counts[String(s.number)] === 1 ? W.card_one : W.cards, {n: counts[String(s.number)] ?? "?"}))}</span>
        ${acting.has(s.number) ? `<span class="turn">${esc(W.to_act)}</span>` : ""}${mark}</li>`;
    }).join("");
    // Round the table, the viewer at the bottom (set through the CSSOM: the page's CSP
    // refuses style attributes; table.css keeps each seat inside the felt).
    $("seats").querySelectorAll("li[data-seat]").forEach(li => {
      const angle = Math.PI / 2 + 2 * Math.PI * ((Number(li.dataset.seat) - me + n) % n) / n;
      li.style.setProperty("--x", `${(50 + 42 * Math.cos(angle)).toFixed(1)}%`);
      li.style.setProperty("--y", `${(50 + 38 * Math.sin(angle)).toFixed(1)}%`);
    });
  };

  function runsOf(played) {
    // Consecutive cards of one suit, each one rank above the last, are one run; a Comet
    // continues the run as the card it stood for; at the diamond gap the Comet stands for
    // the missing 8D and the run goes on with the ten (RULES.md §2).
    const runs = [];
    let run = null;
    played.forEach((p, i) => {
      const card = p.stands_for || p.card;
      const rank = RANK_ORDER.indexOf(card[0]);
      const prev = run ? run.top : null;
      const follows = run && card[1] === run.suit && (rank === prev + 1 || (card === "TD" && prev === RANK_ORDER.indexOf("8")));
      if (!follows) { run = {suit: card[1], cards: [], low: rank, top: rank}; runs.push(run); }
      run.cards.push({p, i});
      run.top = rank;
    });
    return runs;
  }
  // One row per suit, in a fixed order; in a row its runs from the lowest card up, so that a
  // suit reads from the ace to the king, whatever order its runs were played in.
  function suitRows(played) {
    const runs = runsOf(played);
    const now = runs.length ? runs[runs.length - 1] : null;
    return [...SUIT_ORDER].map(suit => ({
      suit, now: now !== null && now.suit === suit,
      runs: runs.filter(r => r.suit === suit).sort((a, b) => a.low - b.low),
    })).filter(row => row.runs.length);
  }
  function drawRuns(v) {
    const played = v.played || [];
    const latest = played.length - 1;
    const rows = suitRows(played).map(row => {
      const cards = row.runs.map(r => r.cards.map(({p, i}, k) =>
        `<span class="tp-slot${k === 0 ? " split" : ""}">${playedFace(p, "mini" + (i === latest ? " latest" : ""), i)}</span>`).join("")).join("");
      const red = row.suit === "D" || row.suit === "H" ? " red" : "";
      return `<li class="tp-run${row.now && v.phase !== "over" ? " now" : ""}" data-suit="${row.suit}"><span class="suit${red}" role="img" aria-label="${esc(W.suit[row.suit])}">${SYMBOL[row.suit]}</span><span class="tp-run-cards">${cards}</span></li>`;
    });
    // The Comet on the felt is drawn as the card it stood for; the real card may come later
    // in another run of the same suit, so the felt says which is which.
    const comet = played.find(p => p.stands_for);
    // At the diamond gap it stood for the 8D, which is out of the pack: no real card to come.
    const said = comet && (comet.stands_for === "8D" ? W.comet_note_gap : W.comet_note);
    const note = comet ? `<p class="tp-comet-note">${esc(fill(said, {card: theCard(comet.stands_for)}))}</p>` : "";
    return `<h2 class="sr-only">${esc(W.runs)}</h2>` + (rows.length ? `<ol class="tp-runs">${rows.join("")}</ol>${note}` : `<p class="muted">${esc(W.no_run)}</p>`);
  }

  Table.drawCentre = function (h) {
    const v = h.view;
    const parts = [];
    if (v.phase === "shuffling") {
      parts.push(`<p class="tp-phase">${esc(W.phase.shuffling)}</p>`);
      parts.push(`<p class="tp-money"><span>${esc(fill(W.pot, {n: v.pot ?? 0}))}</span></p>`);
      parts.push(`<p class="muted">${esc(W.share.waiting)}</p>`);
      if (Table.shareSaid) parts.push(`<p id="share-status" class="tp-share" role="status">${esc(Table.shareSaid)}</p>`);
    } else if (T.game === "comet") {
      parts.push(`<p class="tp-phase">${esc(W.phase[v.phase] || v.phase)}</p>`);
      parts.push(`<p class="tp-money"><span>${esc(fill(W.pot, {n: v.pot}))}</span> <span>${esc(fill(W.comet_payment, {n: v.comet_payment_due ?? "—"}))}</span></p>`);
      parts.push(drawRuns(v));
      if (v.run && v.run.next_card) {
        parts.push(`<p class="tp-waiting">${esc(fill(W.waiting_card, {card: theCard(v.run.next_card)}))}</p>`);
        if (v.run.next_card === "8D") parts.push(`<p class="muted">${esc(W.gap)}</p>`);
      }
    } else {
      parts.push(`<p class="tp-phase">${esc(fill(W.turn, {n: v.turn || 1}))} · ${esc(W.phase[v.phase] || v.phase)}</p>`);
      if (v.offer) parts.push(`<p class="tp-offer">${cardFace(v.offer.card, "mini")} ${esc(fill(W.offer_pending, {name: who(v.offer.from), to: who(v.offer.to)}))}</p>`);
      parts.push(`<p class="tp-money"><span>${esc(fill(W.pot, {n: v.pot}))}</span> <span class="tp-talon">${esc(fill(W.talon, {n: v.talon}))}</span></p>`);
      if (v.hands) {
        parts.push('<ul class="tp-shown">' + Object.entries(v.hands).map(([seat, cards]) => {
          const combo = combinationOf(cards);
          const won = String(v.winner) === seat ? " won" : "";
          return `<li class="${won}"><span class="name">${esc(who(Number(seat)))}</span> ${sortCards(cards).map(c => cardFace(c, "mini")).join("")} <small>${esc(combo || "")}</small></li>`;
        }).join("") + "</ul>");
      }
    }
    $("centre").innerHTML = parts.join("");
  };

  Table.drawResult = function (h) {
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
  };

  // Every seat's cards (the replay and the what-if branches show them all).
  Table.drawAllHands = function (allHands) {
    $("all-hands").innerHTML = T.seats.map(s => `<li><span class="name">${esc(s.name)}</span> ${sortCards(allHands[String(s.number)] || []).map(c => cardFace(c, "mini")).join("") || "—"}</li>`).join("");
  };
})(window.Table);
