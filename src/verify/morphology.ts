/**
 * Pixel operations for locating signatures: shrinking, background flattening, binarisation and ruling-line
 * removal. All work on flat typed arrays in one or two passes per step, so a 1 MP working copy costs a few
 * milliseconds per step.
 */
import type { Box, Raster } from "./types";

/** Average `factor` x `factor` blocks of a region of the raster (integer factor, so one read per source pixel). */
export function shrink(src: Raster, factor: number, region?: Box): Raster {
  const rx = region?.x ?? 0,
    ry = region?.y ?? 0;
  const rw = region?.w ?? src.width,
    rh = region?.h ?? src.height;
  const w = Math.max(1, Math.floor(rw / factor)),
    h = Math.max(1, Math.floor(rh / factor));
  const out = new Uint8Array(w * h);
  if (factor === 1) {
    for (let y = 0; y < h; y++) out.set(src.data.subarray((ry + y) * src.width + rx, (ry + y) * src.width + rx + w), y * w);
    return { width: w, height: h, data: out };
  }
  const acc = new Uint32Array(w);
  const area = factor * factor,
    half = area >> 1;
  for (let y = 0; y < h; y++) {
    acc.fill(0);
    for (let dy = 0; dy < factor; dy++) {
      let i = (ry + y * factor + dy) * src.width + rx;
      for (let x = 0; x < w; x++) {
        let s = 0;
        for (let dx = 0; dx < factor; dx++) s += src.data[i++];
        acc[x] += s;
      }
    }
    const row = y * w;
    for (let x = 0; x < w; x++) out[row + x] = (acc[x] + half) / area;
  }
  return { width: w, height: h, data: out };
}

/**
 * The working copy shrink(fullPage, factor, region) would give, taken from a copy of the page decoded at
 * 1/scale (the scaled JPEG decode): `factor` and `region` are in full-page pixels, so the output has the
 * same size. Each output pixel is the area-weighted mean of the scaled pixels its footprint covers
 * (partial pixels at its edges count by the share covered). When factor and region divide by scale, it is
 * a plain shrink of the scaled copy.
 */
export function shrinkScaled(src: Raster, factor: number, region: Box, scale: number): Raster {
  if (scale === 1) return shrink(src, factor, region);
  const f = factor / scale;
  if (Number.isInteger(f) && region.x % scale === 0 && region.y % scale === 0) {
    const w = Math.max(1, Math.floor(region.w / factor)),
      h = Math.max(1, Math.floor(region.h / factor));
    return shrink(src, f, { x: region.x / scale, y: region.y / scale, w: w * f, h: h * f });
  }
  const w = Math.max(1, Math.floor(region.w / factor)),
    h = Math.max(1, Math.floor(region.h / factor));
  if (f === 1.5 && Number.isInteger(region.x / scale) && Number.isInteger(region.y / scale)) {
    return shrinkThreeHalves(src, region.x / scale, region.y / scale, w, h);
  }
  const taps = Math.ceil(f) + 1;
  // Per output column (row): the scaled pixels it covers and the share of each.
  const footprint = (origin: number, n: number, limit: number) => {
    const idx = new Int32Array(n * taps);
    const wt = new Float32Array(n * taps);
    for (let o = 0; o < n; o++) {
      const a = origin + o * f,
        b = a + f;
      for (let t = 0, i = Math.floor(a); t < taps && i < b; t++, i++) {
        idx[o * taps + t] = Math.min(limit - 1, Math.max(0, i));
        wt[o * taps + t] = Math.min(b, i + 1) - Math.max(a, i);
      }
    }
    return { idx, wt };
  };
  const xs = footprint(region.x / scale, w, src.width);
  const ys = footprint(region.y / scale, h, src.height);
  // Two passes: every source row the output needs is reduced along x once (rows are shared by
  // neighbouring output rows), then the reduced rows are combined down each column.
  let r0 = src.height,
    r1 = 0;
  for (let k = 0; k < ys.idx.length; k++)
    if (ys.wt[k] > 0) {
      r0 = Math.min(r0, ys.idx[k]);
      r1 = Math.max(r1, ys.idx[k] + 1);
    }
  const rowsX = new Float32Array(Math.max(0, r1 - r0) * w);
  const data = src.data;
  for (let r = r0; r < r1; r++) {
    const base = r * src.width;
    const o = (r - r0) * w;
    for (let x = 0, k = 0; x < w; x++) {
      let sum = 0;
      for (let t = 0; t < taps; t++, k++) sum += data[base + xs.idx[k]] * xs.wt[k];
      rowsX[o + x] = sum;
    }
  }
  const out = new Uint8Array(w * h);
  const acc = new Float32Array(w);
  const norm = 1 / (f * f);
  for (let y = 0; y < h; y++) {
    acc.fill(0);
    for (let t = 0; t < taps; t++) {
      const wy = ys.wt[y * taps + t];
      if (wy === 0) continue;
      const o = (ys.idx[y * taps + t] - r0) * w;
      for (let x = 0; x < w; x++) acc[x] += rowsX[o + x] * wy;
    }
    const row = y * w;
    for (let x = 0; x < w; x++) out[row + x] = Math.round(acc[x] * norm);
  }
  return { width: w, height: h, data: out };
}

/**
 * shrinkScaled at 1.5 (say factor 3 from a page decoded at 1/2, or 6 from one at 1/4), in
 * integers: every two output pixels cover three source pixels with weights (1, 1/2) and (1/2, 1), doubled
 * here, so a pixel is the weighted sum over 9.
 */
function shrinkThreeHalves(src: Raster, x0: number, y0: number, w: number, h: number): Raster {
  const sw = src.width;
  const data = src.data;
  const maxX = sw - 1;
  const maxY = src.height - 1;
  const rowsNeeded = Math.ceil(h * 1.5) + 1;
  const rowsX = new Uint16Array(rowsNeeded * w);
  for (let r = 0; r < rowsNeeded; r++) {
    const base = Math.min(maxY, y0 + r) * sw;
    const o = r * w;
    for (let x = 0; x < w; x += 2) {
      const i = x0 + (x >> 1) * 3;
      const a = data[base + Math.min(maxX, i)];
      const b = data[base + Math.min(maxX, i + 1)];
      rowsX[o + x] = 2 * a + b;
      if (x + 1 < w) rowsX[o + x + 1] = b + 2 * data[base + Math.min(maxX, i + 2)];
    }
  }
  const out = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    const k = (y >> 1) * 3;
    // Even rows: 2 * row k + row k+1; odd rows: row k+1 + 2 * row k+2.
    const p = (y & 1 ? k + 1 : k) * w;
    const q = (y & 1 ? k + 2 : k + 1) * w;
    const row = y * w;
    if (y & 1) for (let x = 0; x < w; x++) out[row + x] = ((rowsX[p + x] + 2 * rowsX[q + x]) * 2 + 9) / 18;
    else for (let x = 0; x < w; x++) out[row + x] = ((2 * rowsX[p + x] + rowsX[q + x]) * 2 + 9) / 18;
  }
  return { width: w, height: h, data: out };
}

/**
 * Running max (or min) over a window of 2r+1 along each row, in constant time per pixel (van Herk /
 * Gil-Werman). A min is a max of inverted values, so one loop serves both. Columns are done as rows of
 * the transposed image: walking memory in order is several times faster than striding down columns.
 */
function rowExtreme(src: Uint8Array, dst: Uint8Array, w: number, h: number, r: number, max: boolean): void {
  const k = 2 * r + 1;
  const n = w + 2 * r;
  const flip = max ? 0 : 255;
  // Padding reads as "no ink" for a min and "no paper" for a max: 0 after flipping either way.
  // p holds the padded row; g the running max from each block start, hh from each block end.
  const p = new Uint8Array(n),
    g = new Uint8Array(n),
    hh = new Uint8Array(n);
  const lastPhase = (n - 1) % k;
  for (let y = 0; y < h; y++) {
    const base = y * w;
    let run = 0;
    for (let j = 0, phase = 0; j < n; j++) {
      const i = j - r;
      const v = i >= 0 && i < w ? src[base + i] ^ flip : 0;
      p[j] = v;
      run = phase === 0 || v > run ? v : run;
      g[j] = run;
      if (++phase === k) phase = 0;
    }
    run = 0;
    for (let j = n - 1, phase = lastPhase; j >= 0; j--) {
      const v = p[j];
      run = phase === k - 1 || j === n - 1 || v > run ? v : run;
      hh[j] = run;
      if (j < w) {
        const b = g[j + k - 1];
        dst[base + j] = (run > b ? run : b) ^ flip;
      }
      if (--phase < 0) phase = k - 1;
    }
  }
}

function transpose(src: Uint8Array, w: number, h: number): Uint8Array {
  const out = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    const row = y * w;
    for (let x = 0; x < w; x++) out[x * h + y] = src[row + x];
  }
  return out;
}

/** Grey closing (max filter, then min filter) with a square window: erases dark marks thinner than 2r+1. */
export function closeGrey(img: Raster, r: number): Raster {
  const { width: w, height: h } = img;
  const a = new Uint8Array(w * h);
  rowExtreme(img.data, a, w, h, r, true);
  const t = transpose(a, w, h),
    u = new Uint8Array(w * h);
  rowExtreme(t, u, h, w, r, true);
  rowExtreme(u, t, h, w, r, false);
  const back = transpose(t, h, w);
  rowExtreme(back, a, w, h, r, false);
  return { width: w, height: h, data: a };
}

/**
 * Divide out the paper: estimate the background (a closing on a half-size copy, so ink strokes and
 * print vanish but shadows, gradients and a dark table around the page remain), then rescale every
 * pixel so that paper reads 255. Uneven light in a phone photo becomes a flat page.
 */
export function flattenBackground(img: Raster, strokeRadius: number): Raster {
  const { width: w, height: h } = img;
  const bg = closeGrey(shrink(img, 2), Math.max(2, Math.round(strokeRadius / 2)));
  const bw = bg.width,
    bh = bg.height,
    b = bg.data,
    d = img.data;
  const off = offPage(bg);
  const out = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    const brow = Math.min(bh - 1, y >> 1) * bw,
      base = y * w;
    for (let x = 0; x < w; x++) {
      const k = brow + Math.min(bw - 1, x >> 1);
      const v = d[base + x],
        p = b[k];
      out[base + x] = p <= v || off[k] ? 255 : v * RECIPROCAL_255[p];
    }
  }
  return { width: w, height: h, data: out };
}

/**
 * Where the background is far darker than the paper (the table around a photographed page, a solid
 * black block), and a little way round it: no ink is read there, so the paper's edge does not become a
 * stroke. The paper level is the background's median, as most of any document is paper.
 */
function offPage(bg: Raster): Uint8Array {
  const { width: w, height: h, data } = bg;
  const hist = new Uint32Array(256);
  for (let i = 0; i < data.length; i++) hist[data[i]]++;
  let median = 255;
  for (let t = 0, acc = 0; t < 256; t++) {
    if ((acc += hist[t]) >= data.length / 2) {
      median = t;
      break;
    }
  }
  const dark = 0.6 * median;
  const out = new Uint8Array(w * h);
  const reach = 2;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      if (data[y * w + x] >= dark) continue;
      for (let yy = Math.max(0, y - reach); yy <= Math.min(h - 1, y + reach); yy++)
        out.fill(1, yy * w + Math.max(0, x - reach), yy * w + Math.min(w, x + reach + 1));
    }
  }
  return out;
}

/** 255 / b for every grey level b, so that flattening multiplies instead of dividing. */
const RECIPROCAL_255 = Float32Array.from({ length: 256 }, (_, b) => 255 / Math.max(1, b));

/** Otsu's threshold over a grey histogram. */
export function otsu(data: Uint8Array): number {
  const hist = new Float64Array(256);
  for (let i = 0; i < data.length; i++) hist[data[i]]++;
  let total = 0,
    sum = 0;
  for (let t = 0; t < 256; t++) {
    total += hist[t];
    sum += t * hist[t];
  }
  let wB = 0,
    sumB = 0,
    best = 0,
    thr = 128;
  for (let t = 0; t < 256; t++) {
    wB += hist[t];
    if (wB === 0) continue;
    const wF = total - wB;
    if (wF === 0) break;
    sumB += t * hist[t];
    const mB = sumB / wB,
      mF = (sum - sumB) / wF;
    const between = wB * wF * (mB - mF) * (mB - mF);
    if (between > best) {
      best = between;
      thr = t;
    }
  }
  return thr;
}

/**
 * Ink mask (1 = ink) of a flattened image. The threshold sits as high as the paper's noise allows (the
 * median is paper on any document; its spread comes from the median absolute deviation), so faint,
 * blurred strokes in a photo stay whole; a ceiling keeps antialiased halos from thickening every
 * stroke. Noisy paper (a phone sensor) is smoothed over 3x3 first: strokes are wider than that, grain
 * is not.
 */
export function binarise(flat: Raster, ceiling = 200): Uint8Array {
  const { grey, threshold } = inkThreshold(flat, ceiling);
  return threshold_(grey, threshold);
}

/** The grey image the threshold applies to (smoothed when the paper is noisy) and the threshold. */
export function inkThreshold(flat: Raster, ceiling = 200): { grey: Uint8Array; threshold: number; faint: number } {
  let d = flat.data;
  let [median, mad] = medianAndMad(d);
  if (mad >= 3) {
    d = boxSmooth3(flat);
    [median, mad] = medianAndMad(d);
  }
  const noiseFloor = median - Math.max(25, 4.5 * 1.4826 * mad);
  const threshold = Math.min(ceiling, noiseFloor > 60 ? noiseFloor : Math.max(60, otsu(d)));
  return { grey: d, threshold, faint: Math.max(threshold, noiseFloor) };
}

/**
 * 1 where the grey level is at or below `strong`, and where it is at or below `weak` and 8-connected
 * through such pixels to one at or below `strong`: faint ink is kept where it continues real ink, and
 * paper grain as dark as it, which is not attached to a stroke, is not. Linear in the image's size.
 */
export function hysteresis(grey: Uint8Array, w: number, h: number, strong: number, weak: number): Uint8Array {
  const out = threshold_(grey, strong);
  if (weak <= strong) return out;
  const stack = new Int32Array(grey.length);
  let top = 0;
  for (let i = 0; i < out.length; i++) if (out[i]) stack[top++] = i;
  while (top > 0) {
    const i = stack[--top];
    const x = i % w,
      y = (i - x) / w;
    for (let dy = -1; dy <= 1; dy++) {
      const yy = y + dy;
      if (yy < 0 || yy >= h) continue;
      for (let dx = -1; dx <= 1; dx++) {
        const xx = x + dx;
        if (xx < 0 || xx >= w) continue;
        const j = yy * w + xx;
        // Each pixel is pushed at most once (it is marked before it is pushed), so the stack never overflows.
        if (!out[j] && grey[j] <= weak) {
          out[j] = 1;
          stack[top++] = j;
        }
      }
    }
  }
  return out;
}

/** 1 where the grey level is at or below the threshold. */
export function threshold_(grey: Uint8Array, t: number): Uint8Array {
  const out = new Uint8Array(grey.length);
  for (let i = 0; i < out.length; i++) out[i] = grey[i] <= t ? 1 : 0;
  return out;
}

function medianAndMad(d: Uint8Array): [number, number] {
  const hist = new Uint32Array(256);
  for (let i = 0; i < d.length; i++) hist[d[i]]++;
  const half = d.length / 2;
  let median = 255;
  for (let t = 0, acc = 0; t < 256; t++) {
    if ((acc += hist[t]) >= half) {
      median = t;
      break;
    }
  }
  const dev = new Uint32Array(256);
  for (let t = 0; t < 256; t++) dev[Math.abs(t - median)] += hist[t];
  let mad = 0;
  for (let t = 0, acc = 0; t < 256; t++) {
    if ((acc += dev[t]) >= half) {
      mad = t;
      break;
    }
  }
  return [median, mad];
}

const NINTH = 1 / 9;

function boxSmooth3(img: Raster): Uint8Array {
  const { width: w, height: h, data } = img;
  const rows = new Uint16Array(w * h),
    out = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    const r = y * w;
    for (let x = 0; x < w; x++) rows[r + x] = data[r + Math.max(0, x - 1)] + data[r + x] + data[r + Math.min(w - 1, x + 1)];
  }
  for (let y = 0; y < h; y++) {
    const up = Math.max(0, y - 1) * w,
      r = y * w,
      down = Math.min(h - 1, y + 1) * w;
    for (let x = 0; x < w; x++) out[r + x] = ((rows[up + x] + rows[r + x] + rows[down + x]) * NINTH + 0.5) | 0;
  }
  return out;
}

/**
 * Remove ruling lines: thin ink in horizontal runs at least `minH` long or vertical runs at least `minV`
 * long. Runs are measured on the mask thickened by one pixel across the line, so a line tilted by a
 * degree or two in a photo still reads as one run. Only thin runs count: most of the run no thicker
 * than `maxThick` across, or thin over at least the minimum length in all. A pen stroke can be long and
 * straight too, but it is rarely that thin at once; the second test keeps a rule that handwriting
 * follows for part of its length (a signature's letters sitting on the line they were signed on, blurred
 * into it by a phone photo) from counting as one thick stroke, which would join the line to the
 * signature and stretch its box to the line's ends. Like an opening with long line kernels, in one pass
 * per direction. Returns the pixels removed (1 where a rule's ink was).
 */
export function removeRulingLines(mask: Uint8Array, w: number, h: number, minH: number, minV: number, maxThick = 3): Uint8Array {
  const kill = new Uint8Array(mask.length);
  if (minH > 0 && minH <= w) {
    for (let y = 0; y < h; y++) {
      const up = Math.max(0, y - 1) * w,
        mid = y * w,
        down = Math.min(h - 1, y + 1) * w;
      let start = -1;
      for (let x = 0; x <= w; x++) {
        const on = x < w && (mask[up + x] | mask[mid + x] | mask[down + x]) === 1;
        if (on && start < 0) start = x;
        else if (!on && start >= 0) {
          if (x - start >= minH && thin(mask, mid + start, x - start, 1, w, mask.length, maxThick, minH))
            kill.fill(1, mid + start, mid + x);
          start = -1;
        }
      }
    }
  }
  if (minV > 0 && minV <= h) {
    // Scanned row by row, with a run start per column, so memory is walked in order.
    const start = new Int32Array(w).fill(-1);
    for (let y = 0; y <= h; y++) {
      const row = y * w;
      for (let x = 0; x < w; x++) {
        const on = y < h && (mask[row + x] | (x > 0 ? mask[row + x - 1] : 0) | (x < w - 1 ? mask[row + x + 1] : 0)) === 1;
        if (on) {
          if (start[x] < 0) start[x] = y;
        } else if (start[x] >= 0) {
          const s0 = start[x];
          if (y - s0 >= minV && thin(mask, s0 * w + x, y - s0, w, 1, w, maxThick, minV)) {
            for (let yy = s0; yy < y; yy++) kill[yy * w + x] = 1;
          }
          start[x] = -1;
        }
      }
    }
  }
  // What was taken: ink under the kill runs only.
  for (let i = 0; i < mask.length; i++) {
    kill[i] &= mask[i];
    mask[i] ^= kill[i];
  }
  return kill;
}

/**
 * Most ink pixels along a run are thin across it, or at least `minThin` of them are: the ink through
 * each, counted across the run (`across` is the step perpendicular to it), stops within maxThick.
 * `limit` bounds the across walk (the mask length for vertical walks, the row width for horizontal ones).
 */
function thin(
  mask: Uint8Array,
  at: number,
  len: number,
  step: number,
  across: number,
  limit: number,
  maxThick: number,
  minThin: number,
): boolean {
  let ink = 0,
    ok = 0;
  const horizontalWalk = across === 1;
  for (let k = 0; k < len; k++, at += step) {
    if (!mask[at]) continue;
    ink++;
    let n = 1;
    const rowStart = horizontalWalk ? at - (at % limit) : 0;
    const rowEnd = horizontalWalk ? rowStart + limit : limit;
    for (let p = at - across; p >= rowStart && mask[p] && n <= maxThick; p -= across) n++;
    for (let p = at + across; p < rowEnd && mask[p] && n <= maxThick; p += across) n++;
    if (n <= maxThick) ok++;
  }
  return ink > 0 && (ok >= 0.7 * ink || ok >= minThin);
}
