// Leaving the table and coming back (frontend/templates/frontend/table.html; table-cards.js for
// the namespace). table.js starts it and passes it the partie's "paused" and "playing" frames.
"use strict";
(function (Table) {
  const {T, W, $, fill, who} = Table;
  // RULES.md §3: leaving a casual table, the player pauses it until he is back or lets the
  // time-out rule play for him; a soirée's table offers only the rule, and says so. #leave
  // opens the choice (setAway(true) asks how), #away says which is in force. Who the table
  // waits for is read from the API on load and on each "paused" or "playing" frame of the
  // partie: the notice #paused and the log say it to everyone at the table.
  const mySeat = T.seats.find(s => s.number === T.your_seat);
  const waitsBox = $("paused");
  let absence = null;  // GET/POST /api/parties/{id}/away: {away, how, may_pause, paused, paused_by}
  function showAway(away) {
    const how = away && absence ? absence.how : null;
    $("away").hidden = !away;
    $("away-pause").hidden = how !== "pause";
    $("away-timeout").hidden = how !== "timeout";
    if ($("leave")) $("leave").hidden = away;
    if (away && $("leave-choice")) closeChoice();
  }
  function told(answer) {
    const before = absence;
    absence = answer;
    const others = answer.paused_by.filter(p => p.seat !== T.your_seat).map(p => who(p.seat));
    waitsBox.innerHTML = others.length ? `<li>${esc(fill(waitsBox.dataset.waits, {names: others.join(", ")}))}</li>` : "";
    waitsBox.hidden = !others.length;
    if (before) logPauses(before, answer);
    if (mySeat) showAway(answer.away);
  }
  function logPauses(before, now) {
    const had = new Set(before.paused_by.map(p => p.seat)), has = new Set(now.paused_by.map(p => p.seat));
    const lines = [...has].filter(s => !had.has(s)).map(s => fill(waitsBox.dataset.paused, {name: who(s)}))
      .concat([...had].filter(s => !has.has(s)).map(s => fill(waitsBox.dataset.back, {name: who(s)})));
    if (before.paused && !now.paused) lines.push(waitsBox.dataset.resumed);
    for (const text of lines) {
      const item = document.createElement("li");
      item.className = "pause";
      item.textContent = text;
      $("log").appendChild(item);
    }
    $("log").scrollTop = $("log").scrollHeight;
  }
  async function readAbsence() {
    const r = await api(`/api/parties/${T.partie}/away`);
    if (r.status === 200) told(r.body);
  }
  // Read once at the start (the live socket's first connection reads it again).
  const absenceRead = T.replay ? Promise.resolve() : readAbsence();
  function closeChoice() {
    $("leave-choice").hidden = true;
    $("leave").setAttribute("aria-expanded", "false");
  }
  async function chooseHowToLeave() {
    await absenceRead;
    const casual = Boolean(absence && absence.may_pause);
    $("leave-casual").hidden = !casual;
    $("leave-soiree").hidden = casual;
    $("leave-error").textContent = "";
    $("leave-choice").hidden = false;
    $("leave").setAttribute("aria-expanded", "true");
    $(casual ? "leave-casual" : "leave-soiree").querySelector("button").focus();
  }
  // Leaving (away) asks how first; each choice then leaves for the lobby.
  async function setAway(away, how) {
    if (away && !how) { chooseHowToLeave(); return false; }
    const r = await api(`/api/parties/${T.partie}/away`, {method: "POST", body: JSON.stringify(away ? {away, how} : {away})});
    if (r.status !== 200) {
      const box = $("leave-choice") && !$("leave-choice").hidden ? $("leave-error") : $("error");
      box.textContent = fill(W.refused, {detail: r.body.detail || r.status});
      return false;
    }
    told(r.body);
    return true;
  }
  Table.leave = {
    showAway,
    // A "paused" or "playing" frame of the partie: who the table waits for, and the hand read
    // again (a paused hand waits on no deadline, a resumed one on a fresh one; neither is an
    // event).
    heard: async () => { await readAbsence(); await Table.refresh(); },
    reconnected: () => { if (!T.replay) readAbsence(); },
    start() {
      if (!mySeat) return;
      showAway(mySeat.away);
      $("leave").onclick = async () => { if (await setAway(true)) window.location = T.urls.lobby; };
      $("back").onclick = () => setAway(false);
      $("leave-choice").querySelectorAll("button[data-leave]").forEach(b => {
        b.onclick = async () => {
          if (!b.dataset.leave) { closeChoice(); $("leave").focus(); return; }
          if (await setAway(true, b.dataset.leave)) window.location = T.urls.lobby;
        };
      });
    },
  };
})(window.Table);
