/**
 * The parts of JPEG decoding shared by the baseline and progressive luma decoders: Huffman tables, the
 * entropy-coded bit reader, and the 8x8 inverse DCT into the page.
 */
import { VerifyError } from "../types";

export const ZIGZAG = new Uint8Array([
  0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28, 35, 42, 49, 56, 57,
  50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
]);

/** IDCT basis: COS[x * 8 + u] = C(u)/2 * cos((2x + 1) u pi / 16). */
const COS = (() => {
  const t = new Float32Array(64);
  for (let x = 0; x < 8; x++)
    for (let u = 0; u < 8; u++) t[x * 8 + u] = ((u === 0 ? Math.SQRT1_2 : 1) / 2) * Math.cos(((2 * x + 1) * u * Math.PI) / 16);
  return t;
})();

/**
 * Output scale of the inverse DCT: every output pixel is the mean of a scale x scale square of the full
 * page. At 2, 4 and 8 one 8x8 block becomes (8 / scale) x (8 / scale) pixels; at 3, 5, 6 and 7 the squares
 * straddle block edges and each block adds its share to the pixels it touches (accumulateBlock).
 */
export type IdctScale = 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8;

/**
 * Scaled IDCT bases: SCALED[s][x * 8 + u] is the mean of COS over the s source pixels that output pixel x
 * stands for. Applied to all 64 coefficients it gives exactly the s x s box average of the full 8x8 IDCT
 * (before rounding and clamping), at a fraction of the work: 4x4 outputs cost 384 multiply-adds, 2x2
 * outputs 160, against 1,024 for 8x8; at 1/8 only DC is left (every other basis averages to zero).
 */
const SCALED: Record<2 | 4, Float32Array> = (() => {
  const make = (s: number) => {
    const n = 8 / s;
    const t = new Float32Array(n * 8);
    for (let x = 0; x < n; x++)
      for (let u = 0; u < 8; u++) {
        let sum = 0;
        for (let k = 0; k < s; k++) sum += COS[(x * s + k) * 8 + u];
        t[x * 8 + u] = sum / s;
      }
    return t;
  };
  return { 2: make(2), 4: make(4) };
})();

/**
 * Box-average bases for a scale that does not divide 8: for a block whose first pixel sits at offset
 * `phase` = (8 * block) mod scale inside its output square, M[j * 8 + u] is the sum of COS over the block's
 * pixels that fall in the block's j-th output square, over scale (the other rows of the square come from
 * the neighbouring block); `count[j]` is how many pixels that is.
 */
interface StraddleBasis {
  n: number;
  M: Float32Array;
  count: Float32Array;
}
const STRADDLE = new Map<number, StraddleBasis[]>();
function straddleBases(scale: number): StraddleBasis[] {
  let bases = STRADDLE.get(scale);
  if (!bases) {
    bases = [];
    for (let phase = 0; phase < scale; phase++) {
      const n = Math.floor((phase + 7) / scale) + 1;
      const M = new Float32Array(n * 8);
      const count = new Float32Array(n);
      for (let x = 0; x < 8; x++) {
        const j = Math.floor((phase + x) / scale);
        count[j]++;
        for (let u = 0; u < 8; u++) M[j * 8 + u] += COS[x * 8 + u] / scale;
      }
      bases.push({ n, M, count });
    }
    STRADDLE.set(scale, bases);
  }
  return bases;
}

export interface Huffman {
  /** 9-bit lookahead: (length << 8) | symbol, or 0 when the code is longer. */
  fast: Uint16Array;
  maxcode: Int32Array; // per length 1..16, -1 when none
  valptr: Int32Array;
  mincode: Int32Array;
  symbols: Uint8Array;
}

export interface Component {
  id: number;
  h: number;
  v: number;
  tq: number;
  pred: number;
  dc?: Huffman;
  ac?: Huffman;
}

/** Frame geometry: luma is the first component and has the largest sampling factors. */
export interface Frame {
  width: number;
  height: number;
  hmax: number;
  vmax: number;
  restartInterval: number;
}

export const FAST_BITS = 9;

export function buildHuffman(counts: Uint8Array, symbols: Uint8Array): Huffman {
  const maxcode = new Int32Array(18).fill(-1);
  const valptr = new Int32Array(17);
  const mincode = new Int32Array(17);
  const fast = new Uint16Array(1 << FAST_BITS);
  let code = 0;
  let k = 0;
  for (let len = 1; len <= 16; len++) {
    valptr[len] = k;
    mincode[len] = code;
    for (let i = 0; i < counts[len - 1]; i++, k++, code++) {
      if (len <= FAST_BITS) {
        const shift = FAST_BITS - len;
        for (let j = 0; j < 1 << shift; j++) fast[(code << shift) | j] = (len << 8) | symbols[k];
      }
    }
    if (counts[len - 1] > 0) maxcode[len] = code - 1;
    if (code > 1 << len) throw new VerifyError("corrupt_file", "the JPEG has an invalid Huffman table");
    code <<= 1;
  }
  return { fast, maxcode, valptr, mincode, symbols };
}

export interface BitState {
  pos: number;
  acc: number;
  n: number;
  marker: number;
  overrun: number;
}

/** Reads entropy-coded bits, undoing 0xFF00 stuffing and stopping at markers. */
export class BitReader {
  pos: number;
  #acc = 0;
  #n = 0;
  marker = -1;
  overrun = 0;
  constructor(
    private readonly b: Uint8Array,
    start: number,
  ) {
    this.pos = start;
  }
  #fill(): void {
    while (this.#n <= 24) {
      let byte = 0;
      if (this.marker < 0 && this.pos < this.b.length) {
        byte = this.b[this.pos];
        if (byte === 0xff) {
          const next = this.b[this.pos + 1];
          if (next === 0) this.pos += 2;
          else {
            this.marker = next;
            byte = 0;
            this.overrun++;
          }
        } else this.pos++;
      } else this.overrun++;
      this.#acc = ((this.#acc << 8) | byte) >>> 0;
      this.#n += 8;
    }
  }
  peek(n: number): number {
    if (this.#n < n) this.#fill();
    return (this.#acc >>> (this.#n - n)) & ((1 << n) - 1);
  }
  skip(n: number): void {
    this.#n -= n;
  }
  bits(n: number): number {
    if (n === 0) return 0;
    const v = this.peek(n);
    this.#n -= n;
    return v;
  }
  decode(h: Huffman): number {
    const look = h.fast[this.peek(FAST_BITS)];
    if (look !== 0) {
      this.#n -= look >> 8;
      return look & 0xff;
    }
    let code = this.bits(FAST_BITS);
    for (let len = FAST_BITS + 1; len <= 16; len++) {
      code = (code << 1) | this.bits(1);
      if (h.maxcode[len] >= 0 && code <= h.maxcode[len] && code >= h.mincode[len]) return h.symbols[h.valptr[len] + code - h.mincode[len]];
    }
    throw new VerifyError("corrupt_file", "the JPEG's entropy-coded data is damaged");
  }
  /** The reader's whole state, to resume decoding here later (crop decodes start at an MCU row). */
  save(): BitState {
    return { pos: this.pos, acc: this.#acc, n: this.#n, marker: this.marker, overrun: this.overrun };
  }
  load(st: BitState): void {
    this.pos = st.pos;
    this.#acc = st.acc;
    this.#n = st.n;
    this.marker = st.marker;
    this.overrun = st.overrun;
  }
  /** At a restart: drop the partial byte, expect RSTn. */
  restart(): void {
    this.#acc = 0;
    this.#n = 0;
    this.overrun = 0;
    if (this.marker >= 0xd0 && this.marker <= 0xd7) {
      this.pos += 2;
      this.marker = -1;
    } else if (this.marker < 0) {
      // The reader has not reached the marker yet: find it.
      while (this.pos + 1 < this.b.length && !(this.b[this.pos] === 0xff && this.b[this.pos + 1] >= 0xd0 && this.b[this.pos + 1] <= 0xd7))
        this.pos++;
      if (this.pos + 1 < this.b.length) this.pos += 2;
    }
  }
  /** Position of the next marker after the scan. */
  end(): number {
    let p = this.pos;
    while (p + 1 < this.b.length && !(this.b[p] === 0xff && this.b[p + 1] !== 0 && !(this.b[p + 1] >= 0xd0 && this.b[p + 1] <= 0xd7))) p++;
    return p;
  }
}

export function extend(v: number, t: number): number {
  return v < 1 << (t - 1) ? v - (1 << t) + 1 : v;
}

/** Separable 8x8 inverse DCT, level shift, clamp, and copy the visible part into the page. */
export function writeBlock(
  coef: Float32Array,
  tmp: Float32Array,
  dcOnly: boolean,
  out: Uint8Array,
  x0: number,
  y0: number,
  w: number,
  h: number,
): void {
  transformBlock(coef, tmp, dcOnly, COS, 8, out, x0, y0, w, h);
}

function clamp(v: number): number {
  return v <= 0 ? 0 : v >= 255 ? 255 : Math.round(v);
}

/**
 * One block at a reduced scale (2, 4 or 8): the s x s box average of what writeBlock would produce, written
 * at (x0, y0) of a page w x h that is already the scaled page. Rounding and clamping happen once, after the
 * average, so the result differs from averaging the full decode only where the full IDCT overshoots 0..255.
 */
export function writeBlockScaled(
  coef: Float32Array,
  tmp: Float32Array,
  dcOnly: boolean,
  scale: 2 | 4 | 8,
  out: Uint8Array,
  x0: number,
  y0: number,
  w: number,
  h: number,
): void {
  // At 1/8 only the DC term survives the average.
  transformBlock(coef, tmp, dcOnly || scale === 8, scale === 8 ? COS : SCALED[scale], 8 / scale, out, x0, y0, w, h);
}

/**
 * The separable transform both share: n output pixels per side from basis[x * 8 + u] (COS for the full
 * IDCT, SCALED for a reduced one), level shift and clamp, visible part only. A DC-only block is flat:
 * its value is the DC term's (every basis row averages to 1/8 of it).
 */
function transformBlock(
  coef: Float32Array,
  tmp: Float32Array,
  dcOnly: boolean,
  basis: Float32Array,
  n: number,
  out: Uint8Array,
  x0: number,
  y0: number,
  w: number,
  h: number,
): void {
  const xn = Math.min(n, w - x0);
  const yn = Math.min(n, h - y0);
  if (dcOnly) {
    const v = clamp(coef[0] / 8 + 128);
    for (let y = 0; y < yn; y++) out.fill(v, (y0 + y) * w + x0, (y0 + y) * w + x0 + xn);
    return;
  }
  rowPass(coef, tmp, basis, n);
  // Columns.
  for (let y = 0; y < yn; y++) {
    const by = y * 8;
    const row = (y0 + y) * w + x0;
    for (let x = 0; x < xn; x++) {
      const v =
        basis[by] * tmp[x] +
        basis[by + 1] * tmp[8 + x] +
        basis[by + 2] * tmp[16 + x] +
        basis[by + 3] * tmp[24 + x] +
        basis[by + 4] * tmp[32 + x] +
        basis[by + 5] * tmp[40 + x] +
        basis[by + 6] * tmp[48 + x] +
        basis[by + 7] * tmp[56 + x];
      out[row + x] = clamp(v + 128);
    }
  }
}

/**
 * The row half of a separable block transform: tmp[v*8 + x] = sum_u basis[x*8 + u] * coef[v*8 + u] for
 * the first n output columns (basis: COS, SCALED or a straddling scale's weights). All-zero rows, the
 * common case after quantisation, skip the products.
 */
function rowPass(coef: Float32Array, tmp: Float32Array, basis: Float32Array, n: number): void {
  for (let v = 0; v < 8; v++) {
    const r = v * 8;
    let any = false;
    for (let u = 0; u < 8; u++) if (coef[r + u] !== 0) any = true;
    if (!any) {
      for (let x = 0; x < n; x++) tmp[r + x] = 0;
      continue;
    }
    for (let x = 0; x < n; x++) {
      const bx = x * 8;
      tmp[r + x] =
        basis[bx] * coef[r] +
        basis[bx + 1] * coef[r + 1] +
        basis[bx + 2] * coef[r + 2] +
        basis[bx + 3] * coef[r + 3] +
        basis[bx + 4] * coef[r + 4] +
        basis[bx + 5] * coef[r + 5] +
        basis[bx + 6] * coef[r + 6] +
        basis[bx + 7] * coef[r + 7];
    }
  }
}

/**
 * Where a block lands in the output: the scaled page, or a crop window of the full-resolution page.
 */
export interface BlockTarget {
  scale: IdctScale;
  /** Output raster and its size. */
  out: Uint8Array;
  width: number;
  height: number;
  /** With a crop: the window's top-left in full-page pixels (scale is 1 then). */
  cropX: number;
  cropY: number;
  /** At a scale that does not divide 8: the sums of the output squares, before the level shift. */
  acc?: Float32Array;
}

/** Transform one dequantised block (natural order) into the target; bx, by are block column and row. */
export function placeBlock(t: BlockTarget, coef: Float32Array, tmp: Float32Array, dcOnly: boolean, bx: number, by: number): void {
  if (t.scale === 1) {
    const x0 = bx * 8 - t.cropX;
    const y0 = by * 8 - t.cropY;
    if (x0 >= t.width || y0 >= t.height || x0 <= -8 || y0 <= -8) return;
    if (x0 >= 0 && y0 >= 0) {
      writeBlock(coef, tmp, dcOnly, t.out, x0, y0, t.width, t.height);
      return;
    }
    // A block straddling the crop's top or left edge: transform into a scratch block, copy the part inside.
    const block = SCRATCH;
    writeBlock(coef, tmp, dcOnly, block, 0, 0, 8, 8);
    for (let y = Math.max(0, -y0); y < 8 && y0 + y < t.height; y++)
      for (let x = Math.max(0, -x0); x < 8 && x0 + x < t.width; x++) t.out[(y0 + y) * t.width + x0 + x] = block[y * 8 + x];
    return;
  }
  if (t.acc) {
    accumulateBlock(t, coef, tmp, dcOnly, bx, by);
    return;
  }
  const n = 8 / t.scale;
  const x0 = bx * n;
  const y0 = by * n;
  if (x0 < t.width && y0 < t.height) writeBlockScaled(coef, tmp, dcOnly, t.scale as 2 | 4 | 8, t.out, x0, y0, t.width, t.height);
}

/** A block's share of the output squares it touches, at a scale that does not divide 8. */
function accumulateBlock(t: BlockTarget, coef: Float32Array, tmp: Float32Array, dcOnly: boolean, bx: number, by: number): void {
  const s = t.scale;
  const bases = straddleBases(s);
  const X = bases[(8 * bx) % s];
  const Y = bases[(8 * by) % s];
  const x0 = Math.floor((8 * bx) / s);
  const y0 = Math.floor((8 * by) / s);
  const nx = Math.min(X.n, t.width - x0);
  const ny = Math.min(Y.n, t.height - y0);
  if (nx <= 0 || ny <= 0) return;
  const acc = t.acc!;
  const w = t.width;
  if (dcOnly) {
    // A flat block: each square gets the block's level times the share of it the block covers.
    const v = coef[0] / 8 / (s * s);
    for (let i = 0; i < ny; i++) for (let j = 0; j < nx; j++) acc[(y0 + i) * w + x0 + j] += v * X.count[j] * Y.count[i];
    return;
  }
  const MY = Y.M;
  rowPass(coef, tmp, X.M, nx);
  for (let i = 0; i < ny; i++) {
    const m = i * 8;
    const row = (y0 + i) * w + x0;
    for (let j = 0; j < nx; j++) {
      acc[row + j] +=
        MY[m] * tmp[j] +
        MY[m + 1] * tmp[8 + j] +
        MY[m + 2] * tmp[16 + j] +
        MY[m + 3] * tmp[24 + j] +
        MY[m + 4] * tmp[32 + j] +
        MY[m + 5] * tmp[40 + j] +
        MY[m + 6] * tmp[48 + j] +
        MY[m + 7] * tmp[56 + j];
    }
  }
}

/**
 * After the last block: the accumulated squares to pixels (level shift, round, clamp). A square at the
 * right or bottom edge that reaches past the last block is scaled up by the share it had.
 */
export function finishTarget(t: BlockTarget, blocksX: number, blocksY: number): void {
  const acc = t.acc;
  if (!acc) return;
  const s = t.scale;
  const w = t.width;
  const coveredX = Math.min(s, blocksX * 8 - (w - 1) * s);
  const coveredY = Math.min(s, blocksY * 8 - (t.height - 1) * s);
  for (let y = 0; y < t.height; y++) {
    const fy = y === t.height - 1 && coveredY > 0 ? s / coveredY : 1;
    const row = y * w;
    for (let x = 0; x < w; x++) {
      const f = x === w - 1 && coveredX > 0 ? fy * (s / coveredX) : fy;
      t.out[row + x] = clamp(acc[row + x] * f + 128);
    }
  }
  t.acc = undefined;
}

const SCRATCH = new Uint8Array(64);
