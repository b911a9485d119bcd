/**
 * A JPEG decoder (8-bit Huffman, baseline and progressive) that produces only the luma channel, which is
 * the grey image: chroma is entropy-decoded to keep the bit stream in step, but never transformed or
 * stored, and scans holding only chroma are skipped. Memory is the page itself (one byte per pixel) plus a
 * block, or plus the luma coefficients (two bytes per pixel) for progressive files; photon would hold RGB
 * and RGBA copies (about eight bytes per pixel) in WASM memory it never returns.
 *
 * Returns null for what it does not handle (12-bit, lossless or arithmetic coding, RGB or CMYK colour,
 * unusual sampling), so the caller can fall back to photon under a tighter pixel bound.
 */
import { VerifyError, type Box, type Raster } from "../types";
import {
  BitReader,
  ZIGZAG,
  buildHuffman,
  extend,
  finishTarget,
  placeBlock,
  type BitState,
  type BlockTarget,
  type Component,
  type Frame,
  type Huffman,
  type IdctScale,
} from "./jpeg-entropy";
import { PROGRESSIVE_MAX_PIXELS, finishProgressive, newCoefficients, progressiveScan, type Coefficients } from "./jpeg-progressive";

/** A luma decode: the whole page at 1/scale, or (scale 1) one window of the full-resolution page. */
export interface LumaJob {
  scale: IdctScale;
  /** A window of the full page, in page pixels, inside the page (scale 1 only). */
  crop?: Box;
  /** Baseline: resume at this MCU row (a checkpoint the page decode recorded) instead of the scan start. */
  resume?: RowCheckpoint;
  /** Baseline: record a checkpoint at the start of every MCU row of the luma scan. */
  checkpoints?: RowCheckpoint[];
}

/** The decoder's state at the start of one MCU row of the luma scan: enough to start decoding there. */
export interface RowCheckpoint {
  /** MCU row, and the first row of luma blocks it holds. */
  row: number;
  blockRow: number;
  bits: BitState;
  /** DC predictors of the scan's components, in scan order. */
  preds: number[];
  sinceRestart: number;
}

export interface LumaResult {
  raster: Raster;
  /** Full-resolution size of the page. */
  width: number;
  height: number;
  progressive: boolean;
  /** Progressive: the luma coefficients, kept so windows can be transformed without decoding again. */
  coefficients?: { data: Coefficients; q: Int32Array; frame: Frame };
}

export function decodeJpegLuma(b: Uint8Array): Raster | null {
  return decodeJpegLumaJob(b, { scale: 1 })?.raster ?? null;
}

/** Output size of a page decoded at 1/scale (partial blocks round up, as libjpeg's scaled decode does). */
export function scaledSize(width: number, height: number, scale: IdctScale): { width: number; height: number } {
  return { width: Math.ceil(width / scale), height: Math.ceil(height / scale) };
}

export function decodeJpegLumaJob(b: Uint8Array, job: LumaJob, keepCoefficients = false): LumaResult | null {
  const qt: (Int32Array | undefined)[] = [];
  const dcTables: (Huffman | undefined)[] = [];
  const acTables: (Huffman | undefined)[] = [];
  let comps: Component[] = [];
  let width = 0;
  let height = 0;
  let restartInterval = 0;
  let adobeTransform = -1;
  let out: Uint8Array | undefined;
  let target: BlockTarget | undefined;
  let lumaDone = false;
  let progressive = false;
  let coefficients: Coefficients | undefined;
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
    } else if (marker === 0xc0 || marker === 0xc1 || marker === 0xc2) {
      if (seg[0] !== 8) return null; // 12-bit
      progressive = marker === 0xc2;
      height = (seg[1] << 8) | seg[2];
      width = (seg[3] << 8) | seg[4];
      const n = seg[5];
      comps = [];
      for (let i = 0; i < n; i++)
        comps.push({ id: seg[6 + 3 * i], h: seg[7 + 3 * i] >> 4, v: seg[7 + 3 * i] & 15, tq: seg[8 + 3 * i], pred: 0 });
      if (n !== 1 && n !== 3) return null;
      if (comps.some((c) => c.h < 1 || c.h > 4 || c.v < 1 || c.v > 4))
        throw new VerifyError("corrupt_file", "the JPEG declares invalid sampling factors");
    } else if (marker >= 0xc2 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return null; // lossless, hierarchical, arithmetic
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
      const spectral = { ss: seg[1 + 2 * ns], se: seg[2 + 2 * ns], ah: seg[3 + 2 * ns] >> 4, al: seg[3 + 2 * ns] & 15 };
      const start = o + len;
      if (!scan.includes(luma)) {
        // A chroma-only scan: nothing of it reaches the grey image.
        o = new BitReader(b, start).end();
        continue;
      }
      const frame: Frame = { width, height, hmax, vmax, restartInterval };
      if (progressive) {
        const needDc = spectral.ss === 0 && spectral.ah === 0;
        for (const c of scan)
          if ((needDc && !c.dc) || (spectral.ss > 0 && !c.ac))
            throw new VerifyError("corrupt_file", "the JPEG's scan uses an undefined Huffman table");
        if (spectral.se > 63 || spectral.ss > spectral.se)
          throw new VerifyError("corrupt_file", "the JPEG's scan has an invalid spectral band");
        if (width * height > PROGRESSIVE_MAX_PIXELS) {
          throw new VerifyError(
            "too_many_pixels",
            `progressive JPEGs are decoded up to ${PROGRESSIVE_MAX_PIXELS} pixels (this one is ${width}x${height})`,
          );
        }
        coefficients ??= newCoefficients(frame, luma);
        o = progressiveScan(b, start, scan, luma, spectral, frame, coefficients);
        lumaDone = true;
        continue;
      }
      for (const c of scan) if (!c.dc || !c.ac) throw new VerifyError("corrupt_file", "the JPEG's scan uses an undefined Huffman table");
      const q = qt[luma.tq];
      if (!q) throw new VerifyError("corrupt_file", "the JPEG's quantisation table is missing");
      target ??= newTarget(width, height, job);
      out = target.out;
      o = decodeScan(b, start, scan, luma, q, frame, target, job);
      lumaDone = true;
      // A window needs nothing after the luma scan (baseline codes each component in one scan only).
      if (job.crop) break;
      continue;
    }
    o += len;
  }
  if (progressive && coefficients) {
    const q = qt[comps[0].tq];
    if (!q) throw new VerifyError("corrupt_file", "the JPEG's quantisation table is missing");
    const hmax = Math.max(...comps.map((c) => c.h));
    const vmax = Math.max(...comps.map((c) => c.v));
    target = newTarget(width, height, job);
    out = target.out;
    const frame = { width, height, hmax, vmax, restartInterval };
    finishProgressive(coefficients, q, frame, target);
    if (!lumaDone) throw new VerifyError("corrupt_file", "the JPEG holds no image data");
    return {
      raster: { width: target.width, height: target.height, data: out },
      width,
      height,
      progressive,
      ...(keepCoefficients ? { coefficients: { data: coefficients, q, frame } } : {}),
    };
  }
  if (!lumaDone || !out || !target) throw new VerifyError("corrupt_file", "the JPEG holds no image data");
  return { raster: { width: target.width, height: target.height, data: out }, width, height, progressive };
}

/** The output of a job; its size is known from the frame header, before any pixel is decoded. */
export function newTarget(width: number, height: number, job: LumaJob): BlockTarget {
  if (job.crop) {
    const c = job.crop;
    return { scale: 1, out: new Uint8Array(c.w * c.h), width: c.w, height: c.h, cropX: c.x, cropY: c.y };
  }
  const sz = scaledSize(width, height, job.scale);
  const n = sz.width * sz.height;
  const straddles = 8 % job.scale !== 0;
  return {
    scale: job.scale,
    out: new Uint8Array(n),
    width: sz.width,
    height: sz.height,
    cropX: 0,
    cropY: 0,
    ...(straddles ? { acc: new Float32Array(n) } : {}),
  };
}

function decodeScan(
  b: Uint8Array,
  start: number,
  scan: Component[],
  luma: Component,
  q: Int32Array,
  f: Frame,
  t: BlockTarget,
  job: LumaJob,
): number {
  const bits = new BitReader(b, start);
  const coef = new Float32Array(64);
  const tmp = new Float32Array(64);
  const single = scan.length === 1;
  // A single-component scan codes that component's blocks one by one (MCU = one block).
  const mcuX = single ? Math.ceil(Math.ceil((f.width * luma.h) / f.hmax) / 8) : Math.ceil(f.width / (8 * f.hmax));
  const mcuY = single ? Math.ceil(Math.ceil((f.height * luma.v) / f.vmax) / 8) : Math.ceil(f.height / (8 * f.vmax));
  const total = mcuX * mcuY;
  const blocksX = Math.ceil(f.width / 8);
  const blocksY = Math.ceil(f.height / 8);
  // A window: the block columns and rows it covers, and the MCU row after which nothing more is needed.
  const crop = job.crop;
  const bx0 = crop ? Math.floor(crop.x / 8) : 0;
  const bx1 = crop ? Math.ceil((crop.x + crop.w) / 8) : blocksX;
  const by0 = crop ? Math.floor(crop.y / 8) : 0;
  const by1 = crop ? Math.ceil((crop.y + crop.h) / 8) : blocksY;
  const rowBlocks = single ? 1 : luma.v;
  const lastRow = crop ? Math.min(mcuY - 1, Math.floor((by1 - 1) / rowBlocks)) : mcuY - 1;
  let sinceRestart = 0;
  let m0 = 0;
  if (job.resume) {
    bits.load(job.resume.bits);
    scan.forEach((c, i) => (c.pred = job.resume!.preds[i] ?? 0));
    sinceRestart = job.resume.sinceRestart;
    m0 = job.resume.row * mcuX;
  }
  const mEnd = Math.min(total, (lastRow + 1) * mcuX);
  for (let m = m0; m < mEnd; m++) {
    if (f.restartInterval && sinceRestart === f.restartInterval) {
      bits.restart();
      for (const c of scan) c.pred = 0;
      sinceRestart = 0;
    }
    const mx = m % mcuX;
    const my = (m / mcuX) | 0;
    if (mx === 0 && job.checkpoints)
      job.checkpoints.push({ row: my, blockRow: my * rowBlocks, bits: bits.save(), preds: scan.map((c) => c.pred), sinceRestart });
    sinceRestart++;
    for (const c of scan) {
      const bh = single ? 1 : c.h;
      const bv = single ? 1 : c.v;
      for (let by = 0; by < bv; by++) {
        for (let bx = 0; bx < bh; bx++) {
          if (c === luma) {
            const dcOnly = decodeBlock(bits, c, q, coef);
            const col = single ? mx : mx * c.h + bx;
            const row = single ? my : my * c.v + by;
            if (col < bx1 && row < by1 && col >= bx0 && row >= by0) placeBlock(t, coef, tmp, dcOnly, col, row);
          } else skipBlock(bits, c);
        }
      }
    }
    if (bits.overrun > 4) throw new VerifyError("corrupt_file", "the JPEG's image data ends early (truncated)");
  }
  finishTarget(t, blocksX, blocksY);
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
