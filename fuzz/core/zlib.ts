/** Synchronous zlib for the mutators (pako ships no types; src/verify/decode/pako.d.ts declares only Inflate). */
import { concatBytes } from "../../src/util/bytes";
import pako from "pako";

const z = pako as unknown as {
  deflate(data: Uint8Array, opts?: { level?: number }): Uint8Array;
  Deflate: new (opts?: {
    level?: number;
    raw?: boolean;
  }) => { push(data: Uint8Array, mode: boolean | number): boolean; onData: (c: Uint8Array) => void; result: Uint8Array };
};

export function deflate(data: Uint8Array, level = 6): Uint8Array {
  return z.deflate(data, { level });
}

/** Inflates, or returns null for data that is not (or not only) zlib: the mutator then leaves it alone. */
export function inflateOrNull(data: Uint8Array, maxOut = 16 << 20): Uint8Array | null {
  // Stops as soon as the output passes maxOut: the inputs include the bombs the mutators made.
  const parts: Uint8Array[] = [];
  let total = 0;
  const inf = new pako.Inflate({ chunkSize: 1 << 16 });
  inf.onData = (c) => {
    total += c.length;
    if (total > maxOut) throw new RangeError("too large");
    parts.push(c);
  };
  try {
    inf.push(data, true);
  } catch {
    return null;
  }
  if (inf.err || !inf.ended) return null;
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const bombs = new Map<number, Uint8Array>();
const MiB = 1 << 20;
let zeroBlock: { first: Uint8Array; block: Uint8Array; tail: Uint8Array } | null = null;

/**
 * One raw-deflate block of 1 MiB of zeros, ended by a sync flush (byte-aligned). After the first, the
 * window is all zeros whatever came before, so every further MiB deflates to the same bytes; this is
 * checked, not assumed.
 */
function zeroMiBBlock(): { first: Uint8Array; block: Uint8Array; tail: Uint8Array } {
  if (zeroBlock) return zeroBlock;
  const d = new z.Deflate({ level: 9, raw: true });
  let got: Uint8Array[] = [];
  d.onData = (c) => got.push(c.slice());
  const take = () => {
    const out = concatBytes(got);
    got = [];
    return out;
  };
  d.push(new Uint8Array(MiB), 2); // Z_SYNC_FLUSH
  const first = take();
  d.push(new Uint8Array(MiB), 2);
  const block = take();
  d.push(new Uint8Array(MiB), 2);
  const again = take();
  if (again.length !== block.length || again.some((v, i) => v !== block[i])) throw new Error("deflate blocks of zeros differ");
  d.push(new Uint8Array(0), 4); // Z_FINISH: an empty final block
  zeroBlock = { first, block, tail: take() };
  return zeroBlock;
}

/**
 * zlib data inflating to `size` bytes of zeros (whole MiB; about 1,000 to 1): one deflated MiB block repeated, then the
 * final block and the Adler-32 of the zeros (A = 1, B = length mod 65521), so a 1 GiB bomb costs
 * milliseconds to make. Memoised.
 */
export function zeroBomb(size: number): Uint8Array {
  let got = bombs.get(size);
  if (!got) {
    const mib = Math.max(1, Math.round(size / MiB));
    const { first, block, tail } = zeroMiBBlock();
    const out = new Uint8Array(2 + first.length + block.length * (mib - 1) + tail.length + 4);
    out[0] = 0x78;
    out[1] = 0xda;
    out.set(first, 2);
    for (let i = 0; i < mib - 1; i++) out.set(block, 2 + first.length + i * block.length);
    out.set(tail, out.length - 4 - tail.length);
    const b = (mib * MiB) % 65521;
    const adler = ((b << 16) | 1) >>> 0;
    const at = out.length - 4;
    out[at] = adler >>> 24;
    out[at + 1] = (adler >>> 16) & 255;
    out[at + 2] = (adler >>> 8) & 255;
    out[at + 3] = adler & 255;
    got = out;
    bombs.set(size, got);
  }
  return got;
}
