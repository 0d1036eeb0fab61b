// The card table's clock, and the signs of the viewer's turn: the page's title and a sound
// (table-cards.js for the namespace).
"use strict";
(function (Table) {
  const {T, W, $, fill} = Table;
  const baseTitle = document.title;
  let ticking = null;
  let announced = 0;

  Table.drawClock = function (h) {
    clearInterval(ticking);
    // A Comet chance's end is no one's deadline but that of a holder who asked to be asked:
    // the others' turn goes on after it, and a standing order decides for the holder. Its
    // seconds are shown, never pressed on the viewer.
    const chance = h.deadline_kind === "comet";
    const asked = ((h.view && h.view.hand) || []).includes(Table.COMET)
      && T.comet_order && T.comet_order.order === "ask";
    const mine = (h.to_act || []).includes(T.your_seat) && (!chance || asked);
    const tray = $("tray-clock");
    if (!h.deadline || h.status === "over") { $("clock").hidden = true; tray.hidden = true; return; }
    const end = new Date(h.deadline).getTime();
    $("clock").hidden = false;
    tray.hidden = false;
    $("deadline").textContent = chance && !asked ? W.comet_chance
      : fill(W.deadline, {time: Table.clockFormat.format(new Date(end))});
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
  };

  // -- The turn's sound ---------------------------------------------------------------------
  // A browser lets a page make a sound only once the person has clicked or pressed a key in
  // it: the page's one AudioContext starts at the first click or key, and until then a hint
  // beside the switch says so.
  const sound = $("sound") || {checked: false};  // a replay has no sound
  sound.checked = sound.checked !== false && localStorage.getItem("academie.sound") !== "off";
  const hint = $("sound-hint");
  let audio = null;
  const unlocked = () => audio !== null && audio.state === "running";
  function showHint() { if (hint) hint.hidden = !sound.checked || unlocked(); }
  const listen = on => ["pointerdown", "keydown"].forEach(type =>
    (on ? document.addEventListener : document.removeEventListener).call(document, type, unlock, true));
  function unlock() {
    try {
      audio = audio || new (window.AudioContext || window.webkitAudioContext)();
      audio.onstatechange = showHint;
      audio.resume().then(() => { listen(false); showHint(); }, () => {});
    } catch (e) { /* no sound here: the title still says it */ }
  }
  if ($("sound")) {
    sound.onchange = () => { localStorage.setItem("academie.sound", sound.checked ? "on" : "off"); showHint(); };
    listen(true);
    showHint();
  }
  function beep() {
    if (!unlocked()) return;  // not yet allowed: the title still says it
    const osc = audio.createOscillator();
    const gain = audio.createGain();
    osc.frequency.value = 660;
    gain.gain.setValueAtTime(0.08, audio.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.25);
    osc.connect(gain).connect(audio.destination);
    osc.start();
    osc.stop(audio.currentTime + 0.25);
  }
  let wasMyTurn = false;
  Table.signalTurn = function (h) {
    const mine = (h.to_act || []).includes(T.your_seat) && h.status !== "over" && (h.legal_moves || []).length > 0;
    document.title = mine ? `▶ ${W.your_turn} — ${baseTitle}` : baseTitle;
    if (mine && !wasMyTurn && sound.checked) beep();
    wasMyTurn = mine;
  };
})(window.Table);
