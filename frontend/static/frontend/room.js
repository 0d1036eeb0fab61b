// The room screen: the clock and the time left, each table with its players and hand, the
// leaders and the announcements. A live frame of a table reads that table again; a hand's end
// also reads the leaders (the standings, answered 304 while unchanged) and the announcements.
// Everything is read again every 15 s (a table that starts, a ruling).
"use strict";
(function () {
  const room = document.getElementById("room");
  const W = room.dataset;
  const say = (phrase, values) => phrase.replace(/\{(\w+)\}/g, (m, k) => esc(values[k]));
  const clock = new Intl.DateTimeFormat(document.documentElement.lang || "fr", {hour: "2-digit", minute: "2-digit", timeZone: W.timeZone});
  let tables = {}, sockets = {}, status = W.status;
  // The time left follows the soirée's state: a closed soirée is over, whatever its planned end.
  function tick() {
    document.getElementById("clock").textContent = clock.format(new Date());
    const left = Math.ceil((new Date(W.ends) - Date.now()) / 60000);
    document.getElementById("left").textContent = status !== "closed" && left > 0 ? say(W.left, {minutes: left}) : W.over;
  }
  function draw() {
    const latest = {};
    for (const tb of Object.values(tables)) if (!latest[tb.table] || tb.round > latest[tb.table].round) latest[tb.table] = tb;
    const shown = Object.values(latest).sort((a, b) => a.table - b.table);
    // A table whose partie is over waits (for its next partie, or the end of the evening).
    document.getElementById("tables").innerHTML = shown.map(tb => `<div class="room-table${tb.status === "playing" ? "" : " idle"}">
      <b>${say(W.table, {table: tb.table})}</b>${tb.status !== "playing" ? ` · <span class="room-idle">${esc(W.idle)}</span>` : tb.current_hand ? " · " + say(W.hand, {number: tb.current_hand.number}) : ""}
      <ul>${tb.seats.map(s => `<li>${esc(s.name || s.player)}</li>`).join("")}</ul></div>`).join("") || `<p>${esc(W.waiting)}</p>`;
  }
  // The tables: every one, or the one of ``partie`` (the table that sent a frame).
  async function readTables(partie) {
    const t = await api(`/api/soirees/${W.soiree}/tables` + (partie ? `?partie=${partie}` : ""));
    if (t.status !== 200) return;
    if (t.body.status && t.body.status !== status) { status = t.body.status; tick(); }
    if (!partie) tables = {};
    for (const tb of t.body.tables) tables[tb.partie] = tb;
    draw();
    if (partie) return;
    const playing = t.body.tables.filter(tb => tb.status === "playing").map(tb => tb.partie);
    for (const p of Object.keys(sockets)) if (!playing.includes(p)) { sockets[p].stop(); delete sockets[p]; }
    for (const p of playing) if (!sockets[p]) sockets[p] = liveSocket(`/ws/parties/${p}/`, f => framed(p, f));
  }
  async function readLeaders() {
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
  async function refresh() {
    await readTables(null);
    await readLeaders();
  }
  const framed = roomFrames({readTable: readTables, handOver: readLeaders, closed: refresh,
                             wait: 1000});
  tick();
  setInterval(tick, 1000);
  refresh();
  setInterval(refresh, 15000);
})();
