// Cards that move (table-cards.js for the namespace). A played card travels from its seat (or
// from the viewer's hand, where he clicked it) to its run, to the next player, to the talon or
// from it, in 150 to 240 ms (the Web Animations API; nothing when the viewer prefers reduced
// motion).
//
// Only the felt waits: the moves a live table sends together (a burst of bots' moves) are drawn
// on it one after another, from a queue, at a pace one can follow; the longer the queue, the
// faster the pace, and past SKIP_AT moves behind the felt skips to the last few. The viewer's
// hand, his buttons, the log and the clock are drawn at once, whatever the felt still shows:
// an animation never holds back a click. The flying cards take no pointer events.
"use strict";
(function (Table) {
  const {T} = Table;
  const PACE = {flight: 240, rest: 110};  // one move at a time: a move every 350 ms
  const HURRY = {flight: 150, rest: 40};  // HURRY_AT moves or more waiting: every 190 ms
  const HURRY_AT = 3;
  const SKIP_AT = 12;
  const still = window.matchMedia("(prefers-reduced-motion: reduce)");
  const queue = [];  // {h, event}: the hand to draw, and the event that brought it
  const flights = new Set();  // the animations under way
  let running = false;
  let shown = null;  // the hand as the felt shows it
  let clicked = null;  // {rect, at}: where the viewer's card was when he played it
  // What the tests and a curious reader may look at: flights flown, moves skipped, the seqs
  // flown (the last 50), and how many moves the felt is behind.
  const motion = {flown: 0, skipped: 0, seqs: [], behind: () => queue.length + (running ? 1 : 0)};
  Table.motion = motion;

  const wait = ms => new Promise(ok => setTimeout(ok, ms));
  const quiet = () => still.matches || document.hidden;
  function draw(h) { shown = h; Table.drawSeats(h); Table.drawCentre(h); }

  // The felt shows ``h`` now, the moves still waiting dropped: a page loaded, a replay's jump,
  // a hand loaded again.
  motion.jump = function (h) {
    motion.skipped += queue.length;
    queue.length = 0;
    flights.forEach(a => a.finish());
    draw(h);
  };
  // The felt shows ``h`` after ``event`` (null when not known) once it has shown the moves
  // before it.
  motion.show = function (h, event) {
    if (!shown || quiet()) { motion.jump(h); return; }
    queue.push({h, event});
    // Too far behind: the oldest moves are drawn with the next one, the last few still move.
    if (queue.length > SKIP_AT) motion.skipped += queue.splice(0, queue.length - HURRY_AT).length;
    if (!running) run();
  };
  // The viewer plays the card of ``button``: his card flies from there, not from his seat.
  motion.note = function (button) {
    clicked = button ? {rect: button.getBoundingClientRect(), at: Date.now()} : null;
  };

  async function run() {
    running = true;
    try {
      while (queue.length) {
        const step = queue.shift();
        const pace = queue.length >= HURRY_AT ? HURRY : PACE;
        const route = routeOf(step.event, step.h);  // where from: the felt before the move
        draw(step.h);
        if (!route || quiet() || !fly(route, pace.flight)) continue;
        motion.flown += 1;
        motion.seqs = motion.seqs.concat([step.h.seq]).slice(-50);
        await wait(pace.flight + pace.rest);
      }
    } finally {
      running = false;
    }
  }

  const seatBox = s => document.querySelector(`#seats li[data-seat="${s}"]`);
  const talonBox = () => document.querySelector("#centre .tp-talon");
  const rectOf = el => (el ? el.getBoundingClientRect() : null);
  // The card the seat played last, on the felt as drawn for ``h``.
  function playedBy(h, seat) {
    const played = h.view.played || [];
    for (let i = played.length - 1; i >= 0; i--)
      if (played[i].seat === seat) return document.querySelector(`#centre .pc[data-i="${i}"]`);
    return null;
  }
  // Where the card of ``event`` goes: ``from`` a rectangle of the felt before the move, ``to()``
  // the element it reaches once the move is drawn; ``face``: the card a copy shows, when the
  // card does not stay on the felt (a back when the viewer may not see it).
  function routeOf(e, h) {
    if (!e || e.seat === undefined || e.seat === null) return null;
    const own = e.seat === T.your_seat && clicked && Date.now() - clicked.at < 5000;
    const from = own ? clicked.rect : rectOf(seatBox(e.seat));
    if (own) clicked = null;
    const n = T.seats.length;
    switch (e.type) {
      case "open": case "play": case "comet":
        return {from, to: () => playedBy(h, e.seat)};
      case "offer":
        return {from, to: () => seatBox(h.view.offer ? h.view.offer.to : (e.seat + 1) % n), face: e.card};
      case "give_back": {
        const offerer = shown && shown.view.offer ? shown.view.offer.from : null;
        return offerer === null ? null : {from, to: () => seatBox(offerer), face: e.card};
      }
      case "return": return {from, to: talonBox, face: e.card};
      case "draw": return {from: rectOf(talonBox()), to: () => seatBox(e.seat), face: e.card};
      default: return null;
    }
  }

  // The card flies from ``route.from`` to its place: the card itself when it stays on the felt
  // (drawn there already, it starts where it came from: "FLIP"), else a copy laid over the page.
  function fly(route, ms) {
    const target = route.from && route.to();
    const to = rectOf(target);
    if (!to || !to.width) return null;
    const from = route.from;
    let card = target;
    if ("face" in route) {
      const holder = document.createElement("div");
      holder.innerHTML = Table.cardFace(route.face || null, "mini tp-ghost");
      card = holder.firstElementChild;
      card.setAttribute("aria-hidden", "true");
      document.body.appendChild(card);
      const own = card.getBoundingClientRect();
      card.style.left = `${to.left + (to.width - own.width) / 2}px`;
      card.style.top = `${to.top + (to.height - own.height) / 2}px`;
    }
    const dx = from.left + from.width / 2 - (to.left + to.width / 2);
    const dy = from.top + from.height / 2 - (to.top + to.height / 2);
    card.classList.add("tp-flying");
    const end = "face" in route ? {transform: "none", opacity: 0.3} : {transform: "none", opacity: 1};
    const flight = card.animate([{transform: `translate(${dx}px, ${dy}px) scale(1.15)`, opacity: 1}, end],
      {duration: ms, easing: "cubic-bezier(.2, .7, .3, 1)"});
    flights.add(flight);
    const landed = () => {
      flights.delete(flight);
      if ("face" in route) card.remove(); else card.classList.remove("tp-flying");
    };
    flight.onfinish = landed;
    flight.oncancel = landed;
    return flight;
  }
  // A tab put away slows its timers down: what waits is drawn at once.
  document.addEventListener("visibilitychange", () => {
    if (document.hidden && queue.length) motion.jump(queue[queue.length - 1].h);
  });
})(window.Table);
