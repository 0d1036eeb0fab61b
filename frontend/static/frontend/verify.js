// The hand record checked in the browser, independently of the server (docs/HAND_RECORD.md):
// the seed against its commitment, the deck re-derived from the seed, the first dealer, and the
// hash chain of the events. WebCrypto's SHA-256 and BigInt; no library.
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
    const next = stream(seed);
    const deck = canonicalDeck(record.game);
    for (let i = deck.length - 1; i >= 1; i--) {
      const j = await uniform(next, i + 1);
      [deck[i], deck[j]] = [deck[j], deck[i]];
    }
    const firstDiff = deck.findIndex((c, i) => c !== (record.deck || [])[i]);
    check("deck", firstDiff === -1 && deck.length === (record.deck || []).length,
          firstDiff === -1 ? "" : `card ${firstDiff}: ${record.deck[firstDiff]} ≠ ${deck[firstDiff]}`);
    if (record.number === 1) {
      const dealer = await uniform(next, record.seats.length);
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
