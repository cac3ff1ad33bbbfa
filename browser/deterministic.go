package browser

// DeterministicJS makes a page's clock and random numbers the same on every load (Target.
// Deterministic), so that a replayed page whose scripts build URLs from them asks for what was
// recorded more often (the idea of web-page-replay's deterministic.js, written anew): Math.random
// is a seeded mulberry32 generator (seed 0x9e3779b9, the same sequence in every document);
// crypto.getRandomValues fills from it; Date.now() and new Date() with no argument start at
// 2026-01-01T00:00:00Z and advance 1 ms per call. Date with arguments, Date.parse/UTC and the
// Performance API (which pltlab's timings read) are untouched. It is installed with
// Page.addScriptToEvaluateOnNewDocument, so it runs before any script of every document of
// the load, iframes included.
const DeterministicJS = `(() => {
  let s = 0x9e3779b9 >>> 0;
  const rnd = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  Math.random = rnd;
  if (self.crypto && crypto.getRandomValues) {
    crypto.getRandomValues = (a) => {
      const scale = 2 ** (8 * a.BYTES_PER_ELEMENT);
      for (let i = 0; i < a.length; i++) a[i] = typeof a[i] === 'bigint' ? BigInt(Math.floor(rnd() * 2 ** 32)) : Math.floor(rnd() * scale);
      return a;
    };
  }
  const D = Date;
  let now = D.UTC(2026, 0, 1);
  const next = () => now++;
  function PDate(...args) {
    if (!new.target) return new D(next()).toString();
    return args.length === 0 ? new D(next()) : new D(...args);
  }
  PDate.prototype = D.prototype;
  Object.defineProperty(D.prototype, 'constructor', { value: PDate, writable: true, configurable: true });
  PDate.now = next;
  PDate.parse = D.parse;
  PDate.UTC = D.UTC;
  self.Date = PDate;
})();`
