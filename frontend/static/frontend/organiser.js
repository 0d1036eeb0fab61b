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

  // A late arrival: the same check-in registers him. As the organiser types, the box suggests
  // the club's members whose username or name holds what he typed, capitals and accents aside
  // (frontend/members.py), in a listbox under it (arrow keys, Enter, Escape, or a tap); the one
  // picked is checked in by his username. Text typed and not picked that is exactly one
  // member's name or username is his too; anything else is sent as typed, for the API to judge.
  const late = document.getElementById("late-arrival");
  if (late) {
    const input = late.elements.player;
    const list = document.getElementById("late-player-list");
    const status = document.getElementById("late-player-status");
    const errorBox = late.querySelector(".error");
    const buttons = [...late.querySelectorAll("button")];
    const members = text => api(`${late.dataset.search}?q=${encodeURIComponent(text)}`);
    let picked = null;  // {username, name}, chosen among the suggestions
    let shown = [];     // the suggestions in the list
    let active = -1;    // the one the arrow keys are on
    let asked = 0;      // the latest search sent: the answer to an older one is dropped
    let timer = null;

    const close = () => {
      list.hidden = true;
      list.replaceChildren();
      shown = [];
      active = -1;
      input.setAttribute("aria-expanded", "false");
      input.removeAttribute("aria-activedescendant");
    };
    const highlight = index => {
      active = index;
      [...list.children].forEach((option, i) => {
        option.setAttribute("aria-selected", String(i === index));
        option.classList.toggle("active", i === index);
      });
      const option = list.children[index];
      if (option) {
        input.setAttribute("aria-activedescendant", option.id);
        option.scrollIntoView({block: "nearest"});
      }
    };
    const pick = member => {
      picked = member;
      input.value = member.name;
      close();
      status.textContent = words.picked.replace("{name}", member.name);
    };
    const show = found => {
      close();
      shown = found;
      found.forEach((member, i) => {
        const option = document.createElement("li");
        option.id = `late-player-option-${i}`;
        option.setAttribute("role", "option");
        option.setAttribute("aria-selected", "false");
        const name = document.createElement("span");
        name.className = "option-name";
        name.textContent = member.name;
        option.append(name);
        if (member.name !== member.username) {
          const username = document.createElement("span");
          username.className = "option-username";
          username.textContent = member.username;
          option.append(" ", username);
        }
        option.addEventListener("mousedown", event => event.preventDefault());  // keep the focus
        option.addEventListener("click", () => pick(member));
        list.append(option);
      });
      list.hidden = !found.length;
      input.setAttribute("aria-expanded", String(found.length > 0));
      status.textContent = found.length
        ? words.membersFound.replace("{n}", found.length) : words.noMember;
    };
    const suggest = async text => {
      const mine = ++asked;
      let answer = null;
      try {
        answer = await members(text);
      } catch (e) {
        answer = null;
      }
      if (mine !== asked || input.value.trim() !== text) return;
      if (!answer || answer.status !== 200) {
        close();
        if (answer && answer.body.detail) {  // a search too long: its limit, in words
          errorBox.textContent = answer.body.detail;
          errorBox.hidden = false;
        }
        return;
      }
      errorBox.hidden = true;
      show(answer.body.members);
    };

    input.addEventListener("input", () => {
      if (picked && input.value !== picked.name) picked = null;
      clearTimeout(timer);
      const text = input.value.trim();
      if (!text || picked) {
        asked++;
        close();
        return;
      }
      timer = setTimeout(() => suggest(text), 200);  // once the typing pauses
    });
    input.addEventListener("keydown", event => {
      const open = !list.hidden && shown.length > 0;
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        if (!open) return;
        event.preventDefault();
        const step = event.key === "ArrowDown" ? 1 : -1;
        highlight(active < 0 && step < 0 ? shown.length - 1
          : (active + step + shown.length) % shown.length);
      } else if (event.key === "Enter" && open && active >= 0) {
        event.preventDefault();
        pick(shown[active]);
      } else if (event.key === "Escape" && open) {
        event.preventDefault();
        close();
      }
    });
    input.addEventListener("blur", close);

    late.addEventListener("submit", async event => {
      event.preventDefault();
      clearTimeout(timer);
      asked++;
      close();
      const text = input.value.trim();
      let player = picked && input.value === picked.name ? picked.username : null;
      if (!player) {
        buttons.forEach(b => { b.disabled = true; });
        const found = await members(text).catch(() => null);
        player = (found && found.status === 200 && found.body.exact) || text;
      }
      post(`${base}/checkin`, {player}, errorBox, buttons, reload);
    });
  }
})();
