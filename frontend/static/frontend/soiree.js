// The soirée page: its tables, standings, chart, settlement and announcements, kept live.
// Each live frame of a table reads that table again; a hand's end also reads the standings,
// which the server answers 304 while they have not changed (their ETag), and only then draws
// the chart again. The whole page is read every 2 s until the soirée opens, then every 10 s
// (a ruling, a table that starts).
"use strict";
const words = document.getElementById("words").dataset;
// A phrase of the catalogue with its {name} places filled, each value escaped.
function say(phrase, values) { return phrase.replace(/\{(\w+)\}/g, (_, k) => esc(values[k])); }
// A status in the page's language (the API's own word if the catalogue has none).
function statusWord(prefix, status) { return words[prefix + status[0].toUpperCase() + status.slice(1)] || status; }

// Each table's latest partie (the API's tables), by its id; the soirée's live sockets, one a
// partie in play; the parties whose table is to be read again; the standings last drawn.
let tables = {}, sockets = {}, lastRead = 0, handsOver = 0;
let soireeStatus = "scheduled", standingsShown = null;

function drawTables() {
  // One card per table: its latest partie, the viewer's own table first.
  const all = Object.values(tables);
  const latest = {};
  for (const tb of all) if (!latest[tb.table] || tb.round > latest[tb.table].round) latest[tb.table] = tb;
  const mine = tb => tb.seats.some(s => s.player === words.me);
  const cards = Object.values(latest).sort((a, b) => (mine(b) - mine(a)) || (a.table - b.table));
  // The evening's progress: hands dealt, tables in play, time left.
  const dealt = handsOver;
  const playing = cards.filter(tb => tb.status === "playing").length;
  const left = Math.max(0, Math.ceil((new Date(words.ends) - Date.now()) / 60000));
  // Each count with its own plural (Django's JavaScript catalogue, frontend/urls.py).
  const counted = (one, many, n) => interpolate(ngettext(one, many, n), {n}, true);
  document.getElementById("progress").textContent = [
    counted("%(n)s hand played", "%(n)s hands played", dealt),
    counted("%(n)s table playing", "%(n)s tables playing", playing),
    counted("%(n)s minute left", "%(n)s minutes left", left)].join(" · ");
  document.getElementById("tables").innerHTML = cards.map(tb => `
    <div class="table${mine(tb) ? " mine" : ""}">${mine(tb) ? `<b>${esc(words.yours)}</b><br>` : ""}<b>${say(words.table, {table: tb.table})}</b> · ${say(words.partie, {round: tb.round})} · ${esc(statusWord("table", tb.status))}<br>
    ${tb.seats.map(s => (s.bot ? say(words.bot, {name: s.player}) : esc(s.name || s.player)) + ` <small>(${s.chips})</small>`).join(", ")}<br>
    ${esc(interpolate(ngettext("%(n)s hand played", "%(n)s hands played", tb.hands_played), {n: tb.hands_played}, true))}<br>
    ${tb.current_hand ? `${say(words.hand, {number: tb.current_hand.number, status: statusWord("hand", tb.current_hand.status), seq: tb.current_hand.seq})}
      · <a href="/hands/${tb.current_hand.hand}/">${esc(words.watch)}</a>
      ${tb.current_hand.status === "over" ? `· <a href="/hands/${tb.current_hand.hand}/audit">${esc(words.audit)}</a>` : ""}` : ""}
    </div>`).join("") || `<p class="muted">${esc(words.noTable)}</p>`;
}

// The tables: every one, or the one of ``partie`` (the table that sent a frame).
async function readTables(partie) {
  const t = await api(words.tablesUrl + (partie ? `?partie=${partie}` : ""));
  if (t.status !== 200) {
    if (!partie) document.getElementById("tables").textContent = t.body.detail || words.unreadable;
    return;
  }
  if (!partie) tables = {};
  for (const tb of t.body.tables) tables[tb.partie] = tb;
  handsOver = t.body.hands_over;
  soireeStatus = t.body.status;
  document.getElementById("status").textContent = statusWord("status", t.body.status);
  if (!partie) watch(t.body.tables.filter(tb => tb.status === "playing").map(tb => tb.partie));
  drawTables();
}

async function readStandings() {
  const s = await api(words.standingsUrl);
  const text = JSON.stringify(s.body);
  if (s.status !== 200 || !s.body.standings || text === standingsShown) return;
  const first = standingsShown === null;
  standingsShown = text;
  // Comets are counted at Comet, tricons at Ma commère.
  const extra = words.game === "comet" ? "comets" : "tricons";
  document.getElementById("standings").innerHTML = `<table><tr>${["player", "net", "handsWon", "hands", extra].map(k => `<th>${esc(words[k])}</th>`).join("")}</tr>` +
    s.body.standings.players.map(r => `<tr><td>${esc(r.name || r.player)}</td><td>${r.net}</td><td>${r.hands_won}</td><td>${r.hands}</td><td>${r[extra]}</td></tr>`).join("") +
    (s.body.standings.bots || []).map(r => `<tr class="bot muted"><td>${say(words.bot, {name: r.player})}</td><td>${r.net}</td><td>${r.hands_won}</td><td>${r.hands}</td><td>${r[extra]}</td></tr>`).join("") + "</table>";
  // The chart of the chips over the evening, drawn again by the server when they moved (the
  // page's own img read it already the first time).
  const chart = document.getElementById("chips-chart");
  if (!first) chart.src = chart.src.split("?")[0] + "?at=" + Date.now();
  if (s.body.settlement) {
    // The club ("#club") takes or pays its bots' nets; a ruling's corrections come after the
    // transfers shown at the close, which stay as they were.
    const names = Object.fromEntries(s.body.standings.players.map(r => [r.player, r.name || r.player]));
    const party = p => p === "#club" ? words.club : (names[p] || p);
    const line = x => say(x.to === "#club" ? words.paysClub : x.from === "#club" ? words.clubPays : words.pays,
                          {payer: party(x.from), payee: party(x.to), amount: x.amount});
    document.getElementById("settlement").innerHTML = [
      ...s.body.settlement.transfers.map(line),
      ...(s.body.settlement.corrections || []).map(x => `<strong>${esc(words.correction)}</strong> : ${line(x)}`),
    ].join("<br>") || esc(words.settled);
  }
}

async function readNews() {
  const a = await api(words.newsUrl);
  if (a.status === 200) {
    const news = document.getElementById("news");
    news.innerHTML = a.body.announcements.slice(0, 5).map(n => `<li class="${n.done ? "" : "pending"}">${esc(n.text)}</li>`).join("");
    news.hidden = a.body.announcements.length === 0;
  }
}

async function refresh() {
  lastRead = Date.now();
  await readTables(null);
  await readStandings();
  await readNews();
}

// A frame of a table in play: that table is read again (at most twice a second); a hand's
// end, the standings and the announcements (a seat change waits for it) too. A partie's close
// reads the whole page 2 s later, to find its table's next partie.
const framed = roomFrames({readTable: readTables, closed: refresh, wait: 500,
                          handOver: () => { readStandings(); readNews(); }});
function watch(parties) {
  for (const p of Object.keys(sockets)) if (!parties.includes(p)) { sockets[p].stop(); delete sockets[p]; }
  for (const p of parties) if (!sockets[p]) sockets[p] = liveSocket(`/ws/parties/${p}/`, f => framed(p, f));
}

// The viewer's own registration (registration_state.html): register, or take his name off,
// through the API; the page is read anew once it is done, a refusal shown beside the button.
for (const button of document.querySelectorAll(".my-registration button[data-action]")) {
  button.addEventListener("click", () => postAction(
    `/api/soirees/${words.soiree}/${button.dataset.action}`, {},
    button.parentElement.querySelector(".error"), [button], words, () => location.reload()));
}
refresh();
setInterval(() => { if (Date.now() - lastRead >= (soireeStatus === "scheduled" ? 2000 : 10000)) refresh(); }, 1000);
