// A hand record checked in the browser as the audit page shows it (docs/HAND_RECORD.md):
// auditRecord.
//
// auditRecord(record, context) → {checks, notes, ok}: verifyRecord's checks, then the play (the
// header against hand_started, the result against hand_over, every move and payment replayed
// by AcademieRules.checkPlay, rules.js), then what the service showed: the digest it lists for
// the hand and the receipts this browser kept (their Ed25519 signatures under the published
// keys, and the record's event at each receipt's seq having exactly the signed hash).
// Each check also has a `group`: "deal", "play" or "service"; `ok` is null where a check could
// not apply (no receipt kept, the keys unreadable, another hand than the service's).
//
// verify.js holds what this uses (digests, canonical JSON); verify-record.js the deal and the
// chain (verifyRecord); rules.js and its siblings the play (AcademieRules.checkPlay). Loaded
// after verify-record.js: this adds auditRecord and the receipts kept here to
// window.AcademieAudit.
"use strict";
(function (audit) {
  const {HEX64, FORMATS, isObject, isInt, hex, fromHex, utf8, subtle, sha256, canonical} = audit.shared;
  const verifyRecord = audit.verifyRecord;
  const CHECKPOINT_LABEL = "academie.checkpoint/1";
  const STARTED_FIELDS = ["dealer", "seats", "options", "chips_before", "pot_before", "commitment"];

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

  Object.assign(audit, {auditRecord, keptReceipts, canonical,
                        receiptPrefix: RECEIPT_PREFIX, ed25519: () => ed25519Support});
})(window.AcademieAudit);
