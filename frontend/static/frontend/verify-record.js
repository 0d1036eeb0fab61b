// The deal and the chain of a hand record checked in the browser (docs/HAND_RECORD.md),
// versions 1, 2 and 3: verifyRecord.
//
// verifyRecord(record) → the checks of the deal and the chain: the seed against its
// commitment, the players' shares (versions 2 and 3), the deck re-derived from the seed (and
// the shares), the first dealer, the hash chain (over the sealed forms in version 3) and the
// digest. Each check is {check, ok, detail, seq, why, values}: `detail` a short technical text,
// `why` the reason's code and `values` its words, which the page turns into a phrase of its
// language; `seq` the event at fault, if any.
//
// verify.js holds what this uses (digests, the random stream and the shuffle, the seals);
// verify-audit.js adds the play and what the service showed (auditRecord). Loaded after
// verify.js: this adds verifyRecord to window.AcademieAudit, and as window.verifyRecord.
"use strict";
(function (audit) {
  const {HEX64, FORMATS, isObject, isInt, hex, fromHex, utf8, sha256, concat, hmacKey, hmac,
         canonical, withStream, uniform, canonicalDeck, shuffle, isSeal, hashedForms} = audit.shared;
  const AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
  const DECK_LABEL = "academie.hand/3 deck";

  // ------------------------------------------------------------------ the record's shape

  // What must hold before anything can be computed; the first problem, or null.
  function shapeProblem(record) {
    if (!isObject(record)) return {why: "notObject", values: {}, detail: "not a JSON object"};
    if (!Object.prototype.hasOwnProperty.call(FORMATS, record.format)) {
      return {why: "format", values: {format: canonical(record.format)},
              detail: `unknown format ${canonical(record.format)}: expected one of ${Object.keys(FORMATS).join(", ")}`};
    }
    const field = name => ({why: "field", values: {field: name}, detail: `${name} is missing or malformed`});
    if (record.game !== "comet" && record.game !== "commere") return field("game");
    for (const name of ["seed", "commitment", "digest"]) {
      if (typeof record[name] !== "string" || !HEX64.test(record[name])) return field(name);
    }
    if (!isInt(record.number) || record.number < 1) return field("number");
    if (!Array.isArray(record.seats) || record.seats.length === 0
        || !record.seats.every((s, i) => isObject(s) && s.seat === i)) return field("seats");
    if (!isInt(record.dealer) || record.dealer < 0 || record.dealer >= record.seats.length) return field("dealer");
    if (!Array.isArray(record.events) || record.events.length === 0) return field("events");
    if (FORMATS[record.format] === 1 && "shares" in record) return field("shares");
    if (FORMATS[record.format] > 1 && !Array.isArray(record.shares)) return field("shares");
    return null;
  }

  // ------------------------------------------------------------------ the deal and the chain

  async function verifyRecord(record) {
    const checks = [];
    const check = (name, ok, detail, extra) => checks.push(Object.assign(
      {check: name, ok, detail: detail || "", seq: null, why: ok ? null : name, values: {}}, extra || {}));
    const shape = shapeProblem(record);
    if (shape) {
      check("format", false, shape.detail, {why: shape.why, values: shape.values});
      return checks;
    }
    const version = FORMATS[record.format];
    const seed = fromHex(record.seed);
    const n = record.seats.length;
    const events = record.events;
    const seedKey = version === 3 ? await hmacKey(seed) : null;
    // The chain's digests and seals are asked now, with the commitment's.
    const formsPromise = hashedForms(events, seedKey);
    const commitment = hex(await sha256(seed));
    check("commitment", commitment === record.commitment, "sha256(seed) = commitment");

    let key = seed, sharesOk = true;
    if (version > 1) {
      // The shares in the record are exactly those the deal event names, each as its share
      // event sent it, in ascending seat order; the deck is shuffled under K: version 2
      // sha256(seed || seat byte || share …), version 3 HMAC(seed, label || seat byte || share …).
      const shares = record.shares;
      const sent = {};
      events.filter(e => isObject(e) && e.type === "share").forEach(e => { sent[e.seat] = e.share; });
      const deal = events.find(e => isObject(e) && e.type === "deal");
      const named = deal && Array.isArray(deal.contributors) ? deal.contributors : null;
      const wellFormed = shares.every((s, i) => isObject(s) && Object.keys(s).length === 2
        && isInt(s.seat) && s.seat >= 0 && s.seat < n && (i === 0 || shares[i - 1].seat < s.seat)
        && typeof s.share === "string" && HEX64.test(s.share));
      sharesOk = wellFormed && !!named && canonical(shares.map(s => s.seat)) === canonical(named)
        && shares.every(s => sent[s.seat] === s.share);
      check("shares", sharesOk, sharesOk ? "" : "shares ≠ contributors",
            {seq: deal && isInt(deal.seq) ? deal.seq : null});
      if (wellFormed) {
        const parts = shares.map(s => concat(Uint8Array.of(s.seat), fromHex(s.share)));
        key = version === 2 ? await sha256(concat(seed, ...parts))
          : await hmac(seedKey, concat(utf8(DECK_LABEL), ...parts));
      } else {
        key = null;
      }
    }
    let dealt = null;
    if (key) {
      dealt = await withStream(key, canonicalDeck(record.game).length + 2,
                               read => shuffle(read, record.game, version === 1 && record.number === 1 ? n : 0));
    }
    const deck = Array.isArray(record.deck) ? record.deck : [];
    if (!dealt) {
      check("deck", false, "the shares are unreadable: no deck can be derived", {why: "deckShares"});
    } else {
      let at = dealt.deck.findIndex((c, i) => c !== deck[i]);
      if (at === -1 && deck.length !== dealt.deck.length) at = dealt.deck.length;
      const found = at in deck ? canonical(deck[at]).replace(/^"|"$/g, "") : "—";
      const expected = at < dealt.deck.length ? dealt.deck[at] : "—";
      check("deck", at === -1, at === -1 ? "" : `card ${at}: ${found} ≠ ${expected}`,
            {values: {index: at, found, expected}});
    }
    if (record.number === 1) {
      // Version 1 draws the first dealer after the shuffle, in the same stream; versions 2 and 3
      // draw it first in the seed's own stream, known before any share.
      const dealer = version === 1 ? (dealt ? dealt.dealer : null)
        : await withStream(seed, 2, read => uniform(read, n));
      check("dealer", dealer === record.dealer, `seat ${dealer}`,
            {values: {expected: dealer, found: record.dealer}});
    }

    // The chain: each event numbered in turn, its time never going backwards, its prev the
    // previous hash (the commitment for the first), in version 3 every value in clear, and its
    // hash over its (sealed) form.
    const forms = await formsPromise;
    let prev = record.commitment, lastAt = "", broken = null;
    for (let i = 0; i < events.length && !broken; i++) {
      const event = events[i], seq = i + 1;
      const fault = (why, detail, values) => { broken = {seq, why, detail, values: Object.assign({seq}, values || {})}; };
      if (!isObject(event)) { fault("notEvent", `event ${seq}: not an object`); break; }
      if (event.seq !== seq) { fault("seq", `event ${seq}: seq is ${canonical(event.seq)}`); break; }
      if (typeof event.at !== "string" || !AT.test(event.at)) { fault("at", `event ${seq}: malformed time`); break; }
      const at = normalAt(event.at);
      if (at < lastAt) { fault("at", `event ${seq}: time goes backwards`); break; }
      lastAt = at;
      if (event.prev !== prev) { fault("prev", `event ${seq}`); break; }
      if (version === 3) {
        const sealed = Object.keys(event).find(k => k !== "prev" && k !== "hash" && isSeal(event[k]));
        if (sealed !== undefined) { fault("sealed", `event ${seq}: its ${sealed} is a seal, not its value`, {field: sealed}); break; }
        if ("seals" in event) { fault("seals", `event ${seq}: 'seals' is not a field of a record's event`); break; }
      }
      if (forms[i] !== event.hash) { fault("hash", `event ${seq}`); break; }
      prev = event.hash;
    }
    check("chain", broken === null, broken === null ? "" : broken.detail,
          broken ? {seq: broken.seq, why: broken.why, values: broken.values} : {});
    const last = events[events.length - 1];
    check("digest", broken === null && isObject(last) && last.hash === record.digest, "");
    return checks;
  }

  // A timestamp of any precision, comparable as text.
  function normalAt(at) {
    const body = at.slice(0, -1), dot = body.indexOf(".");
    const main = dot === -1 ? body : body.slice(0, dot), frac = dot === -1 ? "" : body.slice(dot + 1);
    return main + "." + frac.padEnd(9, "0");
  }

  audit.verifyRecord = verifyRecord;
  window.verifyRecord = verifyRecord;
})(window.AcademieAudit);
