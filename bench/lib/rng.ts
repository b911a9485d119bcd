// The benches' seeded generator: the same seed gives the same sequence on every run, so a stressed rendering
// or a bootstrap can be repeated exactly. Kept apart from render.ts, which loads the image codecs.

export type Rng = () => number;

/** mulberry32 from a 32-bit seed. */
export function mulberry32(seed: number): Rng {
  let a = seed | 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** mulberry32 seeded by FNV-1a of the key. */
export function rngFor(key: string): Rng {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return mulberry32(h);
}
