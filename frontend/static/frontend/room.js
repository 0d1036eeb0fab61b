// The room screen: the clock and the time left, each table with its players and hand, and the
// leaders, and the announcements; read again on every live frame of a table in play, and every 5 s.
"use strict";
(function () {
  const room = document.getElementById("room");
  const W = room.dataset;
  const say = (phrase, values) => phrase.replace(/\{(\w+)\}/g, (m, k) => esc(values[k]));
  const clock = new Intl.DateTimeFormat(document.documentElement.lang || "fr", {hour: "2-digit", minute: "2-digit", timeZone: W.timeZone});
  let sockets = {}, pending = null, status = W.status;
  // The time left follows the soirée's state: a closed soirée is over, whatever its planned end.
  function tick() {
    document.getElementById("clock").textContent = clock.format(new Date());
    const left = Math.ceil((new Date(W.ends) - Date.now()) / 60000);
    document.getElementById("left").textContent = status !== "closed" && left > 0 ? say(W.left, {minutes: left}) : W.over;
  }
  async function refresh() {
    const t = await api(`/api/soirees/${W.soiree}/tables`);
    if (t.status === 200) {
      if (t.body.status && t.body.status !== status) { status = t.body.status; tick(); }
      const latest = {};
      for (const tb of t.body.tables) if (!latest[tb.table] || tb.round > latest[tb.table].round) latest[tb.table] = tb;
      const tables = Object.values(latest).sort((a, b) => a.table - b.table);
      // A table whose partie is over waits (for its next partie, or the end of the evening).
      document.getElementById("tables").innerHTML = tables.map(tb => `<div class="room-table${tb.status === "playing" ? "" : " idle"}">
        <b>${say(W.table, {table: tb.table})}</b>${tb.status !== "playing" ? ` · <span class="room-idle">${esc(W.idle)}</span>` : tb.current_hand ? " · " + say(W.hand, {number: tb.current_hand.number}) : ""}
        <ul>${tb.seats.map(s => `<li>${esc(s.name || s.player)}</li>`).join("")}</ul></div>`).join("") || `<p>${esc(W.waiting)}</p>`;
      const playing = tables.filter(tb => tb.status === "playing").map(tb => tb.partie);
      for (const p of Object.keys(sockets)) if (!playing.includes(p)) { sockets[p].stop(); delete sockets[p]; }
      for (const p of playing) if (!sockets[p]) sockets[p] = liveSocket(`/ws/parties/${p}/`, soon);
    }
    const s = await api(`/api/soirees/${W.soiree}/standings`);
    if (s.status === 200 && s.body.standings) {
      document.getElementById("leaders").innerHTML = s.body.standings.players.slice(0, 8).map(r =>
        `<li>${esc(r.name || r.player)} <b>${r.net > 0 ? "+" : ""}${r.net}</b></li>`).join("");
    }
    const a = await api(`/api/soirees/${W.soiree}/announcements`);
    if (a.status === 200) {
      document.getElementById("news").innerHTML = a.body.announcements.slice(0, 5).map(n =>
        `<li class="${n.done ? "" : "pending"}">${esc(n.text)}</li>`).join("");
    }
  }
  function soon() { if (!pending) pending = setTimeout(() => { pending = null; refresh(); }, 1000); }
  tick();
  setInterval(tick, 1000);
  refresh();
  setInterval(refresh, 5000);
})();
