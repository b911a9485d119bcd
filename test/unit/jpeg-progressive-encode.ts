/**
 * A small progressive JPEG encoder for tests (grey, one component): DC in two steps (successive
 * approximation) and AC in two spectral bands. Flat quantisation and fixed-length Huffman codes keep it
 * short; the files are valid JPEGs that photon reads too, which the tests use as the reference reading.
 */
import type { Raster } from "../../src/verify/types";

const ZIGZAG = [
  0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28, 35, 42, 49, 56, 57,
  50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
];
const AC_SYMBOLS = [0x00, 0xf0];
for (let r = 0; r < 16; r++) for (let s = 1; s <= 10; s++) AC_SYMBOLS.push((r << 4) | s);

class Bits {
  bytes: number[] = [];
  #acc = 0;
  #n = 0;
  put(value: number, n: number) {
    for (let i = n - 1; i >= 0; i--) {
      this.#acc = (this.#acc << 1) | ((value >> i) & 1);
      if (++this.#n === 8) this.#flush();
    }
  }
  #flush() {
    this.bytes.push(this.#acc);
    if (this.#acc === 0xff) this.bytes.push(0);
    this.#acc = 0;
    this.#n = 0;
  }
  end(): number[] {
    while (this.#n !== 0) this.put(1, 1);
    return this.bytes;
  }
}

function category(v: number): number {
  let a = Math.abs(v);
  let s = 0;
  while (a) {
    s++;
    a >>= 1;
  }
  return s;
}

function putValue(b: Bits, v: number, s: number) {
  if (s) b.put(v > 0 ? v : v + (1 << s) - 1, s);
}

export function encodeProgressiveJpeg(r: Raster, q = 6): Uint8Array {
  const bw = Math.ceil(r.width / 8);
  const bh = Math.ceil(r.height / 8);
  const blocks: Int32Array[] = [];
  for (let by = 0; by < bh; by++) {
    for (let bx = 0; bx < bw; bx++) {
      const f = (x: number, y: number) => r.data[Math.min(r.height - 1, by * 8 + y) * r.width + Math.min(r.width - 1, bx * 8 + x)] - 128;
      const out = new Int32Array(64);
      for (let v = 0; v < 8; v++) {
        for (let u = 0; u < 8; u++) {
          let sum = 0;
          for (let y = 0; y < 8; y++)
            for (let x = 0; x < 8; x++)
              sum += f(x, y) * Math.cos(((2 * x + 1) * u * Math.PI) / 16) * Math.cos(((2 * y + 1) * v * Math.PI) / 16);
          const cu = u ? 1 : Math.SQRT1_2;
          const cv = v ? 1 : Math.SQRT1_2;
          out[v * 8 + u] = Math.round((0.25 * cu * cv * sum) / q);
        }
      }
      blocks.push(out);
    }
  }
  const seg = (marker: number, body: number[]) => [0xff, marker, (body.length + 2) >> 8, (body.length + 2) & 255, ...body];
  const sos = (ss: number, se: number, ah: number, al: number) => seg(0xda, [1, 1, 0x00, ss, se, (ah << 4) | al]);
  const file: number[] = [0xff, 0xd8];
  file.push(...seg(0xdb, [0, ...new Array(64).fill(q)]));
  file.push(...seg(0xc2, [8, r.height >> 8, r.height & 255, r.width >> 8, r.width & 255, 1, 1, 0x11, 0]));
  const dcCounts = new Array(16).fill(0);
  dcCounts[3] = 12; // twelve 4-bit codes for categories 0..11
  file.push(...seg(0xc4, [0x00, ...dcCounts, ...Array.from({ length: 12 }, (_, i) => i)]));
  const acCounts = new Array(16).fill(0);
  acCounts[7] = AC_SYMBOLS.length; // every AC symbol an 8-bit code
  file.push(...seg(0xc4, [0x10, ...acCounts, ...AC_SYMBOLS]));
  const acCode = (sym: number) => AC_SYMBOLS.indexOf(sym);

  // Scan 1: DC, first pass at half precision (point transform 1).
  let b = new Bits();
  let pred = 0;
  for (const blk of blocks) {
    const v = blk[0] >> 1;
    const d = v - pred;
    pred = v;
    const s = category(d);
    b.put(s, 4);
    putValue(b, d, s);
  }
  file.push(...sos(0, 0, 0, 1), ...b.end());
  // Scans 2 and 3: AC bands 1..5 and 6..63, full precision; one end-of-band per block.
  for (const [ss, se] of [
    [1, 5],
    [6, 63],
  ]) {
    b = new Bits();
    for (const blk of blocks) {
      let run = 0;
      for (let k = ss; k <= se; k++) {
        const v = blk[ZIGZAG[k]];
        if (v === 0) {
          run++;
          continue;
        }
        while (run > 15) {
          b.put(acCode(0xf0), 8);
          run -= 16;
        }
        const s = category(v);
        b.put(acCode((run << 4) | s), 8);
        putValue(b, v, s);
        run = 0;
      }
      if (run > 0) b.put(acCode(0x00), 8);
    }
    file.push(...sos(ss, se, 0, 0), ...b.end());
  }
  // Scan 4: the DC's last bit.
  b = new Bits();
  for (const blk of blocks) b.put(blk[0] & 1, 1);
  file.push(...sos(0, 0, 1, 0), ...b.end());
  file.push(0xff, 0xd9);
  return new Uint8Array(file);
}
