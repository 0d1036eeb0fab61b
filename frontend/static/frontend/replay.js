// The replay: a finished hand step by step (frontend/views.py replay_page; table-cards.js for
// the namespace). One step forward moves its card on the felt; a jump draws the step at once.
"use strict";
(function (Table) {
  const {T, W, $, fill, who} = Table;

  Table.replay = async function () {
    const r = await api(`/api/hands/${T.hand}/replay`);
    if (r.status !== 200) { $("centre").textContent = r.body.detail || String(r.status); return; }
    const steps = r.body.steps;
    const R = W.replay;
    let pos = steps.length - 1;
    let drawn = null;  // the step the felt shows
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
    // The events only a record shows in full, in the audit page's words (frontend/words.py).
    function recordSentence(e) {
      const E = W.record_event;
      const list = new Intl.ListFormat(document.documentElement.lang || "fr", {type: "conjunction"});
      if (e.type === "share") return fill(E.share, {name: who(e.seat)});
      if (e.type === "deal") return (e.contributors || []).length ? fill(E.deal, {names: list.format(e.contributors.map(who))}) : E.deal_alone;
      if (e.type !== "hand_over") return fill(E.unknown, {type: e.type});
      const result = e.result || {};
      const nets = Object.entries(result.net || {}).sort((a, b) => Number(a[0]) - Number(b[0]))
        .map(([s, n]) => `${who(Number(s))} ${n > 0 ? "+" : n < 0 ? "−" : ""}${Math.abs(n)}`).join(", ");
      return result.winner === null || result.winner === undefined ? fill(E.hand_over_void, {nets})
        : fill(E.hand_over, {name: who(result.winner), nets});
    }
    function show() {
      const step = steps[pos];
      const v = Object.assign({}, step.view);
      const over = pos === steps.length - 1;
      const current = {view: v, to_act: over ? [] : step.to_act, status: over ? "over" : "playing", seq: step.event.seq};
      Table.current = current;
      Table.resetLog();
      Table.logEvents(steps.slice(0, pos + 1).map(s => s.event));
      if (drawn === pos - 1) Table.motion.show(current, step.event);
      else Table.motion.jump(current);
      drawn = pos;
      Table.drawResult(current);
      Table.drawAllHands(v.all_hands);
      const e = step.event;
      $("step-where").textContent = fill(R.step, {seq: e.seq, count: steps.length});
      $("step-words").textContent = Table.sentence(e) || recordSentence(e);
      $("step-by").textContent = e.type === "share" ? "" : step.move || e.by !== "service" ? byWords(step) : R.by.service;
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
    // What the what-if branches need of the replay: the step shown, a way back to it, and
    // the events of the hand as played up to a seq.
    if (T.dispute) Table.whatIf(() => steps[pos].event.seq, () => { drawn = null; show(); }, seq => steps.slice(0, seq).map(s => s.event));
  };
})(window.Table);
