// What if: the arbiter branches a disputed hand from a step of its replay and plays it on
// otherwise (tournaments/api/disputes.py; replay.js opens it; table-cards.js for the namespace).
"use strict";
(function (Table) {
  const {T, W, $, fill, who, cardFace, moveLabel} = Table;

  Table.whatIf = function (stepNow, backToReplay, eventsUpTo) {
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
      const current = {view: b.view, to_act: b.to_act, status: over ? "over" : "playing"};
      Table.current = current;
      // The log: the hand as played up to the branch, then the branch's own events.
      Table.resetLog();
      Table.logEvents(eventsUpTo(branch.from_seq).concat(b.events.map((e, i) => Object.assign({}, e, {seq: branch.from_seq + i + 1}))));
      $("log").querySelectorAll("li").forEach(li => li.classList.toggle("branch", Number(li.dataset.seq) > branch.from_seq));
      Table.motion.jump(current);
      Table.drawResult(current);
      Table.drawAllHands(b.view.all_hands);
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
  };
})(window.Table);
