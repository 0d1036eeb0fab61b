// The hand record checked in the browser, independently of the server (docs/HAND_RECORD.md),
// versions 1, 2 and 3. WebCrypto (SHA-256, HMAC-SHA256, Ed25519) and BigInt; no library.
//
// verifyRecord(record) → the checks of the deal and the chain: the seed against its
// commitment, the players' shares (versions 2 and 3), the deck re-derived from the seed (and
// the shares), the first dealer, the hash chain (over the sealed forms in version 3) and the
// digest. Each check is {check, ok, detail, seq, why, values}: `detail` a short technical text,
// `why` the reason's code and `values` its words, which the page turns into a phrase of its
// language; `seq` the event at fault, if any.
//
// auditRecord(record, context) → {checks, notes, ok}: the checks above, then the play (the
// header against hand_started, the result against hand_over, every move and payment replayed
// by AcademieRules.checkPlay, rules.js), then what the service showed: the digest it lists for
// the hand and the receipts this browser kept (their Ed25519 signatures under the published
// keys, and the record's event at each receipt's seq having exactly the signed hash).
// Each check also has a `group`: "deal", "play" or "service"; `ok` is null where a check could
// not apply (no receipt kept, the keys unreadable, another hand than the service's).
//
// Speed: every independent digest, HMAC and signature is asked of WebCrypto at once
// (Promise.all), and the shuffle's random stream is computed in batches of blocks.
"use strict";
(function () {
  const HEX64 = /^[0-9a-f]{64}$/;
  const HEX = /^(?:[0-9a-f]{2})*$/;
  const AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
  const FORMATS = {"academie.hand/1": 1, "academie.hand/2": 2, "academie.hand/3": 3};
  const DECK_LABEL = "academie.hand/3 deck";
  const SEAL_LABEL = "academie.hand/3 seal";
  const SEAL_PREFIX = "sealed:";
  const CHECKPOINT_LABEL = "academie.checkpoint/1";
  const CARD_SEALED = new Set(["offer", "give_back", "return", "draw"]);
  const SEAT_SEALED = new Set(["keep_comet"]);
  const MOVE_BYS = new Set(["player", "forced", "timeout"]);
  const STARTED_FIELDS = ["dealer", "seats", "options", "chips_before", "pot_before", "commitment"];

  const isObject = v => v !== null && typeof v === "object" && !Array.isArray(v);
  const isInt = v => Number.isInteger(v);
  const hex = bytes => Array.from(new Uint8Array(bytes), b => b.toString(16).padStart(2, "0")).join("");
  const fromHex = text => new Uint8Array((text.match(/../g) || []).map(h => parseInt(h, 16)));
  const utf8 = text => new TextEncoder().encode(text);
  const subtle = () => crypto.subtle;
  const sha256 = async bytes => new Uint8Array(await subtle().digest("SHA-256", bytes));
  const concat = (...parts) => {
    const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) { out.set(p, at); at += p.length; }
    return out;
  };
  async function hmacKey(keyBytes) {
    return subtle().importKey("raw", keyBytes, {name: "HMAC", hash: "SHA-256"}, false, ["sign"]);
  }
  const hmac = async (key, message) => new Uint8Array(await subtle().sign("HMAC", key, message));

  // Canonical JSON: keys sorted at every level, no spaces, non-ASCII as raw UTF-8.
  function canonical(value) {
    if (Array.isArray(value)) return "[" + value.map(canonical).join(",") + "]";
    if (value !== null && typeof value === "object") {
      return "{" + Object.keys(value).sort().map(k => JSON.stringify(k) + ":" + canonical(value[k])).join(",") + "}";
    }
    const text = JSON.stringify(value);
    return text === undefined ? "null" : text;
  }

  // ------------------------------------------------------------------ the random stream

  // The stream sha256(key || i), i = 0, 1, … as 8-byte big-endian, read as 8-byte big-endian
  // integers. `draw(read)` runs synchronously over blocks computed beforehand; when it needs
  // more than there are, it runs again over twice as many (the draws are deterministic).
  const EXHAUSTED = Symbol("exhausted");
  async function blocks(key, from, count) {
    const inputs = [];
    for (let i = from; i < from + count; i++) {
      const input = new Uint8Array(key.length + 8);
      input.set(key);
      new DataView(input.buffer).setBigUint64(key.length, BigInt(i));
      inputs.push(input);
    }
    return Promise.all(inputs.map(sha256));
  }
  async function withStream(key, expected, draw) {
    let made = [], want = Math.ceil(expected / 4) + 1;
    for (;;) {
      made = made.concat(await blocks(key, made.length, want - made.length));
      let block = 0, at = 0;
      const read = () => {
        if (at === 32) { block += 1; at = 0; }
        if (block >= made.length) throw EXHAUSTED;
        const u = new DataView(made[block].buffer).getBigUint64(at);
        at += 8;
        return u;
      };
      try {
        return draw(read);
      } catch (e) {
        if (e !== EXHAUSTED) throw e;
        want = made.length * 2;
      }
    }
  }
  // Uniform integer in [0, m): discard u >= 2**64 - (2**64 % m), then u % m.
  function uniform(read, m) {
    const big = BigInt(m), span = 1n << 64n, limit = span - (span % big);
    let u = read();
    while (u >= limit) u = read();
    return Number(u % big);
  }
  function canonicalDeck(game) {
    const deck = [];
    for (const s of "CDHS") for (const r of "A23456789TJQK") deck.push(r + s);
    return game === "comet" ? deck.filter(c => c !== "8D") : deck;
  }
  // Fisher–Yates from the end; deck[0] is the top card. Then, when `dealers` is a seat count,
  // one more uniform integer in [0, n): the first dealer of version 1.
  function shuffle(read, game, dealers) {
    const deck = canonicalDeck(game);
    for (let i = deck.length - 1; i >= 1; i--) {
      const j = uniform(read, i + 1);
      [deck[i], deck[j]] = [deck[j], deck[i]];
    }
    return {deck, dealer: dealers ? uniform(read, dealers) : null};
  }

  // ------------------------------------------------------------------ seals (version 3)

  function sealedFields(event) {
    const fields = [];
    if (CARD_SEALED.has(event.type) && "card" in event) fields.push("card");
    if (SEAT_SEALED.has(event.type) && "seat" in event) fields.push("seat");
    if (MOVE_BYS.has(event.by)) fields.push("by");
    return fields;
  }
  const isSeal = v => typeof v === "string" && v.startsWith(SEAL_PREFIX);

  // The text each event's hash is over: the event without `hash` (version 3: its sealed
  // form, each sealed field's value replaced by "sealed:" + HMAC(seed, canonical([label,
  // seq, field, value]))). The HMACs of the whole record are asked at once.
  async function hashedForms(events, seedKey) {
    // Own data properties only (a key "__proto__" of a parsed record stays a key); what is not
    // an event has no hash (the chain stops there).
    const bodies = events.map(e => (isObject(e) ? Object.fromEntries(Object.entries(e).filter(([k]) => k !== "hash")) : null));
    if (seedKey) {
      const jobs = [];
      bodies.forEach(body => {
        if (body === null) return;
        for (const field of sealedFields(body)) {
          jobs.push({body, field, message: utf8(canonical([SEAL_LABEL, body.seq, field, body[field]]))});
        }
      });
      const macs = await Promise.all(jobs.map(j => hmac(seedKey, j.message)));
      jobs.forEach((j, k) => { j.seal = SEAL_PREFIX + hex(macs[k]); });
      jobs.forEach(j => { j.body[j.field] = j.seal; });
    }
    const digests = await Promise.all(bodies.map(b => (b === null ? null : sha256(utf8(canonical(b))))));
    return digests.map(d => (d === null ? null : hex(d)));
  }

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

  // ------------------------------------------------------------------ the play

  function playChecks(record) {
    const out = [];
    const events = record.events;
    const check = (name, ok, detail, extra) => out.push(Object.assign(
      {group: "play", check: name, ok, detail: detail || "", seq: null, why: ok ? null : name, values: {}}, extra || {}));
    // The header is repeated in hand_started, field for field.
    const started = events[0];
    if (!isObject(started) || started.type !== "hand_started") {
      check("header", false, "event 1 is not hand_started", {seq: 1, why: "headerStart", values: {seq: 1}});
    } else {
      const fields = STARTED_FIELDS.concat(record.game === "comet" ? ["comet_payment_due"] : []);
      const differs = fields.find(f => canonical(started[f]) !== canonical(record[f]));
      check("header", differs === undefined, differs === undefined ? "" : `event 1: hand_started ${differs} differs from the record's`,
            {seq: 1, values: {seq: 1, field: differs}});
    }
    // The result is hand_over's, the last event.
    const last = events[events.length - 1], lastSeq = isObject(last) && isInt(last.seq) ? last.seq : events.length;
    if (!isObject(last) || last.type !== "hand_over") {
      check("result", false, `event ${lastSeq}: the last event is not hand_over`,
            {seq: lastSeq, why: "resultLast", values: {seq: lastSeq}});
    } else {
      const same = canonical(last.result) === canonical(record.result);
      check("result", same, same ? "" : `event ${lastSeq}: hand_over's result differs from the record's`,
            {seq: lastSeq, values: {seq: lastSeq}});
    }
    // Every move, payment and derived event under the rules (rules.js).
    const rules = window.AcademieRules;
    if (!rules || typeof rules.checkPlay !== "function") {
      check("rules", null, "rules.js is not loaded", {why: "rulesMissing"});
    } else {
      let found;
      try {
        found = rules.checkPlay(record);
      } catch (e) {
        found = {seq: null, code: "expected", detail: "the rules check stopped: " + e};
      }
      if (!found) check("rules", true);
      else {
        check("rules", false, found.detail, {seq: isInt(found.seq) ? found.seq : null, why: "rules",
                                             values: {code: found.code, seq: found.seq}});
      }
    }
    return out;
  }

  // ------------------------------------------------------------------ what the service showed

  // Receipts as this browser keeps them: localStorage "academie.receipt.<hand>", a receipt or
  // a list of them. All of them, or those of one hand.
  const RECEIPT_PREFIX = "academie.receipt.";
  function keptReceipts(hand) {
    const out = [];
    let storage;
    try { storage = window.localStorage; } catch (e) { return out; }
    const names = [];
    for (let i = 0; i < storage.length; i++) {
      const name = storage.key(i);
      if (name && name.startsWith(RECEIPT_PREFIX)) names.push(name);
    }
    names.sort();
    for (const name of names) {
      if (hand !== undefined && name !== RECEIPT_PREFIX + hand) continue;
      let value;
      try { value = JSON.parse(storage.getItem(name)); } catch (e) { continue; }
      for (const r of Array.isArray(value) ? value : [value]) {
        if (isObject(r)) out.push(r);
      }
    }
    return out;
  }

  let ed25519Support = null;
  async function ed25519Key(publicHex) {
    return subtle().importKey("raw", fromHex(publicHex), {name: "Ed25519"}, false, ["verify"]);
  }

  // The receipts of the record's hand against it, in seq order: each signed by a published
  // key, over canonical(["academie.checkpoint/1", hand, seq, hash]), and the record's event
  // at seq having exactly that hash. The first that fails, or how many hold.
  async function receiptsCheck(record, receipts, keys) {
    const base = {group: "service", check: "receipts", detail: "", seq: null, values: {}};
    const mine = receipts.filter(r => isObject(r) && r.hand === record.hand)
      .sort((a, b) => (a.seq || 0) - (b.seq || 0));
    if (mine.length === 0) return Object.assign(base, {ok: null, why: "receiptsNone"});
    if (!keys) return Object.assign(base, {ok: null, why: "receiptsNoKeys", values: {n: mine.length}});
    const published = {};
    for (const k of keys) if (isObject(k) && typeof k.public === "string" && HEX64.test(k.public)) published[k.id] = k.public;
    // Every key imported once, every signature checked at once.
    const imported = {};
    try {
      await Promise.all(Object.entries(published).map(async ([id, pub]) => {
        const raw = fromHex(pub);
        if (hex(await sha256(raw)).slice(0, 16) === id) imported[id] = await ed25519Key(pub);
      }));
      ed25519Support = true;
    } catch (e) {
      ed25519Support = false;
      return Object.assign(base, {ok: null, why: "receiptsNoEd25519", detail: String(e), values: {n: mine.length}});
    }
    const verdicts = await Promise.all(mine.map(async r => {
      const key = imported[r.key];
      if (!key || typeof r.sig !== "string" || !/^[0-9a-f]{128}$/.test(r.sig)
          || !isInt(r.seq) || typeof r.hash !== "string") return key ? false : "key";
      const message = utf8(canonical([CHECKPOINT_LABEL, r.hand, r.seq, r.hash]));
      try {
        return await subtle().verify({name: "Ed25519"}, key, fromHex(r.sig), message);
      } catch (e) {
        return false;
      }
    }));
    for (let i = 0; i < mine.length; i++) {
      const r = mine[i], seq = r.seq;
      const fail = (why, detail) => Object.assign(base, {ok: false, why, detail, seq: isInt(seq) ? seq : null,
                                                         values: {seq, key: r.key, n: mine.length}});
      if (verdicts[i] === "key") return fail("receiptKey", `receipt for seq ${seq}: signed by key ${r.key}, which is not among the published keys`);
      if (!verdicts[i]) return fail("receiptSig", `receipt for seq ${seq}: its signature does not verify under key ${r.key}`);
      if (seq > record.events.length) {
        return fail("receiptMissing", `receipt for seq ${seq}: the service showed event ${seq}, which the record does not have: the record was changed after the service showed it`);
      }
      const event = record.events[seq - 1];
      if (!isObject(event) || event.hash !== r.hash) {
        return fail("receiptChanged", `receipt for seq ${seq}: the record's event ${seq} has hash ${isObject(event) ? event.hash : "?"}, but the service signed ${r.hash} when it showed it: the record was changed after the service showed it`);
      }
    }
    return Object.assign(base, {ok: true, why: null, values: {n: mine.length}});
  }

  // context: {hand: the service's hand id (this page's), serviceDigest: the digest the service
  // lists for it (or null), receipts: the receipts to check (default: those kept here),
  // keys: the published keys' list (or null: unreadable), yourShare: the share this browser
  // sent for the hand, if any}.
  async function auditRecord(record, context) {
    const ctx = context || {};
    const t0 = performance.now();
    const deal = (await verifyRecord(record)).map(c => Object.assign({group: "deal"}, c));
    const checks = deal.slice();
    const notes = [];
    if (deal[0].check !== "format") {
      checks.push(...playChecks(record));
      if (ctx.hand !== undefined && ctx.hand !== null && record.hand === ctx.hand) {
        if (typeof ctx.serviceDigest === "string") {
          const same = record.digest === ctx.serviceDigest;
          checks.push({group: "service", check: "serviceDigest", ok: same, seq: null, why: same ? null : "serviceDigest",
                       detail: same ? "" : `the service lists ${ctx.serviceDigest}`,
                       values: {digest: ctx.serviceDigest, found: record.digest}});
        } else {
          checks.push({group: "service", check: "serviceDigest", ok: null, seq: null, why: "serviceDigestUnknown",
                       detail: "", values: {}});
        }
      } else {
        checks.push({group: "service", check: "serviceDigest", ok: null, seq: null, why: "serviceDigestOther",
                     detail: "", values: {}});
      }
      const receipts = ctx.receipts || keptReceipts(record.hand);
      checks.push(await receiptsCheck(record, receipts, ctx.keys || null));
      // A deal without a player's share: the service alone drew it (and a version-1 hand has
      // no share at all).
      const dealEvent = record.events.find(e => isObject(e) && e.type === "deal");
      if (FORMATS[record.format] === 1
          || (dealEvent && Array.isArray(dealEvent.contributors) && dealEvent.contributors.length === 0)) {
        notes.push({note: "noShare"});
      }
      if (ctx.yourShare && FORMATS[record.format] > 1) {
        const used = record.shares.some(s => isObject(s) && s.share === ctx.yourShare);
        notes.push({note: used ? "yourShare" : "yourShareMissing", ok: used});
      }
    }
    const ok = checks.every(c => c.ok !== false);
    return {checks, notes, ok, ms: performance.now() - t0};
  }

  window.verifyRecord = verifyRecord;
  window.AcademieAudit = {auditRecord, verifyRecord, keptReceipts, canonical,
                          receiptPrefix: RECEIPT_PREFIX, ed25519: () => ed25519Support};
})();
