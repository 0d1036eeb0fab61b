// The pages' shared client code: the API (in the page's language, with the CSRF token the
// page carries in its head), a page's action through it, escaping, and the live socket.
"use strict";
const csrf = document.querySelector('meta[name="csrf-token"]').content;
async function api(path, options) {
  // The API answers in the page's language (its refusals and announcements are shown as such).
  const headers = {"Content-Type": "application/json", "X-CSRFToken": csrf, "Accept-Language": document.documentElement.lang || "fr"};
  const r = await fetch(path, Object.assign({headers, credentials: "same-origin"}, options || {}));
  const body = await r.json().catch(() => ({}));
  return {status: r.status, body};
}
// A page's action through the API: its buttons are disabled meanwhile; on success done(body)
// runs, and a refusal shows the API's own detail in errorBox (words.refused and
// words.unreachable: the page's phrases, in its language).
async function postAction(path, body, errorBox, buttons, words, done, method = "POST") {
  buttons.forEach(b => { b.disabled = true; });
  errorBox.hidden = true;
  let answer;
  try {
    answer = await api(path, {method, body: JSON.stringify(body)});
  } catch (e) {
    answer = null;
  }
  buttons.forEach(b => { b.disabled = false; });
  if (answer && answer.status >= 200 && answer.status < 300) {
    done(answer.body);
    return;
  }
  errorBox.textContent = answer && answer.body.detail
    ? words.refused.replace("{detail}", answer.body.detail) : words.unreachable;
  errorBox.hidden = false;
}
function card(c) { return c ? `<span class="card ${c[1]}">${c}</span>` : '<span class="card">?</span>'; }
function esc(s) { return String(s).replace(/[&<>"]/g, ch => ({"&":"&amp;","<":"&lt;",">":"&gt;",'"':"&quot;"}[ch])); }
// Live frames (games/live.py) on a WebSocket that opens again after a drop, asking for what
// followed the last frame it saw; a frame seen already (a catch-up may repeat one) is skipped.
// A close code of 4000 or more is a refusal (games/consumers.py): no retry.
function liveSocket(path, onFrame, onReopen) {
  const live = {hand: null, number: 0, seq: -1, socket: null, stopped: false, code: null};
  function open() {
    const since = live.hand ? `?hand=${live.hand}&after=${live.seq}` : "";
    const ws = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${path}${since}`);
    // ``onReopen``: each connection after the first (what the page read may have changed).
    if (onReopen && live.socket) ws.onopen = onReopen;
    live.socket = ws;
    ws.onmessage = e => {
      const f = JSON.parse(e.data);
      if (f.kind === "hand") {
        if (f.number < live.number || (f.number === live.number && f.seq <= live.seq)) return;
        live.hand = f.hand; live.number = f.number; live.seq = f.seq;
      }
      onFrame(f);
    };
    ws.onclose = e => { live.code = e.code; if (!live.stopped && e.code < 4000) setTimeout(open, 2000); };
  }
  live.stop = () => { live.stopped = true; live.socket.close(); };
  open();
  return live;
}

// A room of tables followed live (the soirée page, the room screen): a frame of a table in
// play has that table read again (``readTable(partie)``, gathered over ``wait`` ms); a hand's
// end has ``handOver()`` run (the standings), once per ``wait``; a partie's close has
// ``closed()`` run 2 s later, to find its table's next partie.
function roomFrames({readTable, handOver, closed, wait}) {
  const stale = new Set();
  let pending = null, due = null;
  const framed = (partie, f) => {
    if (f.kind === "partie" && f.partie_status === "over") { setTimeout(closed, 2000); return; }
    stale.add(partie);
    if (!pending) pending = setTimeout(() => {
      pending = null;
      const parties = [...stale];
      stale.clear();
      parties.forEach(p => readTable(p));
    }, wait);
    if (f.kind === "hand" && f.status === "over" && !due) due = setTimeout(() => {
      due = null;
      handOver();
    }, wait);
  };
  framed.waiting = () => pending !== null;  // a read of tables gathered, not yet made
  return framed;
}
