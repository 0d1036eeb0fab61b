// The lobby's actions go through the API, as any client's: answer an invitation, close one's
// own casual table, come back to a table one left, make one, register for a soirée or
// unregister. Each then reloads the page, which reads everything anew (or opens the table,
// when it starts at once or one comes back to it); a refusal shows the API's own detail. The
// words come from the page (#lobby's data attributes), in its language; postAction() is
// academie.js's.
(() => {
  const lobby = document.getElementById("lobby");
  const words = lobby.dataset;

  // A table that starts now (everyone accepted) is opened at its first hand; otherwise the
  // page is read anew.
  function opened(partie) {
    const hands = partie.hands || [];
    if (partie.status === "playing" && hands.length) location.href = `/hands/${hands[hands.length - 1].id}/`;
    else location.reload();
  }
  const post = (path, body, errorBox, buttons) =>
    postAction(path, body, errorBox, buttons, words, opened);

  // Accept or decline an invitation; close a casual table one made.
  for (const panel of lobby.querySelectorAll("[data-partie]")) {
    const buttons = [...panel.querySelectorAll("button[data-action]")];
    const errorBox = panel.querySelector(".error");
    for (const button of buttons) {
      button.addEventListener("click", () => {
        const partie = panel.dataset.partie, action = button.dataset.action;
        if (action === "close") {
          if (button.dataset.confirm && !window.confirm(button.dataset.confirm)) return;
          postAction(`/api/parties/${partie}/close`, {}, errorBox, buttons, words, body => {
            if (body.status !== "playing") { location.reload(); return; }
            // Playing on to the end of its hand: the table says so, where the button was.
            const state = document.createElement("p");
            state.className = "stopping";
            state.setAttribute("role", "status");
            state.textContent = words.stopping;
            button.closest("p").replaceWith(state);
          });
        }
        else post(`/api/parties/${partie}/answer`, {accept: action === "accept"}, errorBox, buttons);
      });
    }
  }

  // Back at a table one has left (#away-from): the absence ends (a paused table resumes), then
  // the table opens. Without the script the link opens the table, whose button brings him back.
  for (const link of lobby.querySelectorAll("a.come-back[data-away-partie]")) {
    link.addEventListener("click", event => {
      event.preventDefault();
      postAction(`/api/parties/${link.dataset.awayPartie}/away`, {away: false},
                 link.parentElement.querySelector(".error"), [], words, () => { location.href = link.href; });
    });
  }

  // Register for a soirée of one's club, or take one's name off (registration_state.html):
  // then the page is read anew.
  for (const box of lobby.querySelectorAll(".my-registration[data-soiree]")) {
    for (const button of box.querySelectorAll("button[data-action]")) {
      button.addEventListener("click", () => {
        postAction(`/api/soirees/${box.dataset.soiree}/${button.dataset.action}`, {},
                   box.querySelector(".error"), [button], words, () => location.reload());
      });
    }
  }

  // A new casual table: the people named (the creator first, when he sits), then the bots.
  const form = document.getElementById("new-table");
  form.addEventListener("submit", event => {
    event.preventDefault();
    const fields = form.elements;
    const invited = fields.players.value.split(",").map(name => name.trim()).filter(Boolean);
    const players = fields.seat_me.checked
      ? [words.me, ...invited.filter(name => name !== words.me)] : invited;
    post("/api/parties/", {
      game: fields.game.value,
      players,
      bots: Array(Number(fields.bots.value) || 0).fill(fields.bot_level.value),
      buy_in: Number(fields.buy_in.value) || 0,
      // People's timings; the Comet window is the same for every seat, so that its length
      // never shows who holds the Comet.
      move_timeout: 30, comet_window: Number(fields.comet_window.value) || 3, forced_move_delay: 1,
    }, form.querySelector(".error"), [...form.querySelectorAll("button")]);
  });
  // The Comet's window means nothing at Ma commère.
  const cometRow = document.getElementById("new-comet-window-row");
  const showWindow = () => { cometRow.hidden = form.elements.game.value !== "comet"; };
  form.elements.game.addEventListener("change", showWindow);
  showWindow();
})();
