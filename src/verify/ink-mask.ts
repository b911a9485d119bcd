/** The working copy shared by the template-free locator and the template locator. */
import { labelComponents, type Component } from "./components";
import { flattenBackground, hysteresis, inkThreshold, shrinkScaled, threshold_ } from "./morphology";
import type { Box, Raster } from "./types";

/** Long side of the working copy the locators analyse. */
export const WORK_SIDE = 1100;

/** A located box before it gets its page and index. */
export interface Found {
  box: Box;
  confidence: number;
}

/**
 * Working copy of a region: its shrink factor and its ink mask (1 = ink) after flattening the paper.
 * When deskewed, the mask is the working copy turned by -angle about its centre, so print runs level.
 */
export interface InkMask {
  factor: number;
  w: number;
  h: number;
  mask: Uint8Array;
  /** Skew of the content in radians (0 when not deskewed). */
  angle: number;
  /** The unturned grey image the mask was thresholded from, and the threshold, for levelling later. */
  grey: Uint8Array;
  threshold: number;
  /** Pixels up to this grey level are ink too where they continue ink (equal to `threshold` unless fainter). */
  weak: number;
  /** The paper's noise floor: the grey level `withFaintInk` keeps connected ink down to. */
  faint: number;
}

/** The shrink factor that brings a region's long side to about WORK_SIDE. */
export function workFactor(region: { w: number; h: number }): number {
  return Math.max(1, Math.round(Math.max(region.w, region.h) / WORK_SIDE));
}

export interface InkMaskOptions {
  factor?: number;
  /** true: measure the skew and level the page; a number: level it by that angle (radians). */
  deskew?: boolean | number;
  /**
   * The raster is the page decoded at 1/pageScale; `region` and `factor` are still in full-page pixels,
   * and the working copy has the size it would have from the full page.
   */
  pageScale?: number;
}

/** Below this skew (radians, about 0.25 degrees) turning the page gains nothing. */
const MIN_SKEW = 0.0045;

export function inkMask(page: Raster, region: Box, opts: InkMaskOptions = {}): InkMask {
  const factor = opts.factor ?? workFactor(region);
  const work = shrinkScaled(page, factor, region, opts.pageScale ?? 1);
  const long = Math.max(work.width, work.height);
  const flat = flattenBackground(work, Math.max(6, Math.round(long / 150)));
  const { grey, threshold, faint } = inkThreshold(flat);
  const w = work.width,
    h = work.height;
  let mask = threshold_(grey, threshold);
  let angle = 0;
  if (opts.deskew !== undefined && opts.deskew !== false) {
    angle = typeof opts.deskew === "number" ? opts.deskew : estimateSkew(mask, w, h);
    if (Math.abs(angle) >= MIN_SKEW) mask = turnedMask(grey, mask, w, h, angle, threshold, threshold);
    else angle = 0;
  }
  return { factor, w, h, mask, angle, grey, threshold, weak: threshold, faint };
}

/**
 * The same working copy at the same angle, keeping also the faint ink that continues ink (down to the
 * paper's noise floor), without shrinking, flattening and thresholding the page again. A thin pen
 * photographed out of focus leaves strokes paler than the threshold's ceiling along most of their length;
 * the ceiling is there to keep halos off every stroke, so this is for a second look only.
 */
export function withFaintInk(m: InkMask): InkMask {
  let mask = hysteresis(m.grey, m.w, m.h, m.threshold, m.faint);
  if (m.angle !== 0) mask = turnedMask(m.grey, mask, m.w, m.h, m.angle, m.threshold, m.faint);
  return { ...m, mask, weak: m.faint };
}

/**
 * The mask of the grey image turned by `angle`. Turning the grey image (not the mask) keeps thin, broken
 * arcs as whole as they were. Slivers of the table at the frame's edge (found on the unturned `mask`) are
 * painted out first: once turned they no longer touch the frame.
 */
function turnedMask(grey: Uint8Array, mask: Uint8Array, w: number, h: number, angle: number, threshold: number, weak: number): Uint8Array {
  const paper = grey.slice();
  const { labels, components } = labelComponents(mask, w, h, 1);
  const edge = new Set(components.filter((c) => isFrameEdge(c, labels, w, h)).map((c) => c.id));
  if (edge.size > 0) for (let i = 0; i < labels.length; i++) if (edge.has(labels[i])) paper[i] = 255;
  return hysteresis(rotate(paper, w, h, angle), w, h, threshold, weak);
}

/** The same working copy levelled by `angle` (radians), without flattening and thresholding it again. */
export function levelled(m: InkMask, angle: number): InkMask {
  if (Math.abs(angle) < MIN_SKEW) return { ...m, mask: hysteresis(m.grey, m.w, m.h, m.threshold, m.weak), angle: 0 };
  return { ...m, mask: hysteresis(rotate(m.grey, m.w, m.h, angle), m.w, m.h, m.threshold, m.weak), angle };
}

/** A point of the (deskewed) mask in the unturned working copy. */
export function unturn(m: InkMask, x: number, y: number): [number, number] {
  if (m.angle === 0) return [x, y];
  const cx = m.w / 2,
    cy = m.h / 2,
    c = Math.cos(m.angle),
    s = Math.sin(m.angle);
  const dx = x - cx,
    dy = y - cy;
  return [cx + c * dx - s * dy, cy + s * dx + c * dy];
}

/** A point of the unturned working copy in the (deskewed) mask. */
export function turn(m: InkMask, x: number, y: number): [number, number] {
  if (m.angle === 0) return [x, y];
  const cx = m.w / 2,
    cy = m.h / 2,
    c = Math.cos(m.angle),
    s = Math.sin(m.angle);
  const dx = x - cx,
    dy = y - cy;
  return [cx + c * dx + s * dy, cy - s * dx + c * dy];
}

/**
 * Skew of the print: the angle at which the ink's projection onto the vertical axis is sharpest (text
 * rows and rules pile into few bins). Searched within ±4 degrees, coarse then fine.
 */
export function estimateSkew(mask: Uint8Array, w: number, h: number): number {
  let ink = 0;
  for (let i = 0; i < mask.length; i++) ink += mask[i];
  if (ink < 200) return 0;
  const step = Math.max(1, Math.ceil(ink / 20000));
  const xs: number[] = [],
    ys: number[] = [];
  for (let i = 0, k = 0; i < mask.length; i++) {
    if (mask[i] && k++ % step === 0) {
      xs.push((i % w) - w / 2);
      ys.push(Math.floor(i / w) - h / 2);
    }
  }
  const bins = new Float64Array(Math.ceil(Math.hypot(w, h)) + 4);
  const off = bins.length / 2;
  const sharpness = (a: number) => {
    bins.fill(0);
    const s = Math.sin(a),
      c = Math.cos(a);
    for (let k = 0; k < xs.length; k++) bins[(off + c * ys[k] - s * xs[k]) | 0]++;
    let e = 0;
    for (let b = 0; b < bins.length; b++) e += bins[b] * bins[b];
    return e;
  };
  const deg = Math.PI / 180;
  let best = 0,
    bestScore = sharpness(0);
  const level = bestScore;
  for (let a = -4; a <= 4.001; a += 0.5) {
    const sc = sharpness(a * deg);
    if (sc > bestScore) {
      bestScore = sc;
      best = a * deg;
    }
  }
  for (let a = best - 0.4 * deg; a <= best + 0.4 * deg; a += 0.1 * deg) {
    const sc = sharpness(a);
    if (sc > bestScore) {
      bestScore = sc;
      best = a;
    }
  }
  // Without clear rows (a lone signature, a picture) the profile is flat at every angle: leave it be.
  return bestScore > level * 1.08 ? best : 0;
}

/** Turn a grey image by -angle about its centre (bilinear; paper fills the corners). */
function rotate(data: Uint8Array, w: number, h: number, angle: number): Uint8Array {
  const out = new Uint8Array(w * h);
  const c = Math.cos(angle),
    s = Math.sin(angle),
    cx = w / 2,
    cy = h / 2;
  for (let y = 0; y < h; y++) {
    const dy = y + 0.5 - cy;
    let sx = cx + c * (0.5 - cx) - s * dy - 0.5,
      sy = cy + s * (0.5 - cx) + c * dy - 0.5;
    for (let x = 0; x < w; x++, sx += c, sy += s) {
      const x0 = Math.floor(sx),
        y0 = Math.floor(sy);
      if (x0 < 0 || y0 < 0 || x0 + 1 >= w || y0 + 1 >= h) {
        out[y * w + x] = 255;
        continue;
      }
      const fx = sx - x0,
        fy = sy - y0,
        i = y0 * w + x0;
      const top = data[i] + (data[i + 1] - data[i]) * fx,
        bot = data[i + w] + (data[i + w + 1] - data[i + w]) * fx;
      out[y * w + x] = top + (bot - top) * fy + 0.5;
    }
  }
  return out;
}

/** Map a mask box back to page pixels (through the deskew, if any), with a little slack for the shrinking. */
export function toPage(b: Box, m: InkMask, region: Box, page: { width: number; height: number }): Box {
  let bx0 = b.x,
    by0 = b.y,
    bx1 = b.x + b.w,
    by1 = b.y + b.h;
  if (m.angle !== 0) {
    const pts = [unturn(m, bx0, by0), unturn(m, bx1, by0), unturn(m, bx0, by1), unturn(m, bx1, by1)];
    bx0 = Math.min(...pts.map((p) => p[0]));
    bx1 = Math.max(...pts.map((p) => p[0]));
    by0 = Math.min(...pts.map((p) => p[1]));
    by1 = Math.max(...pts.map((p) => p[1]));
  }
  const pad = Math.ceil(m.factor / 2);
  const x0 = Math.max(region.x, Math.floor(region.x + bx0 * m.factor - pad)),
    y0 = Math.max(region.y, Math.floor(region.y + by0 * m.factor - pad));
  const x1 = Math.min(region.x + region.w, page.width, Math.ceil(region.x + bx1 * m.factor + pad));
  const y1 = Math.min(region.y + region.h, page.height, Math.ceil(region.y + by1 * m.factor + pad));
  return { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
}

/** The intersection of a box with the page, or null when they do not overlap. */
export function clip(b: Box, page: { width: number; height: number }): Box | null {
  const x0 = Math.max(0, Math.floor(b.x)),
    y0 = Math.max(0, Math.floor(b.y));
  const x1 = Math.min(page.width, Math.ceil(b.x + b.w)),
    y1 = Math.min(page.height, Math.ceil(b.y + b.h));
  return x1 - x0 >= 2 && y1 - y0 >= 2 ? { x: x0, y: y0, w: x1 - x0, h: y1 - y0 } : null;
}

export function unionBox(cs: Array<{ x: number; y: number; w: number; h: number }>): Box {
  let x0 = Infinity,
    y0 = Infinity,
    x1 = -Infinity,
    y1 = -Infinity;
  for (const c of cs) {
    x0 = Math.min(x0, c.x);
    y0 = Math.min(y0, c.y);
    x1 = Math.max(x1, c.x + c.w);
    y1 = Math.max(y1, c.y + c.h);
  }
  return { x: x0, y: y0, w: x1 - x0, h: y1 - y0 };
}

/** The two boxes share some area (touching edges do not). */
export function overlaps(a: Box, b: Box): boolean {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
}

/**
 * A long, thin component touching the frame: the edge of the page in a photo, or a scanner border.
 * `labels` is the labelling `c` comes from (its id marks its pixels there), `w` x `h` the mask's size.
 */
export function isFrameEdge(c: Component, labels: Int32Array, w: number, h: number): boolean {
  const touches = c.x === 0 || c.y === 0 || c.x + c.w === w || c.y + c.h === h;
  if (!touches) return false;
  const long = Math.max(c.w, c.h),
    short = Math.min(c.w, c.h);
  // A sliver of the table beyond a photographed page's edge: shallow, solid, lying along the side it
  // touches (a stroke that runs off the frame leaves it at an angle and is not solid).
  const alongTop = (c.y === 0 || c.y + c.h === h) && c.h <= 8 && c.w >= 4 * c.h;
  const alongSide = (c.x === 0 || c.x + c.w === w) && c.w <= 8 && c.h >= 4 * c.w;
  if ((alongTop || alongSide) && c.area >= 0.4 * c.w * c.h) return true;
  // A band along the frame (a photo's page edge, skewed by perspective).
  if (long > 0.3 * (c.w >= c.h ? w : h) && short < 0.08 * long) return true;
  // A sparse frame line: but a thin-pen signature that spans a close-up or a tight crop, or runs off it,
  // is as sparse, and its strokes turn back where an edge's do not.
  return (c.w > 0.5 * w || c.h > 0.5 * h) && c.area < 0.05 * c.w * c.h + 2 * (c.w + c.h) && !turnsBack(c, labels, w);
}

/**
 * A frame line, a page's edge or a corner of it, is crossed at most twice by a line across it (a frame on
 * all four sides); a pen's letters and loops turn back on themselves, so a signature's strokes are crossed
 * three times or more along a good share of it. TURNS_BACK of the scanlines across the component's long
 * side, measured on the sparse frame-touching components of working copies at half size: a page's edges
 * in 3600 synthetic photos (turned up to 12 degrees, keystoned, on dark and light tables; 12 such
 * components, none at full size) have at most 0.004; the thin-pen Dutch signatures (every 4th image, 101
 * such components) a median of 0.19, three in four more than 0.017. Gaps under two pixels are noise
 * along a blurred edge, not a second crossing.
 */
export function turnsBack(c: Component, labels: Int32Array, w: number): boolean {
  return turnsBackAcross({ x: c.x, y: c.y, w: c.w, h: c.h }, c.w >= c.h, w, (i) => labels[i] === c.id);
}

/**
 * What rule removal leaves of a table's grid where its cells are small or blurred (a whole form
 * photographed at 800 px): corners, crosses, tees and short upright pieces between two rules, straight
 * arms along the page's axes with print stuck to them. Arms are rows (and columns) with an unbroken run
 * of ink across ARM_SPAN of the component, and one runs through it (ARM_THROUGH). Within a pixel of the
 * arms lies most of its ink (ARM_CORE), and within ARM_REACH px nearly all of it (ARM_SHARE), since blur
 * rounds a junction into a blob. A hand's strokes slant, drift and curve: an arch's flat top and steep
 * leg hold half its ink, and a near-upright stroke has no unbroken run down one column. A straight stroke
 * of a hand can still pass, so classify.ts only drops a candidate all of whose seeds pass. Two passes
 * over the component's box.
 */
export function gridRemnant(c: Component, labels: Int32Array, w: number): boolean {
  const rows = new Int32Array(c.h),
    cols = new Int32Array(c.w),
    colRun = new Int32Array(c.w);
  for (let y = 0; y < c.h; y++) {
    let run = 0;
    for (let x = 0, i = (c.y + y) * w + c.x; x < c.w; x++, i++) {
      if (labels[i] !== c.id) {
        run = 0;
        colRun[x] = 0;
        continue;
      }
      rows[y] = Math.max(rows[y], ++run);
      cols[x] = Math.max(cols[x], ++colRun[x]);
    }
  }
  const arms = (runs: Int32Array, least: number) => {
    const at = new Uint8Array(runs.length);
    let n = 0;
    runs.forEach((v, k) => {
      if (v >= Math.max(ARM_MIN, least)) {
        at[k] = 1;
        n++;
      }
    });
    return { at, n };
  };
  // A ruled line is straight: one arm at least runs unbroken through the whole component (less a
  // junction's blob), where a hand's near-upright stroke drifts across columns.
  const through = rows.some((v) => v >= ARM_THROUGH * c.w) || cols.some((v) => v >= ARM_THROUGH * c.h);
  const r = arms(rows, ARM_SPAN * c.w),
    k = arms(cols, ARM_SPAN * c.h);
  if (!through || r.n + k.n === 0 || r.n > ARM_BANDS || k.n > ARM_BANDS) return false;
  const near = (at: Uint8Array, v: number, reach: number) => {
    for (let d = Math.max(0, v - reach); d <= Math.min(at.length - 1, v + reach); d++) if (at[d]) return true;
    return false;
  };
  let core = 0,
    reached = 0;
  for (let y = 0; y < c.h; y++) {
    const onRow = near(r.at, y, 1),
      nearRow = near(r.at, y, ARM_REACH);
    for (let x = 0, i = (c.y + y) * w + c.x; x < c.w; x++, i++) {
      if (labels[i] !== c.id) continue;
      if (onRow || near(k.at, x, 1)) core++;
      if (nearRow || near(k.at, x, ARM_REACH)) reached++;
    }
  }
  return core >= ARM_CORE * c.area && reached >= ARM_SHARE * c.area;
}

/**
 * `gridRemnant`: a row is an arm when an unbroken run of ink crosses this share of the component's width (a
 * column: of its height), and at least ARM_MIN px. Arms differ in length: an L's can be half the other's.
 */
const ARM_SPAN = 0.4;
const ARM_MIN = 8;
/** `gridRemnant`: one arm's run must cross this share of the component. */
const ARM_THROUGH = 0.9;
/** `gridRemnant`: at most this many rows (and columns) of arms: a rule's width, blurred. */
const ARM_BANDS = 4;
/** `gridRemnant`: the share of the ink in the arms' own rows and columns, and within ARM_REACH px of them. */
const ARM_CORE = 0.65;
const ARM_SHARE = 0.9;
/** `gridRemnant`: how far (px) from an arm its blurred junction reaches. */
const ARM_REACH = 3;

/**
 * `turnsBack` for all the ink of a box, across it either way: a signature candidate whose ink no line
 * across it, upright or level, crosses three times on more than TURNS_BACK of the lines is made of strokes
 * that never turn back, as the two arms of a page outline's corner are (classify.ts). `ruled` (the ruling
 * lines' ink taken out of `mask`) counts as ink: taken out of a leaning side, a rule leaves a staircase of
 * short pieces that a line across meets twice.
 */
export function inkTurnsBack(mask: Uint8Array, ruled: Uint8Array, w: number, box: Box): boolean {
  const ink = (i: number) => mask[i] !== 0 || ruled[i] !== 0;
  return turnsBackAcross(box, true, w, ink) || turnsBackAcross(box, false, w, ink);
}

/**
 * Walks lines across `box` (upright ones when `upright`), at most SCANLINES of them evenly spaced, and
 * asks whether more than TURNS_BACK of those that meet the ink cross it three times or more. `w` is the
 * image's width; `isInk` says which pixels (by index) count.
 */
function turnsBackAcross(box: Box, upright: boolean, w: number, isInk: (i: number) => boolean): boolean {
  const lines = upright ? box.w : box.h,
    depth = upright ? box.h : box.w;
  const step = upright ? w : 1;
  // A hatched or striped picture can hold hundreds of long sparse components touching the frame, and
  // each walk covers the whole box.
  const stride = Math.max(1, Math.ceil(lines / SCANLINES));
  const sampled = Math.ceil(lines / stride);
  let crossed = 0,
    threeTimes = 0;
  for (let k = 0; k < lines; k += stride) {
    let i = upright ? box.y * w + box.x + k : (box.y + k) * w + box.x;
    let runs = 0,
      gap = 2;
    for (let t = 0; t < depth; t++, i += step) {
      if (isInk(i)) {
        if (gap >= 2) runs++;
        gap = 0;
      } else gap++;
    }
    if (runs > 0) crossed++;
    if (runs >= 3) threeTimes++;
    // Past this share of all the lines the answer is known.
    if (threeTimes > TURNS_BACK * sampled) return true;
  }
  return threeTimes > TURNS_BACK * crossed;
}

const SCANLINES = 256;
const TURNS_BACK = 0.02;
