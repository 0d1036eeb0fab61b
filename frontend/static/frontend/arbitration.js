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
  for (const rule of root.querySelectorAll("form.rule-form")) {
    let requestId = crypto.randomUUID();
    rule.addEventListener("submit", event => {
      event.preventDefault();
      const kind = rule.querySelector("input[name=kind]:checked").value;
      const body = {kind, reason: rule.elements.reason.value.trim(), request_id: requestId,
                    cites: [...rule.querySelectorAll("input[name=cite]:checked")].map(c => Number(c.value))};
      if (kind === "adjusted") {
        body.corrections = {};
        for (const input of rule.querySelectorAll("input[name=correction]")) {
          if (Number(input.value)) body.corrections[input.dataset.player] = Number(input.value);
        }
      }
      postAction(`/api/disputes/${rule.dataset.dispute}/rulings`, body, rule.querySelector(".error"),
                 [...rule.querySelectorAll("button")], words, reload);
    });
  }
})();
