/**
 * A baseline (sequential Huffman, 8-bit) JPEG decoder that produces only the luma channel, which is the
 * grey image: chroma is entropy-decoded to keep the bit stream in step, but never transformed or stored,
 * and scans holding only chroma are skipped. Memory is the page itself (one byte per pixel) plus a block;
 * photon would hold RGB and RGBA copies (about eight bytes per pixel) in WASM memory it never returns.
 *
 * Returns null for what it does not handle (progressive, 12-bit, RGB or CMYK colour, unusual sampling), so
 * the caller can fall back to photon under a tighter pixel bound.
 */
import { VerifyError, type Raster } from "../types";

const ZIGZAG = new Uint8Array([
  0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5, 12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28, 35, 42, 49, 56, 57,
  50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51, 58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
]);

/** IDCT basis: COS[x * 8 + u] = C(u)/2 * cos((2x + 1) u pi / 16). */
const COS = (() => {
  const t = new Float32Array(64);
  for (let x = 0; x < 8; x++) for (let u = 0; u < 8; u++) t[x * 8 + u] = ((u === 0 ? Math.SQRT1_2 : 1) / 2) * Math.cos(((2 * x + 1) * u * Math.PI) / 16);
  return t;
})();

interface Huffman {
  /** 9-bit lookahead: (length << 8) | symbol, or 0 when the code is longer. */
  fast: Uint16Array;
  maxcode: Int32Array; // per length 1..16, -1 when none
  valptr: Int32Array;
  mincode: Int32Array;
  symbols: Uint8Array;
}

interface Component {
  id: number;
  h: number;
  v: number;
  tq: number;
  pred: number;
  dc?: Huffman;
  ac?: Huffman;
}

const FAST_BITS = 9;

function buildHuffman(counts: Uint8Array, symbols: Uint8Array): Huffman {
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

/** Reads entropy-coded bits, undoing 0xFF00 stuffing and stopping at markers. */
class BitReader {
  pos: number;
  #acc = 0;
  #n = 0;
  marker = -1;
  overrun = 0;
  constructor(private readonly b: Uint8Array, start: number) {
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
      while (this.pos + 1 < this.b.length && !(this.b[this.pos] === 0xff && this.b[this.pos + 1] >= 0xd0 && this.b[this.pos + 1] <= 0xd7)) this.pos++;
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

function extend(v: number, t: number): number {
  return v < 1 << (t - 1) ? v - (1 << t) + 1 : v;
}

export function decodeJpegBaseline(b: Uint8Array): Raster | null {
  const qt: (Int32Array | undefined)[] = [];
  const dcTables: (Huffman | undefined)[] = [];
  const acTables: (Huffman | undefined)[] = [];
  let comps: Component[] = [];
  let width = 0;
  let height = 0;
  let restartInterval = 0;
  let adobeTransform = -1;
  let out: Uint8Array | undefined;
  let lumaDone = false;
  let o = 2;
  const need = (n: number) => {
    if (o + n > b.length) throw new VerifyError("corrupt_file", "the JPEG is truncated");
  };
  for (;;) {
    need(2);
    if (b[o] !== 0xff) throw new VerifyError("corrupt_file", "the JPEG has a malformed marker");
    const marker = b[o + 1];
    o += 2;
    if (marker === 0xff) {
      o--;
      continue;
    }
    if (marker === 0xd9) break;
    if (marker === 0xd8 || (marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) continue;
    need(2);
    const len = (b[o] << 8) | b[o + 1];
    need(len);
    const seg = b.subarray(o + 2, o + len);
    if (marker === 0xdb) {
      for (let p = 0; p < seg.length; ) {
        const pq = seg[p] >> 4;
        const tq = seg[p] & 15;
        const t = new Int32Array(64);
        for (let k = 0; k < 64; k++) t[k] = pq ? (seg[p + 1 + 2 * k] << 8) | seg[p + 2 + 2 * k] : seg[p + 1 + k];
        qt[tq] = t;
        p += 1 + (pq ? 128 : 64);
      }
    } else if (marker === 0xc4) {
      for (let p = 0; p < seg.length; ) {
        const tc = seg[p] >> 4;
        const th = seg[p] & 15;
        const counts = seg.subarray(p + 1, p + 17);
        let n = 0;
        for (let i = 0; i < 16; i++) n += counts[i];
        if (p + 17 + n > seg.length) throw new VerifyError("corrupt_file", "the JPEG has a truncated Huffman table");
        const h = buildHuffman(counts, seg.subarray(p + 17, p + 17 + n));
        (tc === 0 ? dcTables : acTables)[th] = h;
        p += 17 + n;
      }
    } else if (marker === 0xc0 || marker === 0xc1) {
      if (seg[0] !== 8) return null; // 12-bit
      height = (seg[1] << 8) | seg[2];
      width = (seg[3] << 8) | seg[4];
      const n = seg[5];
      comps = [];
      for (let i = 0; i < n; i++) comps.push({ id: seg[6 + 3 * i], h: seg[7 + 3 * i] >> 4, v: seg[7 + 3 * i] & 15, tq: seg[8 + 3 * i], pred: 0 });
      if (n !== 1 && n !== 3) return null;
      if (comps.some((c) => c.h < 1 || c.h > 4 || c.v < 1 || c.v > 4)) throw new VerifyError("corrupt_file", "the JPEG declares invalid sampling factors");
    } else if (marker >= 0xc2 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return null; // progressive, lossless, arithmetic
    } else if (marker === 0xdd) {
      restartInterval = (seg[0] << 8) | seg[1];
    } else if (marker === 0xee && seg.length >= 12 && String.fromCharCode(...seg.subarray(0, 5)) === "Adobe") {
      adobeTransform = seg[11];
    } else if (marker === 0xda) {
      if (comps.length === 0) throw new VerifyError("corrupt_file", "the JPEG's scan comes before its frame header");
      if (comps.length === 3 && (adobeTransform === 0 || (comps[0].id === 0x52 && comps[1].id === 0x47))) return null; // RGB
      const hmax = Math.max(...comps.map((c) => c.h));
      const vmax = Math.max(...comps.map((c) => c.v));
      const luma = comps[0];
      if (luma.h !== hmax || luma.v !== vmax) return null;
      const ns = seg[0];
      const scan: Component[] = [];
      for (let i = 0; i < ns; i++) {
        const c = comps.find((x) => x.id === seg[1 + 2 * i]);
        if (!c) throw new VerifyError("corrupt_file", "the JPEG's scan names an unknown component");
        c.dc = dcTables[seg[2 + 2 * i] >> 4];
        c.ac = acTables[seg[2 + 2 * i] & 15];
        c.pred = 0;
        scan.push(c);
      }
      const start = o + len;
      if (!scan.includes(luma)) {
        // A chroma-only scan: nothing of it reaches the grey image.
        o = new BitReader(b, start).end();
        continue;
      }
      for (const c of scan) if (!c.dc || !c.ac) throw new VerifyError("corrupt_file", "the JPEG's scan uses an undefined Huffman table");
      const q = qt[luma.tq];
      if (!q) throw new VerifyError("corrupt_file", "the JPEG's quantisation table is missing");
      out ??= new Uint8Array(width * height);
      o = decodeScan(b, start, scan, luma, q, { width, height, hmax, vmax, restartInterval }, out);
      lumaDone = true;
      continue;
    }
    o += len;
  }
  if (!lumaDone || !out) throw new VerifyError("corrupt_file", "the JPEG holds no image data");
  return { width, height, data: out };
}

interface Frame {
  width: number;
  height: number;
  hmax: number;
  vmax: number;
  restartInterval: number;
}

function decodeScan(b: Uint8Array, start: number, scan: Component[], luma: Component, q: Int32Array, f: Frame, out: Uint8Array): number {
  const bits = new BitReader(b, start);
  const coef = new Float32Array(64);
  const tmp = new Float32Array(64);
  const single = scan.length === 1;
  // A single-component scan codes that component's blocks one by one (MCU = one block).
  const mcuX = single ? Math.ceil(Math.ceil((f.width * luma.h) / f.hmax) / 8) : Math.ceil(f.width / (8 * f.hmax));
  const mcuY = single ? Math.ceil(Math.ceil((f.height * luma.v) / f.vmax) / 8) : Math.ceil(f.height / (8 * f.vmax));
  const total = mcuX * mcuY;
  let sinceRestart = 0;
  for (let m = 0; m < total; m++) {
    if (f.restartInterval && sinceRestart === f.restartInterval) {
      bits.restart();
      for (const c of scan) c.pred = 0;
      sinceRestart = 0;
    }
    sinceRestart++;
    const mx = m % mcuX;
    const my = (m / mcuX) | 0;
    for (const c of scan) {
      const bh = single ? 1 : c.h;
      const bv = single ? 1 : c.v;
      for (let by = 0; by < bv; by++) {
        for (let bx = 0; bx < bh; bx++) {
          if (c === luma) {
            const dcOnly = decodeBlock(bits, c, q, coef);
            const x0 = (single ? mx : mx * c.h + bx) * 8;
            const y0 = (single ? my : my * c.v + by) * 8;
            if (x0 < f.width && y0 < f.height) writeBlock(coef, tmp, dcOnly, out, x0, y0, f.width, f.height);
          } else skipBlock(bits, c);
        }
      }
    }
    if (bits.overrun > 4) throw new VerifyError("corrupt_file", "the JPEG's image data ends early (truncated)");
  }
  return bits.end();
}

/** Entropy-decode and dequantise one block into natural order; true when only DC is set. */
function decodeBlock(bits: BitReader, c: Component, q: Int32Array, coef: Float32Array): boolean {
  coef.fill(0);
  const t = bits.decode(c.dc!);
  if (t > 11) throw new VerifyError("corrupt_file", "the JPEG's entropy-coded data is damaged");
  c.pred += t ? extend(bits.bits(t), t) : 0;
  coef[0] = c.pred * q[0];
  let dcOnly = true;
  for (let k = 1; k < 64; ) {
    const rs = bits.decode(c.ac!);
    const r = rs >> 4;
    const s = rs & 15;
    if (s === 0) {
      if (r === 15) {
        k += 16;
        continue;
      }
      break;
    }
    k += r;
    if (k > 63) throw new VerifyError("corrupt_file", "the JPEG's entropy-coded data is damaged");
    coef[ZIGZAG[k]] = extend(bits.bits(s), s) * q[k];
    dcOnly = false;
    k++;
  }
  return dcOnly;
}

function skipBlock(bits: BitReader, c: Component): void {
  const t = bits.decode(c.dc!);
  if (t > 11) throw new VerifyError("corrupt_file", "the JPEG's entropy-coded data is damaged");
  bits.bits(t);
  for (let k = 1; k < 64; ) {
    const rs = bits.decode(c.ac!);
    const s = rs & 15;
    if (s === 0) {
      if (rs >> 4 === 15) {
        k += 16;
        continue;
      }
      break;
    }
    k += (rs >> 4) + 1;
    bits.bits(s);
  }
}

/** Separable 8x8 inverse DCT, level shift, clamp, and copy the visible part into the page. */
function writeBlock(coef: Float32Array, tmp: Float32Array, dcOnly: boolean, out: Uint8Array, x0: number, y0: number, w: number, h: number): void {
  const xn = Math.min(8, w - x0);
  const yn = Math.min(8, h - y0);
  if (dcOnly) {
    const v = clamp(coef[0] / 8 + 128);
    for (let y = 0; y < yn; y++) out.fill(v, (y0 + y) * w + x0, (y0 + y) * w + x0 + xn);
    return;
  }
  // Rows: tmp[v*8 + x] = sum_u COS[x*8+u] * coef[v*8+u]; an all-zero row stays zero.
  for (let v = 0; v < 8; v++) {
    const r = v * 8;
    let any = false;
    for (let u = 0; u < 8; u++) if (coef[r + u] !== 0) any = true;
    if (!any) {
      for (let x = 0; x < 8; x++) tmp[r + x] = 0;
      continue;
    }
    for (let x = 0; x < 8; x++) {
      const cx = x * 8;
      tmp[r + x] =
        COS[cx] * coef[r] +
        COS[cx + 1] * coef[r + 1] +
        COS[cx + 2] * coef[r + 2] +
        COS[cx + 3] * coef[r + 3] +
        COS[cx + 4] * coef[r + 4] +
        COS[cx + 5] * coef[r + 5] +
        COS[cx + 6] * coef[r + 6] +
        COS[cx + 7] * coef[r + 7];
    }
  }
  // Columns.
  for (let y = 0; y < yn; y++) {
    const cy = y * 8;
    const row = (y0 + y) * w + x0;
    for (let x = 0; x < xn; x++) {
      const v =
        COS[cy] * tmp[x] +
        COS[cy + 1] * tmp[8 + x] +
        COS[cy + 2] * tmp[16 + x] +
        COS[cy + 3] * tmp[24 + x] +
        COS[cy + 4] * tmp[32 + x] +
        COS[cy + 5] * tmp[40 + x] +
        COS[cy + 6] * tmp[48 + x] +
        COS[cy + 7] * tmp[56 + x];
      out[row + x] = clamp(v + 128);
    }
  }
}

function clamp(v: number): number {
  return v <= 0 ? 0 : v >= 255 ? 255 : Math.round(v);
}
