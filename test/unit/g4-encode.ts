/**
 * A CCITT Group 4 encoder for tests, and a one-page G4 TIFF writer. Cross-checked in the tests against
 * utif2's own G4 decoder, so the production decoder is not only checked against its own reading.
 */
import { g4Tables } from "../../src/verify/decode/g4";
import type { Raster } from "../../src/verify/types";

/** Changing elements of a bilevel row (true = black), the row starting white. */
function changes(row: boolean[]): number[] {
  const out: number[] = [];
  let prev = false;
  row.forEach((b, x) => {
    if (b !== prev) out.push(x);
    prev = b;
  });
  return out;
}

export function encodeG4(black: (x: number, y: number) => boolean, width: number, height: number): Uint8Array {
  const t = g4Tables();
  let bits = "";
  const run = (n: number, white: boolean) => {
    const codes = white ? t.whiteCodes : t.blackCodes;
    while (n >= 2560 + 64) {
      bits += codes.get(2560);
      n -= 2560;
    }
    if (n >= 64) {
      const m = Math.floor(n / 64) * 64;
      bits += codes.get(m);
      n -= m;
    }
    bits += codes.get(n);
  };
  const VERT: Record<number, string> = { 0: "1", 1: "011", [-1]: "010", 2: "000011", [-2]: "000010", 3: "0000011", [-3]: "0000010" };
  let ref: number[] = [];
  for (let y = 0; y < height; y++) {
    const cur = changes(Array.from({ length: width }, (_, x) => black(x, y)));
    let a0 = -1;
    let white = true;
    for (;;) {
      const a1 = cur.find((c) => c > a0) ?? width;
      const a2 = cur.find((c) => c > a1) ?? width;
      const bi = ref.findIndex((c, i) => c > a0 && (i & 1) === (white ? 0 : 1));
      const b1 = bi >= 0 ? ref[bi] : width;
      const b2 = bi >= 0 && bi + 1 < ref.length ? ref[bi + 1] : width;
      if (b2 < a1) {
        bits += "0001";
        a0 = b2;
      } else if (Math.abs(a1 - b1) <= 3) {
        bits += VERT[a1 - b1];
        a0 = a1;
        white = !white;
      } else {
        bits += "001";
        run(a1 - Math.max(a0, 0), white);
        run(a2 - a1, !white);
        a0 = a2;
      }
      if (a0 >= width) break;
    }
    ref = cur;
  }
  bits += "000000000001000000000001";
  const out = new Uint8Array(Math.ceil(bits.length / 8));
  for (let i = 0; i < bits.length; i++) if (bits[i] === "1") out[i >> 3] |= 0x80 >> (i & 7);
  return out;
}

/** A little-endian one-strip TIFF, compression 4, WhiteIsZero. */
export function g4Tiff(g4: Uint8Array, width: number, height: number, pages = 1): Uint8Array {
  const tags: [number, number, number][] = [
    [256, 4, width],
    [257, 4, height],
    [258, 3, 1],
    [259, 3, 4],
    [262, 3, 0],
    [273, 4, 0],
    [277, 3, 1],
    [278, 4, height],
    [279, 4, g4.length],
  ];
  const ifdSize = 2 + tags.length * 12 + 4;
  const out = new Uint8Array(8 + pages * (ifdSize + g4.length));
  const v = new DataView(out.buffer);
  out.set([0x49, 0x49, 0x2a, 0]);
  let at = 8;
  v.setUint32(4, at, true);
  for (let p = 0; p < pages; p++) {
    const dataOff = at + ifdSize;
    v.setUint16(at, tags.length, true);
    tags.forEach(([tag, type, value], i) => {
      const e = at + 2 + i * 12;
      v.setUint16(e, tag, true);
      v.setUint16(e + 2, type, true);
      v.setUint32(e + 4, 1, true);
      if (type === 3) v.setUint16(e + 8, value, true);
      else v.setUint32(e + 8, tag === 273 ? dataOff : value, true);
    });
    const next = dataOff + g4.length;
    v.setUint32(at + 2 + tags.length * 12, p + 1 < pages ? next : 0, true);
    out.set(g4, dataOff);
    at = next;
  }
  return out;
}

export function bilevel(r: Raster, threshold = 128): (x: number, y: number) => boolean {
  return (x, y) => r.data[y * r.width + x] < threshold;
}
