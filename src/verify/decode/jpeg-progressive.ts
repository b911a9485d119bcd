/**
 * Progressive JPEG, luma only: the luma coefficients are gathered over the scans (two bytes per pixel) and
 * transformed once at the end. DC scans that interleave chroma are read to stay in step; AC scans of chroma
 * (always single-component) are skipped whole.
 */
import { VerifyError } from "../types";
import { BitReader, ZIGZAG, extend, finishTarget, placeBlock, type BlockTarget, type Component, type Frame } from "./jpeg-entropy";

/** Progressive pages hold their coefficients until the last scan: bounded tighter than baseline ones. */
export const PROGRESSIVE_MAX_PIXELS = 20_000_000;

export interface Coefficients {
  data: Int16Array;
  /** Blocks per row in storage (whole MCUs) and rows of blocks. */
  stride: number;
  rows: number;
  eobrun: number;
}

export function newCoefficients(f: Frame, luma: Component): Coefficients {
  const stride = Math.ceil(f.width / (8 * f.hmax)) * luma.h;
  const rows = Math.ceil(f.height / (8 * f.vmax)) * luma.v;
  return { data: new Int16Array(stride * rows * 64), stride, rows, eobrun: 0 };
}

export interface Spectral {
  ss: number;
  se: number;
  ah: number;
  al: number;
}

export function progressiveScan(
  b: Uint8Array,
  start: number,
  scan: Component[],
  luma: Component,
  s: Spectral,
  f: Frame,
  st: Coefficients,
): number {
  const bits = new BitReader(b, start);
  const single = scan.length === 1;
  if (!single && s.ss !== 0) throw new VerifyError("corrupt_file", "the progressive JPEG interleaves an AC scan");
  const compW = Math.ceil(Math.ceil((f.width * luma.h) / f.hmax) / 8);
  const compH = Math.ceil(Math.ceil((f.height * luma.v) / f.vmax) / 8);
  const mcuX = single ? compW : Math.ceil(f.width / (8 * f.hmax));
  const mcuY = single ? compH : Math.ceil(f.height / (8 * f.vmax));
  const total = mcuX * mcuY;
  const scratch = new Int16Array(64);
  st.eobrun = 0;
  let sinceRestart = 0;
  for (let m = 0; m < total; m++) {
    if (f.restartInterval && sinceRestart === f.restartInterval) {
      bits.restart();
      for (const c of scan) c.pred = 0;
      st.eobrun = 0;
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
          let block: Int16Array;
          if (c === luma) {
            const col = single ? mx : mx * c.h + bx;
            const row = single ? my : my * c.v + by;
            block = st.data.subarray((row * st.stride + col) * 64, (row * st.stride + col) * 64 + 64);
          } else {
            scratch.fill(0);
            block = scratch;
          }
          if (s.ss === 0) dcScan(bits, c, s, block);
          else if (s.ah === 0) acFirst(bits, c, s, block, st);
          else acRefine(bits, c, s, block, st);
        }
      }
    }
    if (bits.overrun > 4) throw new VerifyError("corrupt_file", "the JPEG's image data ends early (truncated)");
  }
  return bits.end();
}

function dcScan(bits: BitReader, c: Component, s: Spectral, block: Int16Array): void {
  if (s.ah === 0) {
    const t = bits.decode(c.dc!);
    if (t > 11) throw new VerifyError("corrupt_file", "the JPEG's entropy-coded data is damaged");
    c.pred += t ? extend(bits.bits(t), t) : 0;
    block[0] = c.pred * (1 << s.al);
  } else if (bits.bits(1)) {
    block[0] |= 1 << s.al;
  }
}

function acFirst(bits: BitReader, c: Component, s: Spectral, block: Int16Array, st: Coefficients): void {
  if (st.eobrun > 0) {
    st.eobrun--;
    return;
  }
  for (let k = s.ss; k <= s.se; ) {
    const rs = bits.decode(c.ac!);
    const r = rs >> 4;
    const size = rs & 15;
    if (size === 0) {
      if (r < 15) {
        st.eobrun = (1 << r) - 1 + (r ? bits.bits(r) : 0);
        return;
      }
      k += 16;
      continue;
    }
    k += r;
    if (k > 63) throw new VerifyError("corrupt_file", "the JPEG's entropy-coded data is damaged");
    block[ZIGZAG[k]] = extend(bits.bits(size), size) * (1 << s.al);
    k++;
  }
}

/** Successive approximation of AC coefficients: one more bit for those already set, new ones of +-1. */
function acRefine(bits: BitReader, c: Component, s: Spectral, block: Int16Array, st: Coefficients): void {
  const p1 = 1 << s.al;
  const m1 = -1 << s.al;
  const refine = (z: number) => {
    if (bits.bits(1) && (block[z] & p1) === 0) block[z] += block[z] >= 0 ? p1 : m1;
  };
  let k = s.ss;
  if (st.eobrun <= 0) {
    while (k <= s.se) {
      const rs = bits.decode(c.ac!);
      let r = rs >> 4;
      const size = rs & 15;
      let value = 0;
      if (size === 0) {
        if (r < 15) {
          st.eobrun = (1 << r) + (r ? bits.bits(r) : 0);
          break; // the rest of the band is refined below, as part of the end-of-band run
        }
        // r = 15: sixteen zero coefficients pass (refining the non-zero ones on the way).
      } else {
        value = bits.bits(1) ? p1 : m1;
      }
      while (k <= s.se) {
        const z = ZIGZAG[k++];
        if (block[z] !== 0) refine(z);
        else {
          if (r === 0) {
            if (value) block[z] = value;
            break;
          }
          r--;
        }
      }
    }
  }
  if (st.eobrun > 0) {
    for (; k <= s.se; k++) {
      const z = ZIGZAG[k];
      if (block[z] !== 0) refine(z);
    }
    st.eobrun--;
  }
}

/**
 * Dequantise and transform the luma blocks into the target: every block for the page (at the target's
 * scale), or only the blocks a window covers.
 */
export function finishProgressive(st: Coefficients, q: Int32Array, f: Frame, t: BlockTarget): void {
  const qn = new Float32Array(64);
  for (let k = 0; k < 64; k++) qn[ZIGZAG[k]] = q[k];
  const coef = new Float32Array(64);
  const tmp = new Float32Array(64);
  const cols = Math.min(Math.ceil(f.width / 8), st.stride);
  const rows = Math.min(Math.ceil(f.height / 8), st.rows);
  const windowed = t.scale === 1 && (t.cropX !== 0 || t.cropY !== 0 || t.width !== f.width || t.height !== f.height);
  const bx0 = windowed ? Math.floor(t.cropX / 8) : 0;
  const by0 = windowed ? Math.floor(t.cropY / 8) : 0;
  const bx1 = windowed ? Math.min(cols, Math.ceil((t.cropX + t.width) / 8)) : cols;
  const by1 = windowed ? Math.min(rows, Math.ceil((t.cropY + t.height) / 8)) : rows;
  for (let by = by0; by < by1; by++) {
    for (let bx = bx0; bx < bx1; bx++) {
      const o = (by * st.stride + bx) * 64;
      let dcOnly = true;
      for (let i = 0; i < 64; i++) {
        const v = st.data[o + i];
        coef[i] = v * qn[i];
        if (i > 0 && v !== 0) dcOnly = false;
      }
      placeBlock(t, coef, tmp, dcOnly, bx, by);
    }
  }
  finishTarget(t, cols, rows);
}
