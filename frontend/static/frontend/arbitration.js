// The audit page's disputes: a player of the hand (or the organiser) opens one, an arbiter
// rules. Both are API calls (tournaments/api/disputes.py) with a request id of their own, so a
// double click opens or rules once; the page is read anew after.
"use strict";
(function () {
  const root = document.getElementById("disputes");
  if (!root) return;
  const words = root.dataset;
  const reload = () => location.reload();
  const form = document.getElementById("dispute-form");
  if (form) {
    let requestId = crypto.randomUUID();
    form.addEventListener("submit", event => {
      event.preventDefault();
      const body = {reason: form.elements.reason.value.trim(), request_id: requestId};
      if (form.elements.event.value) body.event = Number(form.elements.event.value);
      postAction(`/api/hands/${words.hand}/disputes`, body, form.querySelector(".error"),
                 [...form.querySelectorAll("button")], words, reload);
    });
  }
  const say = (phrase, values) => phrase.replace(/\{(\w+)\}/g, (m, k) => esc(values[k]));
  for (const rule of root.querySelectorAll("form.rule-form")) {
    let requestId = crypto.randomUUID();
    const corrections = () => {
      const found = {};
      for (const input of rule.querySelectorAll("input[name=correction]")) {
        if (Number(input.value)) found[input.dataset.player] = Number(input.value);
      }
      return found;
    };
    // The ruling's effect before it is posted (nothing is written): who gives and receives
    // what, what each holds, and any shortfall.
    const effect = rule.querySelector(".effect");
    rule.querySelector(".effect-button").addEventListener("click", () => {
      const kind = rule.querySelector("input[name=kind]:checked").value;
      const body = {kind, corrections: kind === "adjusted" ? corrections() : {}};
      postAction(`/api/disputes/${rule.dataset.dispute}/rulings/effect`, body,
                 rule.querySelector(".error"), [...rule.querySelectorAll("button")], words, answer => {
        const lines = answer.lines.map(x => `<li>${say(x.moves < 0 ? words.gives : words.receives,
          {player: x.player, amount: Math.abs(x.moves), holds: x.holds})}${x.short ? ` · <b>${say(words.short, {amount: x.short})}</b>` : ""}</li>`);
        effect.innerHTML = `<p>${esc(words.effectTitle)}</p><ul>${lines.join("") || `<li>${esc(words.nothing)}</li>`}</ul>` +
          (answer.postable ? "" : `<p class="error">${esc(words.refusable)}</p>`);
        effect.hidden = false;
      });
    });
    rule.addEventListener("submit", event => {
      event.preventDefault();
      const kind = rule.querySelector("input[name=kind]:checked").value;
      const body = {kind, reason: rule.elements.reason.value.trim(), request_id: requestId,
                    cites: [...rule.querySelectorAll("input[name=cite]:checked")].map(c => Number(c.value))};
      if (kind === "adjusted") body.corrections = corrections();
      postAction(`/api/disputes/${rule.dataset.dispute}/rulings`, body, rule.querySelector(".error"),
                 [...rule.querySelectorAll("button")], words, reload);
    });
  }
})();
