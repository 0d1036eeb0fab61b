// The hand record checked in the browser, independently of the server (docs/HAND_RECORD.md):
// the seed against its commitment, the deck re-derived from the seed (and in version 2 the
// players' shares), the first dealer, and the hash chain of the events. WebCrypto's SHA-256 and BigInt; no library.
"use strict";
(function () {
  const hex = bytes => Array.from(new Uint8Array(bytes), b => b.toString(16).padStart(2, "0")).join("");
  const fromHex = text => new Uint8Array(text.match(/../g).map(h => parseInt(h, 16)));
  const sha256 = async bytes => new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  const utf8 = text => new TextEncoder().encode(text);

  // Canonical JSON: keys sorted at every level, no spaces, non-ASCII as raw UTF-8.
  function canonical(value) {
    if (Array.isArray(value)) return "[" + value.map(canonical).join(",") + "]";
    if (value !== null && typeof value === "object") {
      return "{" + Object.keys(value).sort().map(k => JSON.stringify(k) + ":" + canonical(value[k])).join(",") + "}";
    }
    return JSON.stringify(value);
  }

  // The random stream: sha256(seed || i) for i = 0, 1, …, read as 8-byte big-endian integers.
  function stream(seedBytes) {
    let block = new Uint8Array(0), at = 0, counter = 0n;
    return async function next() {
      if (at + 8 > block.length) {
        const input = new Uint8Array(seedBytes.length + 8);
        input.set(seedBytes);
        new DataView(input.buffer).setBigUint64(seedBytes.length, counter);
        counter += 1n;
        block = await sha256(input);
        at = 0;
      }
      const u = new DataView(block.buffer).getBigUint64(at);
      at += 8;
      return u;
    };
  }
  async function uniform(next, m) {
    const big = BigInt(m), span = 1n << 64n, limit = span - (span % big);
    let u = await next();
    while (u >= limit) u = await next();
    return Number(u % big);
  }
  function canonicalDeck(game) {
    const deck = [];
    for (const s of "CDHS") for (const r of "A23456789TJQK") deck.push(r + s);
    return game === "comet" ? deck.filter(c => c !== "8D") : deck;
  }

  async function verifyRecord(record) {
    const checks = [];
    const check = (name, ok, detail) => checks.push({check: name, ok, detail: detail || ""});
    const seed = fromHex(record.seed);
    check("commitment", hex(await sha256(seed)) === record.commitment,
          "sha256(seed) = commitment");
    const v2 = record.format === "academie.hand/2";
    let next = stream(seed);
    if (v2) {
      // Version 2: the shares in the record are exactly those the deal event names, each as
      // its share event sent it; the deck is shuffled under K = sha256(seed || seat byte ||
      // share ...), the contributors in ascending seat order.
      const shares = record.shares || [];
      const sent = {};
      record.events.filter(e => e.type === "share").forEach(e => { sent[e.seat] = e.share; });
      const deal = record.events.find(e => e.type === "deal");
      const named = deal ? deal.contributors : null;
      const seats = shares.map(s => s.seat);
      const sharesOk = !!named && seats.join() === named.join()
        && seats.every((s, i) => i === 0 || seats[i - 1] < s)
        && shares.every(s => /^[0-9a-f]{64}$/.test(s.share) && sent[s.seat] === s.share);
      check("shares", sharesOk, sharesOk ? "" : "shares ≠ contributors");
      const material = new Uint8Array(seed.length + 33 * shares.length);
      material.set(seed);
      shares.forEach((s, i) => {
        material[seed.length + 33 * i] = s.seat;
        material.set(fromHex(s.share), seed.length + 33 * i + 1);
      });
      next = stream(await sha256(material));
    }
    const deck = canonicalDeck(record.game);
    for (let i = deck.length - 1; i >= 1; i--) {
      const j = await uniform(next, i + 1);
      [deck[i], deck[j]] = [deck[j], deck[i]];
    }
    const firstDiff = deck.findIndex((c, i) => c !== (record.deck || [])[i]);
    check("deck", firstDiff === -1 && deck.length === (record.deck || []).length,
          firstDiff === -1 ? "" : `card ${firstDiff}: ${record.deck[firstDiff]} ≠ ${deck[firstDiff]}`);
    if (record.number === 1) {
      // Version 1 draws the first dealer after the shuffle, in the same stream; version 2
      // draws it first in the seed's own stream, known before any share.
      const dealer = await uniform(v2 ? stream(seed) : next, record.seats.length);
      check("dealer", dealer === record.dealer, `seat ${dealer}`);
    }
    let prev = record.commitment, broken = null;
    for (const event of record.events) {
      const {hash, ...rest} = event;
      const computed = hex(await sha256(utf8(canonical(rest))));
      if (event.prev !== prev || computed !== hash) { broken = event.seq; break; }
      prev = hash;
    }
    check("chain", broken === null, broken === null ? "" : `event ${broken}`);
    const last = record.events[record.events.length - 1];
    check("digest", broken === null && !!last && last.hash === record.digest, "");
    return checks;
  }
  window.verifyRecord = verifyRecord;
})();
