// The hash chain a viewer holds while a hand is played (HAND_RECORD.md, "Version 3"). Every
// event the service shows of a version-3 hand carries its `prev`, its `hash` and the seals of
// its sealed fields, and every view a signed receipt of its seq: the page recomputes each hash
// as the events come, checks that each one links to the last, and that every receipt names
// the hash it holds at that seq. WebCrypto's SHA-256 and HMAC; no library.
//
//   AcademieChain.shownHash(event[, seed])  the hash of a shown event (a hex string, async)
//   new AcademieChain.Follower({onBreak, fetchEvents})  the check of one hand, fed in order
//   AcademieChain.keepReceipt(receipt)  keeps a hand's latest receipt in localStorage
"use strict";
(function () {
  const hex = bytes => Array.from(new Uint8Array(bytes), b => b.toString(16).padStart(2, "0")).join("");
  const utf8 = text => new TextEncoder().encode(text);

  // Canonical JSON (as verify.js): keys sorted at every level, no spaces, raw UTF-8.
  function canonical(value) {
    if (Array.isArray(value)) return "[" + value.map(canonical).join(",") + "]";
    if (value !== null && typeof value === "object") {
      return "{" + Object.keys(value).sort().map(k => JSON.stringify(k) + ":" + canonical(value[k])).join(",") + "}";
    }
    return JSON.stringify(value);
  }

  // The fields version 3 seals (games/engine/seals.py sealed_fields).
  const CARD_SEALED = new Set(["offer", "give_back", "return", "draw"]);
  const MOVE_BYS = new Set(["player", "forced", "timeout"]);
  function sealedFields(event) {
    const fields = [];
    if (CARD_SEALED.has(event.type) && "card" in event) fields.push("card");
    if (event.type === "keep_comet" && "seat" in event) fields.push("seat");
    if (MOVE_BYS.has(event.by)) fields.push("by");
    return fields;
  }
  async function sealOf(seed, seq, field, value) {
    const key = await crypto.subtle.importKey("raw", new Uint8Array(seed.match(/../g).map(h => parseInt(h, 16))),
      {name: "HMAC", hash: "SHA-256"}, false, ["sign"]);
    const mac = await crypto.subtle.sign("HMAC", key, utf8(canonical(["academie.hand/3 seal", seq, field, value])));
    return "sealed:" + hex(mac);
  }

  // A shown event's hash: the event without `hash` and `seals`, each sealed field replaced by
  // its seal. An event in clear without its seals (a record's) needs the revealed seed.
  async function shownHash(event, seed) {
    const seals = Object.assign({}, event.seals || {});
    if (seed) {
      for (const field of sealedFields(event)) {
        if (!(field in seals)) seals[field] = await sealOf(seed, event.seq, field, event[field]);
      }
    }
    const body = Object.assign({}, event);
    delete body.hash;
    delete body.seals;
    Object.assign(body, seals);
    return hex(await crypto.subtle.digest("SHA-256", utf8(canonical(body))));
  }

  // The check of one hand. `view(h)` for every view the page gets (the first one starts the
  // check: its format, commitment and receipt), `feed(events)` for the events, `claim(receipt)`
  // for a receipt that came without its view. All run in the order they are called, one at a
  // time (a promise queue), and never hold the page up. A broken link calls onBreak({seq,
  // reason}) once, and the follower is deaf until `reset()`: the page reloads the hand and
  // starts again. `fetchEvents()` (async, the /events answer) is asked for the events before
  // one that comes with a gap (one missed between loading the page and opening its socket).
  class Follower {
    constructor({onBreak, fetchEvents}) {
      this.onBreak = onBreak;
      this.fetchEvents = fetchEvents;
      this.queue = Promise.resolve();
      this.reset();
    }
    reset() {
      this.generation = (this.generation || 0) + 1;
      this.on = null;          // null until the first view: then whether it is a version-3 hand
      this.broken = false;
      this.seed = null;
      this.hashes = new Map(); // seq → hash of each event checked (0: the commitment)
      this.claims = new Map(); // seq → hash the service signed (receipts) or named (digest)
    }
    enqueue(task) {
      const generation = this.generation;
      this.queue = this.queue.then(() => {
        this.task = generation;
        if (!this.stale() && this.on && !this.broken) return task();
      }).catch(e => console.error("chain check", e));
      return this.queue;
    }
    view(h) {
      if (this.on === null) {
        this.on = h.format === 3;
        this.hand = h.hand;
        if (this.on && h.commitment) this.hashes.set(0, h.commitment);
      }
      if (h.seed) this.seed = h.seed;
      if (h.digest) this.enqueue(() => this.pin(h.seq, h.digest, "digest", this.claims));
      return this.claim(h.receipt);
    }
    claim(receipt) {
      if (!receipt) return this.queue;
      return this.enqueue(() => receipt.hand === this.hand ? this.pin(receipt.seq, receipt.hash, "receipt", this.claims)
        : this.fail(receipt.seq, "receipt"));
    }
    feed(events) {
      const list = (events || []).slice().sort((a, b) => a.seq - b.seq);
      return this.enqueue(async () => {
        for (const e of list) if (!this.broken && !(await this.follow(e))) return;
      });
    }
    // Whether `hash` agrees with what is known at `seq` (an event checked, or a receipt); then
    // it is kept in `into`.
    pin(seq, hash, reason, into) {
      if (this.stale()) return false;
      const known = this.hashes.has(seq) ? this.hashes.get(seq) : this.claims.get(seq);
      if (known !== undefined && known !== hash) return this.fail(seq, this.hashes.has(seq) ? reason : "receipt");
      if (!into.has(seq)) into.set(seq, hash);
      return true;
    }
    // A task of the check before the last reset, still running: it stops at its next step.
    stale() { return this.task !== this.generation; }
    previous(seq) {
      return this.hashes.has(seq - 1) ? this.hashes.get(seq - 1) : this.claims.get(seq - 1);
    }
    async follow(e) {
      if (typeof e.hash !== "string" || await shownHash(e, this.seed) !== e.hash) return this.fail(e.seq, "hash");
      if (this.previous(e.seq) === undefined && this.fetchEvents && !this.hashes.has(e.seq)) {
        const answer = await this.fetchEvents();
        if (this.stale()) return false;
        const before = ((answer && answer.events) || []).filter(x => x.seq < e.seq && !this.hashes.has(x.seq));
        for (const x of before.sort((a, b) => a.seq - b.seq)) if (!(await this.follow(x))) return false;
      }
      const prev = this.previous(e.seq);
      if (prev === undefined) return this.hashes.has(e.seq) ? this.pin(e.seq, e.hash, "fork", this.hashes) : this.fail(e.seq, "gap");
      if (e.prev !== prev) return this.fail(e.seq, "prev");
      return this.pin(e.seq, e.hash, "fork", this.hashes);
    }
    fail(seq, reason) {
      if (this.stale()) return false;
      this.broken = true;
      // Not awaited: the page's answer (a reload) feeds this queue again.
      setTimeout(() => this.onBreak({seq, reason}), 0);
      return false;
    }
  }

  // A hand's latest receipt, kept by the browser (the audit page lists them): one key per hand,
  // replaced only by a receipt of a later seq.
  const receiptKey = hand => `academie.receipt.${hand}`;
  function keepReceipt(receipt) {
    if (!receipt || typeof receipt.hand !== "string" || !Number.isInteger(receipt.seq)) return;
    let held = null;
    try { held = JSON.parse(localStorage.getItem(receiptKey(receipt.hand))); } catch (e) { held = null; }
    if (held && held.seq >= receipt.seq) return;
    localStorage.setItem(receiptKey(receipt.hand), JSON.stringify(receipt));
  }

  window.AcademieChain = {canonical, shownHash, Follower, keepReceipt, receiptKey};
})();
