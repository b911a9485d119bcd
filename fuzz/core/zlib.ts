/** Synchronous zlib for the mutators (pako ships no types; src/verify/decode/pako.d.ts declares only Inflate). */
import pako from "pako";

const z = pako as unknown as {
  deflate(data: Uint8Array, opts?: { level?: number }): Uint8Array;
  inflate(data: Uint8Array): Uint8Array;
  Deflate: new (opts?: { level?: number }) => { push(data: Uint8Array, last: boolean): boolean; result: Uint8Array };
};

export function deflate(data: Uint8Array, level = 6): Uint8Array {
  return z.deflate(data, { level });
}

/** Inflates, or returns null for data that is not (or not only) zlib: the mutator then leaves it alone. */
export function inflateOrNull(data: Uint8Array, maxOut = 16 << 20): Uint8Array | null {
  try {
    const out = z.inflate(data);
    return out.length <= maxOut ? out : null;
  } catch {
    return null;
  }
}

const bombs = new Map<number, Uint8Array>();
const ZERO_BLOCK = new Uint8Array(1 << 20);

/**
 * zlib data inflating to `size` zero bytes (about 1,000 to 1), deflated block by block so the zeros are
 * never held; memoised, since a run reuses a handful of sizes.
 */
export function zeroBomb(size: number): Uint8Array {
  let got = bombs.get(size);
  if (!got) {
    const d = new z.Deflate({ level: 9 });
    for (let left = size; left > 0; left -= ZERO_BLOCK.length) d.push(left >= ZERO_BLOCK.length ? ZERO_BLOCK : ZERO_BLOCK.subarray(0, left), false);
    d.push(new Uint8Array(0), true);
    got = d.result;
    bombs.set(size, got);
  }
  return got;
}
