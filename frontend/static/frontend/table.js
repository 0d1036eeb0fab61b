// The live card table (frontend/templates/frontend/table.html): draws the hand as the API and
// the live channel give it (the same fields), sends the viewer's moves, checks the hash chain.
// Its parts are in the other table-*.js
// files (table-cards.js lists them); it starts the page, the replay's too.
"use strict";
(function (Table) {
  const {T, W, $, fill, who, theCard} = Table;
  let sending = false;  // a move on its way

  // -- A move ----------------------------------------------------------------------------
  Table.play = async function (move, button) {
    const current = Table.current;
    if (sending || !current) return;
    // One move at a time: a second click before the first is answered is not sent, and the
    // click shows it is on its way until the answer comes.
    sending = true;
    const answered = current.seq;
    $("mine").classList.add("sending");
    if (button) { button.classList.add("pending"); button.setAttribute("aria-busy", "true"); }
    // The card flies from where it was clicked (the Comet's button: from the Comet's card).
    Table.motion.note(button && button.dataset.card ? button : move.type === "comet" ? $("hand").querySelector(`[data-card="${Table.COMET}"]`) : null);
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
      Table.showPending(r.body, move);
    } else if (r.status === 201) {
      $("error").textContent = "";
      if (!$("away").hidden) Table.leave.showAway(false);  // a move brings the player back
      if (r.body.seq > Table.current.seq) render(r.body, {type: move.type, seat: T.your_seat, card: move.card});
      watch(r.body);
      await catchUpLog();
    } else if (r.status === 409 && r.body.error === "stale_sequence") {
      await refresh();
      say(await whyMoved(answered));
    } else {
      $("error").textContent = fill(W.refused, {detail: r.body.detail || r.status});
    }
  };

  // What the page says of the last click; it stands until the table moves on.
  let saidAt = null;
  function say(text) {
    $("error").textContent = text;
    saidAt = text ? (Table.current && Table.current.seq) : null;
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
  // The hand as the API or a live frame gives it; ``event``: the move that brought it, whose
  // card then moves on the felt (none: the felt shows the hand at once).
  function render(h, event) {
    if (saidAt !== null && h.seq !== saidAt) say("");  // the table moved on
    Table.current = h;
    if (h.view.phase === "shuffling") Table.sendShare(h).then(dealt => { if (dealt) refresh(); });
    else if (Table.shareSaid === W.share.sending) Table.shareSaid = "";
    if (event) Table.motion.show(h, event); else Table.motion.jump(h);
    Table.drawMine(h);
    Table.drawClock(h);
    Table.drawResult(h);
    Table.signalTurn(h);
    if (h.next_hand) Table.offerNext(h.next_hand.id, h.next_hand.number, true);
  }
  async function refresh() {  // Table.refresh: the hand read again, and drawn
    const r = await api(`/api/hands/${T.hand}/`);
    if (r.status !== 200) { $("centre").textContent = r.body.detail || String(r.status); return; }
    render(r.body);
    watch(r.body);
    await catchUpLog();
  }
  async function catchUpLog() {
    const r = await api(`/api/hands/${T.hand}/events`);
    if (r.status !== 200) return;
    Table.logEvents(r.body.events);
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
      Table.resetLog();
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

  function framed(f) {
    if (reloading) { reloading.push(f); return; }
    const current = Table.current;
    if (f.kind === "hand" && f.hand === T.hand) {
      if (!current || f.seq > current.seq) render(f, f.event);
      watch(f);
      // A frame past a gap in the log (the socket's first frame is the hand as it stands,
      // with only its last event): the events between are read, not skipped.
      if (f.event && f.event.seq > Table.told.seq + 1) catchUpLog();
      else if (f.event) { Table.logEvents([f.event]); chain.feed([f.event]); }
    } else if (f.kind === "hand" && f.number > T.number) {
      Table.offerNext(f.hand, f.number, current && current.status === "over");
    } else if (f.kind === "partie" && f.partie_status === "over") {
      Table.followPartie();
    } else if (f.kind === "partie") {  // paused, or playing again (table-leave.js)
      Table.leave.heard();
    }
  }
  if (T.replay) {
    Table.replay();
  } else {
    Table.leave.start();
    // A reconnection reads again who the table waits for: a pause or a return may have
    // happened while the socket was down.
    refresh().then(() => {
      window.live = liveSocket(T.live_path, framed, Table.leave.reconnected);
      if (T.partie_over) Table.followPartie();  // the page opened on the partie's last hand
    });
  }
  Table.refresh = refresh;
  window.tablePage = {current: () => Table.current, chain, framed, motion: Table.motion};
})(window.Table);
