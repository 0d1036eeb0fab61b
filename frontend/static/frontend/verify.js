// The hand record checked in the browser, independently of the server (docs/HAND_RECORD.md),
// versions 1, 2 and 3. WebCrypto (SHA-256, HMAC-SHA256, Ed25519) and BigInt; no library.
//
// This file holds what its siblings share: bytes and digests, canonical JSON, the random
// stream and the shuffle that re-derive a deck, and the seals of version 3. verify-record.js
// checks the deal and the chain (verifyRecord); verify-audit.js the whole record as the audit
// page shows it (auditRecord: those checks, the play by rules.js, what the service showed).
// A page loads this file first, then verify-record.js, then verify-audit.js: this file makes
// window.AcademieAudit, whose `shared` the other two read and to which they add their
// functions.
//
// Speed: every independent digest, HMAC and signature is asked of WebCrypto at once
// (Promise.all), and the shuffle's random stream is computed in batches of blocks.
"use strict";
(function () {
  const HEX64 = /^[0-9a-f]{64}$/;
  const HEX = /^(?:[0-9a-f]{2})*$/;
  const FORMATS = {"academie.hand/1": 1, "academie.hand/2": 2, "academie.hand/3": 3};
  const SEAL_LABEL = "academie.hand/3 seal";
  const SEAL_PREFIX = "sealed:";
  const CARD_SEALED = new Set(["offer", "give_back", "return", "draw"]);
  const SEAT_SEALED = new Set(["keep_comet"]);
  const MOVE_BYS = new Set(["player", "forced", "timeout"]);

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

  window.AcademieAudit = {
    shared: {HEX64, FORMATS, isObject, isInt, hex, fromHex, utf8, subtle, sha256, concat, hmacKey,
             hmac, canonical, withStream, uniform, canonicalDeck, shuffle, isSeal, hashedForms},
  };
})();
