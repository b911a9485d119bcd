/**
 * How blurred a located signature is, measured on its crop at the crop's own resolution: the width of its
 * sharpest edges. A phone photo out of focus widens every edge of every stroke; a sharp scan has many
 * edges a pixel or two wide, and softer ones too (corners, thin strokes, stroke ends), so the lower
 * quartile of the edge widths, not their median, tells them apart (bench/experiments/blur-measure.md, E27).
 *
 * An edge is a local maximum of the Sobel gradient across the stroke, whose local contrast (darkest within
 * PROFILE px on the ink side, lightest on the paper side) is at least half the crop's ink-to-paper
 * contrast; its width is the distance between 10% and 90% of that contrast along the gradient. Pixels are
 * the unit: the blurred regime compares features of the normalised image blurred by a fixed sigma
 * (compare.ts), so blur matters relative to the crop's pixels; a crop at a lower resolution has narrower
 * edges in its own pixels, never wider.
 */
import { otsu } from "./morphology";
import type { Raster } from "./types";

/**
 * Above this lower-quartile edge width (px) a capture is blurred. E27 chose it on the development images and
 * the fixture photos: every blurred (sigma 1.5 px) development image and 94 to 97% of the photos above it,
 * no sharp condition more than 1.9% (Dutch grey forgeries) above it.
 */
export const BLURRED_EDGE_WIDTH = 2.7;

/** Half-length of the profile across an edge, in pixels, and its sampling step. */
const PROFILE = 5;
const STEP = 0.25;
/** Least ink-to-paper contrast (grey levels) for edges to mean anything. */
const MIN_CONTRAST = 20;
/**
 * Edges are looked for on a lattice of at most about this many pixels (every k-th pixel of every k-th row,
 * k at least 2), the gradient computed only where it is needed: the quartile needs a thousand or so edges,
 * not every one, and the cost stays bounded whatever the crop's size.
 */
const LATTICE = 40_000;

/**
 * The lower quartile of the 10-90% edge widths, in the crop's pixels, or null when the crop has no ink
 * contrast or no edge to measure.
 */
export function edgeWidth(crop: Raster): number | null {
  const { width: W, height: H, data } = crop;
  if (W < 2 * PROFILE + 3 || H < 2 * PROFILE + 3) return null;
  const k = Math.max(2, Math.ceil(Math.sqrt((W * H) / LATTICE)));
  const lv = levels(data, W, H, k);
  const contrast = lv.paper - lv.ink;
  if (contrast < MIN_CONTRAST) return null;

  const minSlope = 0.1 * contrast;
  const grad = new Float64Array(2);
  const n = Math.round((2 * PROFILE) / STEP) + 1;
  const mid = (n - 1) / 2;
  const prof = new Float64Array(n);
  const widths: number[] = [];
  for (let y = PROFILE; y < H - PROFILE; y += k)
    for (let x = PROFILE; x < W - PROFILE; x += k) {
      const m = sobel(data, W, y * W + x, grad);
      if (m < minSlope) continue;
      const nx = grad[0] / m,
        ny = grad[1] / m;
      // A local maximum of the gradient across the edge: its middle, where the profile is read from.
      if (m < magnitudeAt(data, W, H, x + nx, y + ny) || m < magnitudeAt(data, W, H, x - nx, y - ny)) continue;
      // The profile runs from the ink side (darker, against the gradient) to the paper side.
      let lo = Number.POSITIVE_INFINITY,
        hi = Number.NEGATIVE_INFINITY;
      for (let s = 0; s < n; s++) {
        const t = (s - mid) * STEP;
        const v = bilinear(data, W, H, x + t * nx, y + t * ny);
        prof[s] = v;
        if (s <= mid && v < lo) lo = v;
        if (s >= mid && v > hi) hi = v;
      }
      const c = hi - lo;
      if (c < 0.5 * contrast) continue;
      const w = riseWidth(prof, mid, lo + 0.1 * c, lo + 0.9 * c);
      if (w !== null) widths.push(w);
    }
  if (widths.length === 0) return null;
  widths.sort((a, b) => a - b);
  const p = 0.25 * (widths.length - 1);
  const i = Math.floor(p);
  return i + 1 < widths.length ? widths[i] + (widths[i + 1] - widths[i]) * (p - i) : widths[i];
}

/** The Sobel gradient at pixel i (not on the border), divided by 8: grey levels per pixel. Writes (gx, gy) to out. */
function sobel(d: Uint8Array, W: number, i: number, out: Float64Array): number {
  const a = d[i - W - 1],
    b = d[i - W],
    c = d[i - W + 1],
    l = d[i - 1],
    r = d[i + 1],
    e = d[i + W - 1],
    f = d[i + W],
    g = d[i + W + 1];
  const gx = (c + 2 * r + g - a - 2 * l - e) / 8;
  const gy = (e + 2 * f + g - a - 2 * b - c) / 8;
  out[0] = gx;
  out[1] = gy;
  return Math.sqrt(gx * gx + gy * gy);
}

const scratch = new Float64Array(2);

/** The gradient's magnitude between pixel centres: bilinear over the four pixels around (x, y). */
function magnitudeAt(d: Uint8Array, W: number, H: number, x: number, y: number): number {
  x = Math.min(W - 2.001, Math.max(1, x));
  y = Math.min(H - 2.001, Math.max(1, y));
  const x0 = Math.floor(x),
    y0 = Math.floor(y),
    fx = x - x0,
    fy = y - y0,
    i = y0 * W + x0;
  const top = sobel(d, W, i, scratch) * (1 - fx) + sobel(d, W, i + 1, scratch) * fx;
  const bot = sobel(d, W, i + W, scratch) * (1 - fx) + sobel(d, W, i + W + 1, scratch) * fx;
  return top * (1 - fy) + bot * fy;
}

/**
 * Ink and paper levels of an Otsu split: the mean of the ink side, the median of the paper side; from
 * every k-th pixel of every k-th row.
 */
function levels(all: Uint8Array, W: number, H: number, k: number): { ink: number; paper: number } {
  const data = new Uint8Array(Math.ceil(W / k) * Math.ceil(H / k));
  let o = 0;
  for (let y = 0; y < H; y += k) for (let x = 0; x < W; x += k) data[o++] = all[y * W + x];
  const t = otsu(data);
  const hist = new Float64Array(256);
  let inkSum = 0,
    inkN = 0;
  for (let i = 0; i < data.length; i++) {
    const v = data[i];
    hist[v]++;
    if (v <= t) {
      inkSum += v;
      inkN++;
    }
  }
  const paperN = data.length - inkN;
  let acc = 0,
    paper = 255;
  for (let v = t + 1; v < 256; v++)
    if ((acc += hist[v]) >= paperN / 2) {
      paper = v;
      break;
    }
  return { ink: inkN ? inkSum / inkN : 0, paper };
}

function bilinear(img: Uint8Array, W: number, H: number, x: number, y: number): number {
  x = Math.min(W - 1.001, Math.max(0, x));
  y = Math.min(H - 1.001, Math.max(0, y));
  const x0 = Math.floor(x),
    y0 = Math.floor(y),
    fx = x - x0,
    fy = y - y0,
    i = y0 * W + x0;
  const top = img[i] + (img[i + 1] - img[i]) * fx;
  const bot = img[i + W] + (img[i + W + 1] - img[i + W]) * fx;
  return top + (bot - top) * fy;
}

/** Distance in pixels from where the profile last lies below v10 (before the middle) to where it first reaches v90 (after). */
function riseWidth(prof: Float64Array, mid: number, v10: number, v90: number): number | null {
  let t10: number | null = null;
  for (let k = mid; k >= 1; k--) {
    if (prof[k] <= v10) {
      t10 = 0;
      break;
    }
    if (prof[k - 1] <= v10) {
      t10 = (k - 1 + (prof[k - 1] - v10) / (prof[k - 1] - prof[k]) - mid) * STEP;
      break;
    }
  }
  let t90: number | null = null;
  for (let k = mid; k < prof.length - 1; k++) {
    if (prof[k] >= v90) {
      t90 = 0;
      break;
    }
    if (prof[k + 1] >= v90) {
      t90 = (k + (v90 - prof[k]) / (prof[k + 1] - prof[k]) - mid) * STEP;
      break;
    }
  }
  return t10 === null || t90 === null ? null : t90 - t10;
}
