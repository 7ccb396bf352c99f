// A small seeded generator of numbers in [0, 1) (mulberry32), so a seed replays the same plan:
// the crash and storm harnesses' kill points, the benchmark's handler order.

/** `next()` in [0, 1); `int(lo, hi)` inclusive; `pick(xs)`; `shuffle(xs)` in place (Fisher–Yates). */
export function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const shuffle = (xs) => {
    for (let i = xs.length - 1; i > 0; i -= 1) {
      const j = Math.floor(next() * (i + 1));
      [xs[i], xs[j]] = [xs[j], xs[i]];
    }
    return xs;
  };
  return { next, int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)), pick: (xs) => xs[Math.floor(next() * xs.length)], shuffle };
}
