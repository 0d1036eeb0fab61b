// The viewer's share of randomness (HAND_RECORD.md, version 2; table-cards.js for the
// namespace). Before the deal, each seated person's browser adds 32 random bytes to the
// shuffle. The share is kept by hand, so that a page loaded again during the window sends the
// same one and the audit page can find it in the record.
"use strict";
(function (Table) {
  const {T, W, fill} = Table;
  const shareOf = hand => {
    const key = `academie.share.${hand}`;
    let share = localStorage.getItem(key);
    if (!share) {
      share = Array.from(crypto.getRandomValues(new Uint8Array(32)), b => b.toString(16).padStart(2, "0")).join("");
      localStorage.setItem(key, share);
    }
    return share;
  };
  // The next hand of this table starts while this page still shows the last one's result:
  // its share goes at once, since the page follows only a few seconds later, after the window.
  const present = new Set();
  Table.shareAhead = function (hand) {
    if (T.your_seat === null || T.replay || present.has(hand)) return;
    present.add(hand);
    api(`/api/hands/${hand}/share`, {method: "POST", body: JSON.stringify({share: shareOf(hand)})});
  };
  Table.shareSaid = "";  // what the felt says of the viewer's share
  let sending = false;
  // This hand's share, while it is shuffled; true once the hand is dealt with it.
  Table.sendShare = async function (h) {
    const shares = h.view.shares || [];
    if (T.your_seat === null || T.replay || shares.includes(T.your_seat)) {
      if (shares.includes(T.your_seat)) Table.shareSaid = W.share.in;
      return false;
    }
    if (sending) return false;
    sending = true;
    Table.shareSaid = W.share.sending;
    let r;
    try {
      r = await api(`/api/hands/${T.hand}/share`, {method: "POST", body: JSON.stringify({share: shareOf(T.hand)})});
    } finally { sending = false; }
    if (r.status === 201 || r.body.error === "share_already_sent") Table.shareSaid = W.share.in;
    else if (r.body.error === "already_dealt") Table.shareSaid = W.share.late;
    else Table.shareSaid = fill(W.refused, {detail: r.body.detail || r.status});
    if (Table.current && Table.current.view.phase === "shuffling") Table.drawCentre(Table.current);
    return r.status === 201 && Boolean(r.body.dealt);
  };
})(window.Table);
