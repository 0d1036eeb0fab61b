// From hand to hand (table-cards.js for the namespace): the link to the table's next hand,
// the partie's end (at a soirée, the person's next partie), and the soirée's announcements
// for this table.
"use strict";
(function (Table) {
  const {T, W, $, fill} = Table;
  const tableUrl = id => T.urls.table.replace("00000000-0000-0000-0000-000000000000", id);
  // The next hand is dealt: a link to it, which the page follows when this one is over.
  Table.offerNext = function (id, number, follow) {
    const next = $("next");
    if (!next.hidden) return;
    next.href = tableUrl(id);
    next.textContent = fill(W.next_hand, {n: number});
    next.hidden = false;
    // The result stays on screen a few seconds, then the page follows the table, unless the
    // player is choosing how to leave it: the link waits for him.
    if (follow && number === T.number + 1) {
      Table.shareAhead(id);
      if (window.matchMedia("(max-width: 700px)").matches) $("result").scrollIntoView({block: "center"});
      setTimeout(() => {
        const choosing = $("leave-choice") && !$("leave-choice").hidden;
        if (!choosing) window.location = next.href;
      }, 6000);
    }
  };
  Table.followPartie = async function () {
    // The partie is over: at a soirée, the next partie of this table seats its people again.
    if (Table.partieOver) return;
    Table.partieOver = true;
    $("closed").textContent = W.partie_over;
    $("closed").hidden = false;
    if ($("leave")) $("leave").hidden = true;
    // No more cards to hold: the tray gives way to where the player goes from here.
    if ($("mine")) $("mine").hidden = true;
    let links = 0;
    const link = (href, words) => {
      const a = document.createElement("a");
      a.href = href;
      a.textContent = words;
      $("closed").append(links++ ? " · " : " ", a);
    };
    if (T.soiree && T.urls.results) link(T.urls.results, W.soiree_results);  // the standings
    else link(`${T.urls.lobby}#new`, W.new_table);  // a casual table: another one
    link(T.urls.lobby, W.to_lobby);
    if (window.matchMedia("(max-width: 700px)").matches) $("closed").scrollIntoView({block: "center"});
    if (!T.soiree || T.your_seat === null) return;
    for (let i = 0; i < 180; i++) {
      const r = await api(`/api/soirees/${T.soiree}/my-table`);
      const table = r.status === 200 ? r.body.table : null;
      if (table && table.current_hand && table.current_hand.hand !== T.hand && table.partie !== (Table.current && Table.current.partie)) {
        const next = $("next");
        next.href = tableUrl(table.current_hand.hand);
        next.textContent = table.table === T.table_number ? W.next_partie : fill(W.next_partie_at, {n: table.table});
        next.hidden = false;
        Table.shareAhead(table.current_hand.hand);
        setTimeout(() => { window.location = next.href; }, 6000);
        return;
      }
      // Often enough to send the next partie's first share within its window.
      await new Promise(ok => setTimeout(ok, 1000));
    }
  };
  // -- The soirée's announcements for this table: moves between hands, the organiser's words.
  async function news() {
    const r = await api(`/api/soirees/${T.soiree}/announcements`);
    if (r.status !== 200) return;
    const since = Date.now() - 10 * 60 * 1000;  // what is still news: the last ten minutes
    const mine = r.body.announcements.filter(a => new Date(a.at) >= since && (a.kind === "message"
      || a.from_table === T.table_number || a.to_table === T.table_number)).slice(0, 3);
    $("news").innerHTML = mine.map(a => `<li class="${a.done ? "" : "pending"}">${esc(a.text)}</li>`).join("");
    $("news").hidden = mine.length === 0;
  }
  if (T.soiree) { news(); setInterval(news, 10000); }
})(window.Table);
