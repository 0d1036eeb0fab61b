// The organiser's pages (organiser.py): every action is a call to the soirée API, as any
// client's. On success the page is read anew (or, for a new soirée, its manage page); a refusal
// shows the API's own detail beside the action. The words come from #organiser's data
// attributes, in the page's language; postAction() is base.html's.
(() => {
  const root = document.getElementById("organiser");
  const words = root.dataset;

  const post = (path, body, errorBox, buttons, done, method) =>
    postAction(path, body, errorBox, buttons, words, done, method);
  const reload = () => location.reload();

  // A new soirée, or a change to one not yet open (a PATCH of the same fields). The times are
  // sent as the inputs give them, without an offset: the API reads them in the club's time
  // zone, the one the form names.
  const form = document.getElementById("new-soiree");
  if (form) {
    form.addEventListener("submit", event => {
      event.preventDefault();
      const f = form.elements;
      const editing = form.dataset.soiree;
      const body = {
        name: f.name.value.trim(),
        game: f.game.value,
        starts_at: f.starts_at.value,
        ends_at: f.ends_at.value,
        move_timeout: Number(f.move_timeout.value),
        buy_in: Number(f.buy_in.value),
        deals_per_partie: f.deals_per_partie.value ? Number(f.deals_per_partie.value) : null,
        bots_allowed: f.bots_allowed.checked,
        bot_kind: f.bot_kind.value,
      };
      if (!editing) body.club = f.club.value;
      if (f.season) body.season = f.season.value ? Number(f.season.value) : null;
      const manage = id => { location.href = form.dataset.manage.replace("/0/", `/${id}/`); };
      post(editing ? `/api/soirees/${editing}/` : "/api/soirees/", body,
           form.querySelector(".error"), [...form.querySelectorAll("button")],
           soiree => manage(soiree.id), editing ? "PATCH" : "POST");
    });
  }

  const soiree = words.soiree;
  if (!soiree) return;
  const base = `/api/soirees/${soiree}`;
  const errorAfter = button => {
    const box = button.closest("li, p").nextElementSibling;
    return box && box.classList.contains("error") ? box : button.parentElement.querySelector(".error");
  };

  // What acts on people or chips at once asks first (a confirm() dialog).
  const confirmed = (action, player) => {
    const question = words[`confirm${action[0].toUpperCase()}${action.slice(1)}`];
    return !question || confirm(question.replace("{player}", player || ""));
  };

  // Open, close and cancel (close and cancel after a confirmation).
  for (const button of root.querySelectorAll("#actions button[data-action]")) {
    button.addEventListener("click", () => {
      const action = button.dataset.action;
      if (!confirmed(action)) return;
      post(`${base}/${action}`, {}, errorAfter(button), [button], reload);
    });
  }

  // Check-in at the door: one click per registered player.
  for (const button of root.querySelectorAll("button[data-action=checkin]")) {
    button.addEventListener("click", () => {
      post(`${base}/checkin`, {player: button.dataset.player},
           button.parentElement.querySelector(".error"), [button], reload);
    });
  }

  // A check-in undone before the seating: the buy-in goes back by a reversing entry. The
  // request id makes a double click undo once.
  for (const button of root.querySelectorAll("button[data-action=undo]")) {
    const requestId = crypto.randomUUID();
    button.addEventListener("click", () => {
      if (!confirmed("undo", button.dataset.player)) return;
      post(`${base}/checkin/undo`, {player: button.dataset.player, request_id: requestId},
           button.parentElement.querySelector(".error"), [button], reload);
    });
  }

  // Rebuys and cash-outs, through the ledger: each click carries its own request id, so a
  // double click posts once; the player's chips are shown after it. A cash-out asks first.
  for (const button of root.querySelectorAll("button[data-action=rebuy], button[data-action=cashout]")) {
    let requestId = crypto.randomUUID();
    button.addEventListener("click", () => {
      if (!confirmed(button.dataset.action, button.dataset.player)) return;
      post(`${base}/${button.dataset.action}`,
           {player: button.dataset.player, request_id: requestId},
           button.parentElement.querySelector(".error"), [button], answer => {
             requestId = crypto.randomUUID();
             const chips = root.querySelector(`[data-chips-of="${CSS.escape(button.dataset.player)}"]`);
             if (chips) chips.textContent = words.chips.replace("{n}", answer.chips);
           });
    });
  }

  // Seat changes, carried out between hands: a move to the table chosen, a bot in the
  // player's seat, or his removal.
  for (const button of root.querySelectorAll("button[data-action=move], button[data-action=replace], button[data-action=remove]")) {
    button.addEventListener("click", () => {
      const player = button.dataset.player;
      if (!confirmed(button.dataset.action, player)) return;
      const body = {player, change: button.dataset.action};
      if (body.change === "move") {
        body.table = Number(root.querySelector(`select[data-move-of="${CSS.escape(player)}"]`).value);
      }
      post(`${base}/seats`, body, button.closest("li").querySelector(".error"), [button], reload);
    });
  }

  // The organiser's words to the room.
  const announce = document.getElementById("announce");
  if (announce) {
    announce.addEventListener("submit", event => {
      event.preventDefault();
      post(`${base}/announcements`, {text: announce.elements.text.value.trim()},
           announce.querySelector(".error"), [...announce.querySelectorAll("button")], reload);
    });
  }

  // A late arrival: the same check-in registers him.
  const late = document.getElementById("late-arrival");
  if (late) {
    late.addEventListener("submit", event => {
      event.preventDefault();
      post(`${base}/checkin`, {player: late.elements.player.value.trim()},
           late.querySelector(".error"), [...late.querySelectorAll("button")], reload);
    });
  }
})();
