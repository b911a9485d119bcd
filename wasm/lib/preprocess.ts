// From a grey crop to a size-normalised ink image. Only the shape of the ink survives: the threshold
// and the ink weights are relative to this image's own grey levels, so a darker pen or a darker scan
// gives the same ink image (absolute darkness is a scanner trace, not the writer's).
import { arenaAlloc, arenaCalloc, arenaMark, arenaRewind } from "./arena";

/** Target area of the normalised ink image, in pixels; the aspect ratio is kept. */
export const TARGET_AREA: f32 = 48000;
const MAX_SIDE: i32 = 1400;
const MIN_SIDE: i32 = 12;
/** Share of the ink mass trimmed at each side when finding the ink box (specks, scanner dust). */
const TRIM: f32 = 0.002;
/** Contrast (0 = paper, 1 = this image's ink) below which a pixel is paper, and above which it is full ink. */
const INK_LOW: f32 = 0.3;
const INK_HIGH: f32 = 0.8;

// Results of the last preprocess, read by the host through core getters.
export let inkX0: i32 = 0;
export let inkY0: i32 = 0;
export let inkW: i32 = 0;
export let inkH: i32 = 0;
export let normW: i32 = 0;
export let normH: i32 = 0;
export let normPtr: usize = 0;
export let threshold: i32 = 0;
export let inkMass: f32 = 0;
/**
 * Of the pixels darker than paper (contrast above GREY_LOW), the share at a middle level (contrast below
 * GREY_HIGH): about 0 for a bitonal scan (fax, G4 TIFF), a large share for a grey one, whose strokes have
 * soft edges and uneven ink. The band leaves out the levels near paper and near ink, where a bitonal image
 * saved as JPEG rings: at quality 30 its share stays at most 0.04 (docs/accuracy.md).
 */
export let greyShare: f32 = 0;
const GREY_LOW: f32 = 0.3;
const GREY_HIGH: f32 = 0.7;

function otsu(hist: usize, total: i32): i32 {
  let sumAll: f64 = 0;
  for (let i = 0; i < 256; i++) sumAll += <f64>i * <f64>load<i32>(hist + (<usize>i << 2));
  let wB: f64 = 0;
  let sumB: f64 = 0;
  let best: f64 = -1;
  let t = 128;
  for (let i = 0; i < 256; i++) {
    const c = <f64>load<i32>(hist + (<usize>i << 2));
    wB += c;
    if (wB == 0) continue;
    const wF = <f64>total - wB;
    if (wF == 0) break;
    sumB += <f64>i * c;
    const mB = sumB / wB;
    const mF = (sumAll - sumB) / wF;
    const between = wB * wF * (mB - mF) * (mB - mF);
    if (between > best) {
      best = between;
      t = i;
    }
  }
  return t + 1; // ink is g < t
}

function percentile(hist: usize, upTo: i32, count: i32, q: f32): i32 {
  const target = <i32>(<f32>count * q);
  let acc = 0;
  for (let i = 0; i < upTo; i++) {
    acc += load<i32>(hist + (<usize>i << 2));
    if (acc > target) return i;
  }
  return upTo - 1;
}

/**
 * Ink weights from grey levels, relative to this image's paper level and the level of its darkest ink. Writes a 256-entry f32 lookup table and returns it.
 * `hard`: every level darker than the Otsu threshold is full ink and every other is paper, as a bitonal
 * scanner would have made it (the binarised comparison regime, src/verify/compare.ts).
 */
function inkTable(src: usize, w: i32, h: i32, hard: bool): usize {
  const hist = arenaCalloc(256 * 4);
  const n = w * h;
  // Four partial histograms, one per byte of each 4-pixel word, summed after: paper repeats one level
  // pixel after pixel, and a single table would make every count wait for the one before it.
  const part = arenaCalloc(3 * 256 * 4);
  const h1 = part, h2 = part + 1024, h3 = part + 2048;
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const q = load<u32>(src + <usize>i);
    const p0 = hist + (<usize>(q & 255) << 2);
    const p1 = h1 + (<usize>((q >> 8) & 255) << 2);
    const p2 = h2 + (<usize>((q >> 16) & 255) << 2);
    const p3 = h3 + (<usize>(q >> 24) << 2);
    store<i32>(p0, load<i32>(p0) + 1);
    store<i32>(p1, load<i32>(p1) + 1);
    store<i32>(p2, load<i32>(p2) + 1);
    store<i32>(p3, load<i32>(p3) + 1);
  }
  for (; i < n; i++) {
    const p = hist + (<usize>load<u8>(src + <usize>i) << 2);
    store<i32>(p, load<i32>(p) + 1);
  }
  for (let g = 0; g < 256; g += 4) {
    const at = <usize>g << 2;
    const sum = i32x4.add(i32x4.add(v128.load(hist + at), v128.load(h1 + at)), i32x4.add(v128.load(h2 + at), v128.load(h3 + at)));
    v128.store(hist + at, sum);
  }
  let t = otsu(hist, n);
  // Paper is the bulk of a signature crop: never call anything within 12 levels of it ink.
  const paper = percentile(hist, 256, n, 0.6);
  if (t > paper - 12) t = paper - 12;
  if (t < 1) t = 1;
  threshold = t;
  let inkCount = 0;
  for (let i = 0; i < t; i++) inkCount += load<i32>(hist + (<usize>i << 2));
  const dark = inkCount > 0 ? percentile(hist, t, inkCount, 0.1) : 0;
  // Contrast against this image's own paper and ink levels; the Otsu threshold only finds the ink level,
  // so how much paper surrounds the signature does not change the stroke profile.
  const span: f32 = <f32>max(1, paper - dark);
  const lut = arenaAlloc(256 * 4);
  let marked: f64 = 0;
  let grey: f64 = 0;
  for (let g = 0; g < 256; g++) {
    const c: f32 = (<f32>(paper - g)) / span;
    let v: f32 = (c - INK_LOW) / (INK_HIGH - INK_LOW);
    if (v < 0) v = 0;
    if (v > 1) v = 1;
    if (hard) v = g < t ? 1 : 0;
    store<f32>(lut + (<usize>g << 2), v);
    if (c > GREY_LOW) {
      const k = <f64>load<i32>(hist + (<usize>g << 2));
      marked += k;
      if (c < GREY_HIGH) grey += k;
    }
  }
  greyShare = marked > 0 ? <f32>(grey / marked) : 0;
  // The table falls as the level rises (lighter is less ink): find where it stays 0, paper.
  let from = 256;
  while (from > 0 && load<f32>(lut + (<usize>(from - 1) << 2)) == 0) from--;
  paperFrom = from;
  return lut;
}

/**
 * The lowest grey level from which the last ink table is 0 at every lighter level (256: none). A pixel
 * there adds nothing to any ink sum, so the passes below skip 16 such pixels at a time (paperBlock): most
 * of a crop is paper. The sums come out the same, since they only ever skipped zero weights one by one.
 */
let paperFrom: i32 = 256;

/** The 16 pixels at `p` are all paper (every one at paperFrom or lighter); never true when paperFrom is 256. */
@inline function paperBlock(p: usize): bool {
  return paperFrom < 256 && i8x16.all_true(i8x16.ge_u(v128.load(p), i8x16.splat(<i8>paperFrom)));
}

/** Index where the cumulative mass from the start first exceeds `cut`. */
function trimStart(m: usize, n: i32, cut: f32): i32 {
  let acc: f32 = 0;
  for (let i = 0; i < n; i++) {
    acc += load<f32>(m + (<usize>i << 2));
    if (acc > cut) return i;
  }
  return 0;
}

function trimEnd(m: usize, n: i32, cut: f32): i32 {
  let acc: f32 = 0;
  for (let i = n - 1; i >= 0; i--) {
    acc += load<f32>(m + (<usize>i << 2));
    if (acc > cut) return i + 1;
  }
  return n;
}

/** Ink mass per column (columns true) or per row over the rectangle [x0, x1) x [y0, y1), into `out` (zeroed first). */
function profile(src: usize, w: i32, lut: usize, y0: i32, y1: i32, x0: i32, x1: i32, out: usize, outLen: i32, columns: bool): void {
  memory.fill(out, 0, <usize>outLen << 2);
  for (let y = y0; y < y1; y++) {
    const row = src + <usize>(y * w);
    let rs: f32 = 0;
    for (let b = x0; b < x1; b += 16) {
      if (b + 16 <= x1 && paperBlock(row + <usize>b)) continue;
      const end = min(x1, b + 16);
      for (let x = b; x < end; x++) {
        const v = load<f32>(lut + (<usize>load<u8>(row + <usize>x) << 2));
        if (v == 0) continue;
        if (columns) {
          const c = out + (<usize>x << 2);
          store<f32>(c, load<f32>(c) + v);
        } else rs += v;
      }
    }
    if (!columns) store<f32>(out + (<usize>y << 2), rs);
  }
}

/** Every entry of the n-long profile `m` outside [lo, hi) is exactly 0. */
function paperOutside(m: usize, n: i32, lo: i32, hi: i32): bool {
  for (let i = 0; i < n; i++) if ((i < lo || i >= hi) && load<f32>(m + (<usize>i << 2)) != 0) return false;
  return true;
}

@inline function at(m: usize, i: i32): f32 {
  return load<f32>(m + (<usize>i << 2));
}

/**
 * Where the resampling grid starts, in pixels of the normalised image (0 but within renormalise). A
 * signature sampled half a pixel over draws its stroke edges as other grey levels, and the LBP and
 * co-occurrence codes read from them move by a third of a genuine-to-genuine distance: as much as a
 * scan at 297 instead of 300 dpi, or a speck that moves the ink box by 2 px. The texture groups are the
 * mean over nine phases (src/verify/core.ts, phasedVector; docs/accuracy.md, "Sampling phase", feature
 * versions 7 to 9).
 */
let phaseX: f32 = 0;
let phaseY: f32 = 0;

const SPECK_SHARE: f32 = 0.015;
const EMPTY: f32 = 0.5;

/**
 * Within [lo, hi) of a mass profile, repeatedly drop a leading or trailing run of ink holding under
 * SPECK_SHARE of the mass when a gap of at least 2% of the extent (and 3 px) separates it from the rest.
 * Returns (lo << 32) | hi.
 */
function dropIsolated(m: usize, lo: i32, hi: i32, total: f32, extent: i32): i64 {
  const minGap = max(3, extent / 50);
  while (lo < hi && at(m, lo) < EMPTY) lo++;
  while (hi > lo && at(m, hi - 1) < EMPTY) hi--;
  for (let round = 0; round < 8; round++) {
    let changed = false;
    // Leading run.
    let e = lo;
    let mass: f32 = 0;
    while (e < hi && at(m, e) >= EMPTY) { mass += at(m, e); e++; }
    let next = e;
    while (next < hi && at(m, next) < EMPTY) next++;
    if (next < hi && next - e >= minGap && mass < SPECK_SHARE * total) { lo = next; changed = true; }
    // Trailing run.
    let b = hi;
    mass = 0;
    while (b > lo && at(m, b - 1) >= EMPTY) { mass += at(m, b - 1); b--; }
    let prev = b;
    while (prev > lo && at(m, prev - 1) < EMPTY) prev--;
    if (prev > lo && b - prev >= minGap && mass < SPECK_SHARE * total) { hi = prev; changed = true; }
    if (!changed) break;
  }
  if (hi <= lo) hi = lo + 1;
  return (i64(lo) << 32) | i64(hi);
}

/**
 * Threshold, crop to the ink and size-normalise. Returns false when there is (almost) no ink.
 * The normalised image (f32 ink weights in [0, 1], normW x normH) is at normPtr.
 */
/** Whether the last crop was evened out (core info 8). */
export let flattened: bool = false;
/** Paper levels that vary less than this across the crop are left as they are. */
const FLAT_GATE: f32 = 16;

/**
 * Even out the paper under uneven light, in place: a light falling across the sheet, or a shadow, leaves
 * paper on one side darker than light ink on the other, and one ink threshold for the crop then reads
 * that paper as ink (the Dutch set under `paper+light`, light falling to 72% across the crop: skilled EER
 * 9.1 / 4.5% clean, 19.7 / 13.8% lit, at N = 3 / 10; under `shadow`, a shadow's edge through the
 * signature, 46%).
 *
 * The paper level of each pixel is the crop closed at the scale of a few strokes (see below), which
 * follows a shadow's edge within a block.
 *
 * Whether: when that level varies by FLAT_GATE levels or more across the crop. Feature version 13 decides
 * on the closed level itself. Before, a coarse grid of tiles decided, each tile's paper its 90th
 * percentile, and a tile far darker than its neighbours was taken to be full of ink and given their
 * median. A shadow over a whole band of tiles (two rows of tiles on a wide crop) was then taken for ink,
 * the crop left as it was, and the shadowed paper read as ink: 5% of the Dutch and 8% of the Bengali
 * `shadow` renderings, the ink mass up to 9 times the clean one's. No Bengali image reaches the gate
 * clean; 2.4% of the Dutch do (paper that really is uneven), and move a little.
 *
 * How: every pixel is scaled so that its paper comes to the brightest level of the crop's paper.
 */
function flatten(src: usize, w: i32, h: i32): void {
  // Its scratch (the block levels, a line's padding, the gains) is given back before the ink table, which
  // reuses the space: every crop runs this now, and the largest allowed crop must stay within the core's
  // memory bound (test/unit/core-memory.test.ts).
  const m = arenaMark();
  flattened = evenOut(src, w, h);
  arenaRewind(m);
}

/** flatten's work; true when the crop was evened out. */
function evenOut(src: usize, w: i32, h: i32): bool {
  // The paper level, pixel by pixel: the crop averaged over FLAT_STEP x FLAT_STEP blocks, then closed along
  // rows and then along columns (each time a maximum, then a minimum, over 2 FLAT_RADIUS + 1 blocks). The
  // maximum removes every stroke narrower than the window in that direction; the minimum brings a step of
  // light (a shadow's edge) back to where it was, so the level follows a shadow to within a block.
  const S = FLAT_STEP;
  const lw = (w + S - 1) / S;
  const lh = (h + S - 1) / S;
  if (lw < 2 * FLAT_RADIUS + 1 && lh < 2 * FLAT_RADIUS + 1) return false;
  const low = arenaAlloc(<usize>(lw * lh) << 2);
  // Every crop pays for these block means now (they decide whether), so they are summed row by row, in
  // the order the pixels lie in memory, into one integer sum per block column: 16 pixels at a time, whose
  // pairwise sums of pairwise sums are the four blocks' (FLAT_STEP is 4), the rest one by one.
  if (FLAT_STEP != 4) unreachable();
  const sums = arenaAlloc(<usize>(lw + 4) << 2);
  const whole = w & ~15;
  for (let j = 0; j < lh; j++) {
    memory.fill(sums, 0, <usize>(lw + 4) << 2);
    const y0 = j * S, y1 = min(h, y0 + S);
    for (let y = y0; y < y1; y++) {
      const row = src + <usize>(y * w);
      for (let x = 0; x < whole; x += 16) {
        const four = i32x4.extadd_pairwise_i16x8_u(i16x8.extadd_pairwise_i8x16_u(v128.load(row + <usize>x)));
        const p = sums + (<usize>(x >> 2) << 2);
        v128.store(p, i32x4.add(v128.load(p), four));
      }
      for (let x = whole; x < w; x++) {
        const p = sums + (<usize>(x >> 2) << 2);
        store<i32>(p, load<i32>(p) + <i32>load<u8>(row + <usize>x));
      }
    }
    for (let i = 0; i < lw; i++) {
      const x0 = i * S, x1 = min(w, x0 + S);
      store<f32>(low + (<usize>(j * lw + i) << 2), <f32>load<i32>(sums + (<usize>i << 2)) / <f32>((x1 - x0) * (y1 - y0)));
    }
  }
  const tmp = arenaAlloc(<usize>(lw * lh) << 2);
  extremum(low, tmp, lw, lh, true, true);
  extremum(tmp, low, lw, lh, false, true);
  extremum(low, tmp, lw, lh, true, false);
  extremum(tmp, low, lw, lh, false, false);
  // Whether: the closed paper level itself, which no stroke narrower than the window reaches, so that a
  // shadow over a whole band of the crop counts as light (a coarse grid of tiles took such a band for ink).
  let lo: f32 = 255, hi: f32 = 0;
  for (let k = 0; k < lw * lh; k++) {
    const v = load<f32>(low + (<usize>k << 2));
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  if (hi - lo < FLAT_GATE || lo < 2) return false;
  // Each column's block pair and weight, once for every row.
  const invS: f32 = 1 / <f32>S;
  const colBlock = arenaAlloc(<usize>w << 2);
  const colWeight = arenaAlloc(<usize>w << 2);
  for (let x = 0; x < w; x++) {
    const gx = (<f32>x + 0.5) * invS - 0.5;
    const i0 = lw < 2 ? 0 : min(lw - 2, max(0, <i32>Mathf.floor(gx)));
    store<i32>(colBlock + (<usize>x << 2), i0);
    store<f32>(colWeight + (<usize>x << 2), lw < 2 ? <f32>0 : min<f32>(1, max<f32>(0, gx - <f32>i0)));
  }
  // Per row, the gain (brightest paper over this paper) at each block column, interpolated between the
  // two block rows around it; per pixel, between the two block columns.
  const gain = arenaAlloc(<usize>lw << 2);
  for (let y = 0; y < h; y++) {
    const gy = (<f32>y + 0.5) * invS - 0.5;
    const j0 = lh < 2 ? 0 : min(lh - 2, max(0, <i32>Mathf.floor(gy)));
    const j1 = min(lh - 1, j0 + 1);
    const fy = lh < 2 ? <f32>0 : min<f32>(1, max<f32>(0, gy - <f32>j0));
    for (let i = 0; i < lw; i++) {
      let paper = load<f32>(low + (<usize>(j0 * lw + i) << 2)) * (1 - fy) + load<f32>(low + (<usize>(j1 * lw + i) << 2)) * fy;
      if (paper < lo * 0.5) paper = lo * 0.5;
      store<f32>(gain + (<usize>i << 2), hi / paper);
    }
    const row = src + <usize>(y * w);
    for (let x = 0; x < w; x++) {
      const i0 = load<i32>(colBlock + (<usize>x << 2));
      const i1 = min(lw - 1, i0 + 1);
      const fx = load<f32>(colWeight + (<usize>x << 2));
      const k = load<f32>(gain + (<usize>i0 << 2)) * (1 - fx) + load<f32>(gain + (<usize>i1 << 2)) * fx;
      let v = <f32>load<u8>(row + <usize>x) * k + 0.5;
      if (v > 255) v = 255;
      store<u8>(row + <usize>x, <u8>(<i32>v));
    }
  }
  return true;
}

/** Side of the blocks the paper level is closed on, and the closing's radius in blocks. */
const FLAT_STEP: i32 = 4;
const FLAT_RADIUS: i32 = 4;

/**
 * The maximum (or minimum) over FLAT_RADIUS on either side, along rows (`horizontal`) or columns, from `a`
 * into `b`; neighbours past the edge do not count. Every crop runs four of these (flatten decides on their
 * result), so each line is padded with values that never win and the window of 9 is built by doubling
 * (2, 4, 8, then one more): 4 comparisons per block instead of 9, and no edge test in the loops. The
 * result is the same set's extremum, so it is exactly the direct computation's.
 *
 * Four at a time: along a row, four neighbouring outputs of the row; along columns, one output in each of
 * four neighbouring columns, which lie side by side in memory. f32x4.max and min are f32.max and min lane
 * by lane, so the result is the scalar one's bit for bit; the columns past the last four take the scalar
 * path.
 */
function extremum(a: usize, b: usize, W: i32, H: i32, isMax: bool, horizontal: bool): void {
  // The doubling below spans 2 x 4 + 1 blocks.
  if (FLAT_RADIUS != 4) unreachable();
  if (horizontal) {
    extremumRows(a, b, W, H, isMax);
    return;
  }
  const R = FLAT_RADIUS;
  const len = H + 2 * R;
  const pad = arenaAlloc(<usize>len << 4);
  const m = arenaAlloc(<usize>len << 4);
  const fill = f32x4.splat(isMax ? -Infinity : Infinity);
  for (let k = 0; k < R; k++) {
    v128.store(pad + (<usize>k << 4), fill);
    v128.store(pad + (<usize>(H + R + k) << 4), fill);
  }
  const rowBytes = <usize>W << 2;
  const whole = W & ~3;
  for (let l = 0; l < whole; l += 4) {
    const from = a + (<usize>l << 2);
    const to = b + (<usize>l << 2);
    for (let t = 0; t < H; t++) v128.store(pad + (<usize>(t + R) << 4), v128.load(from + <usize>t * rowBytes));
    for (let i = 0; i < len - 1; i++) {
      const p = pad + (<usize>i << 4);
      v128.store(m + (<usize>i << 4), pick4(v128.load(p), v128.load(p, 16), isMax));
    }
    for (let i = 0; i < len - 3; i++) {
      const p = m + (<usize>i << 4);
      v128.store(p, pick4(v128.load(p), v128.load(p, 32), isMax));
    }
    for (let i = 0; i < len - 7; i++) {
      const p = m + (<usize>i << 4);
      v128.store(p, pick4(v128.load(p), v128.load(p, 64), isMax));
    }
    for (let t = 0; t < H; t++) {
      v128.store(to + <usize>t * rowBytes, pick4(v128.load(m + (<usize>t << 4)), v128.load(pad + (<usize>(t + 2 * R) << 4)), isMax));
    }
  }
  for (let l = whole; l < W; l++) extremumLine(a + (<usize>l << 2), b + (<usize>l << 2), H, rowBytes, isMax);
}

@inline function pick4(u: v128, v: v128, isMax: bool): v128 {
  return isMax ? f32x4.max(u, v) : f32x4.min(u, v);
}

@inline function pick(u: f32, v: f32, isMax: bool): f32 {
  return isMax ? max(u, v) : min(u, v);
}

/** extremum along rows: each row's values lie side by side, so each doubling step takes four at a time. */
function extremumRows(a: usize, b: usize, W: i32, H: i32, isMax: bool): void {
  const R = FLAT_RADIUS;
  const len = W + 2 * R;
  const pad = arenaAlloc(<usize>len << 2);
  const m = arenaAlloc(<usize>len << 2);
  const fill: f32 = isMax ? -Infinity : Infinity;
  for (let k = 0; k < R; k++) {
    store<f32>(pad + (<usize>k << 2), fill);
    store<f32>(pad + (<usize>(W + R + k) << 2), fill);
  }
  for (let l = 0; l < H; l++) {
    const from = a + (<usize>(l * W) << 2);
    const to = b + (<usize>(l * W) << 2);
    memory.copy(pad + (<usize>R << 2), from, <usize>W << 2);
    windowsOf8(pad, m, len, isMax);
    // Output t's window is pad[t..t+8]: m8[t] and pad[t+8].
    let t = 0;
    for (; t + 4 <= W; t += 4) {
      v128.store(to + (<usize>t << 2), pick4(v128.load(m + (<usize>t << 2)), v128.load(pad + (<usize>(t + 2 * R) << 2)), isMax));
    }
    for (; t < W; t++) {
      store<f32>(to + (<usize>t << 2), pick(load<f32>(m + (<usize>t << 2)), load<f32>(pad + (<usize>(t + 2 * R) << 2)), isMax));
    }
  }
}

/**
 * m[i] = the extremum of pad[i..i+7], for a padded line of `len` values: m2[i] covers pad[i..i+1], then in
 * place m4[i] = pad[i..i+3] and m8[i] = pad[i..i+7]. Each step reads only ahead of what it writes, and a
 * vector is loaded before it is stored, so four at a time reads the same values as one at a time.
 */
@inline function windowsOf8(pad: usize, m: usize, len: i32, isMax: bool): void {
  doubling(pad, m, len - 1, 1, isMax);
  doubling(m, m, len - 3, 2, isMax);
  doubling(m, m, len - 7, 4, isMax);
}

/** dst[i] = extremum of src[i] and src[i + gap] for i < n, four at a time, then the rest one by one. */
@inline function doubling(src: usize, dst: usize, n: i32, gap: i32, isMax: bool): void {
  const off = <usize>gap << 2;
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const p = src + (<usize>i << 2);
    v128.store(dst + (<usize>i << 2), pick4(v128.load(p), v128.load(p + off), isMax));
  }
  for (; i < n; i++) {
    const p = src + (<usize>i << 2);
    store<f32>(dst + (<usize>i << 2), pick(load<f32>(p), load<f32>(p + off), isMax));
  }
}

/** One line of extremum: `n` values `step` bytes apart, from `from` into `to` (a column past the last four). */
function extremumLine(from: usize, to: usize, n: i32, step: usize, isMax: bool): void {
  const R = FLAT_RADIUS;
  const len = n + 2 * R;
  const m = arenaMark();
  const pad = arenaAlloc(<usize>len << 2);
  const m2 = arenaAlloc(<usize>len << 2);
  const fill: f32 = isMax ? -Infinity : Infinity;
  for (let k = 0; k < R; k++) {
    store<f32>(pad + (<usize>k << 2), fill);
    store<f32>(pad + (<usize>(n + R + k) << 2), fill);
  }
  for (let t = 0; t < n; t++) store<f32>(pad + (<usize>(t + R) << 2), load<f32>(from + <usize>t * step));
  windowsOf8(pad, m2, len, isMax);
  for (let t = 0; t < n; t++) store<f32>(to + <usize>t * step, pick(load<f32>(m2 + (<usize>t << 2)), load<f32>(pad + (<usize>(t + 2 * R) << 2)), isMax));
  arenaRewind(m);
}

export function preprocess(src: usize, w: i32, h: i32, hard: bool = false): bool {
  keptRows = 0;
  flatten(src, w, h);
  const lut = inkTable(src, w, h, hard);
  const cols = arenaCalloc(<usize>w << 2);
  const rows = arenaCalloc(<usize>h << 2);
  let total: f32 = 0;
  for (let y = 0; y < h; y++) {
    const row = src + <usize>(y * w);
    let rs: f32 = 0;
    for (let b = 0; b < w; b += 16) {
      if (b + 16 <= w && paperBlock(row + <usize>b)) continue;
      const end = min(w, b + 16);
      for (let x = b; x < end; x++) {
        const v = load<f32>(lut + (<usize>load<u8>(row + <usize>x) << 2));
        if (v == 0) continue;
        rs += v;
        const c = cols + (<usize>x << 2);
        store<f32>(c, load<f32>(c) + v);
      }
    }
    store<f32>(rows + (<usize>y << 2), rs);
    total += rs;
  }
  inkMass = total;
  if (total < 12) {
    inkX0 = 0; inkY0 = 0; inkW = w; inkH = h; normW = 0; normH = 0;
    return false;
  }
  // Isolated specks at the edges (dust, a stray dot) would stretch the box: drop small runs of ink
  // separated from the rest by a gap, first along rows, then along columns within those rows, then rows
  // again within those columns.
  // Each profile below is taken again over the rows (columns) kept so far. Where the crop holds no ink
  // at all outside them (weights are never negative, so a zero sum is all paper), the profile in hand
  // already is that one, bit for bit: the same nonzero terms added in the same order. Most crops have
  // clean paper around the ink, and each walk over the crop is a tenth of a reference's preprocessing.
  let ya = dropIsolated(rows, 0, h, total, h);
  let ylo = i32(ya >> 32), yhi = i32(ya & 0xffffffff);
  const rowsClean = paperOutside(rows, h, ylo, yhi);
  if (!rowsClean) profile(src, w, lut, ylo, yhi, 0, w, cols, w, true);
  let xa = dropIsolated(cols, 0, w, total, w);
  const xlo = i32(xa >> 32), xhi = i32(xa & 0xffffffff);
  // cols sums every row here only when rowsClean.
  if (!(rowsClean && paperOutside(cols, w, xlo, xhi))) profile(src, w, lut, 0, h, xlo, xhi, rows, h, false);
  const ylo1 = ylo, yhi1 = yhi;
  ya = dropIsolated(rows, 0, h, total, h);
  ylo = i32(ya >> 32); yhi = i32(ya & 0xffffffff);
  // cols is the column profile over [ylo1, yhi1): the same rows again give the same profile.
  if (ylo != ylo1 || yhi != yhi1) profile(src, w, lut, ylo, yhi, 0, w, cols, w, true);
  for (let x = 0; x < w; x++) if (x < xlo || x >= xhi) store<f32>(cols + (<usize>x << 2), 0);
  for (let y = 0; y < h; y++) if (y < ylo || y >= yhi) store<f32>(rows + (<usize>y << 2), 0);
  let kept: f32 = 0;
  for (let x = 0; x < w; x++) kept += load<f32>(cols + (<usize>x << 2));
  const cut = kept * TRIM;
  const x0 = trimStart(cols, w, cut);
  const x1 = max(x0 + 1, trimEnd(cols, w, cut));
  const y0 = trimStart(rows, h, cut);
  const y1 = max(y0 + 1, trimEnd(rows, h, cut));
  const bw = x1 - x0;
  const bh = y1 - y0;
  inkX0 = x0; inkY0 = y0; inkW = bw; inkH = bh;

  const s = Mathf.sqrt(TARGET_AREA / (<f32>bw * <f32>bh));
  let W = <i32>Mathf.round(<f32>bw * s);
  let H = <i32>Mathf.round(<f32>bh * s);
  W = min(MAX_SIDE, max(MIN_SIDE, W));
  H = min(MAX_SIDE, max(MIN_SIDE, H));
  normW = W;
  normH = H;

  lastSrc = src;
  lastW = w;
  lastLut = lut;
  // The row pass at phase 0 is kept: the extra sampling grids at x phase 0 only run the vertical pass.
  normalise(true);
  return true;
}

/** The crop, its width and ink table that the last preprocess left normPtr from (for renormalise). */
let lastSrc: usize = 0;
let lastW: i32 = 0;
let lastLut: usize = 0;

/**
 * The ink box of the last crop area-resampled to normW x normH at normPtr, at the current phase. The image
 * is reserved first and the horizontal pass's buffer after it, so that buffer is given back at once: two
 * images (renormalise) then cost the arena two images, not two buffers as well.
 */
function normalise(keep: bool = false): void {
  const W = normW, H = normH, bw = inkW, bh = inkH;
  const out = arenaCalloc(<usize>(W * H) << 2);
  normPtr = out;
  if (keptRows != 0 && keptPhase == phaseX) {
    resampleRows(keptRows, bh, out, H, W);
    return;
  }
  const scratch = arenaMark();
  // Horizontal pass into a bh x W buffer, then vertical into H x W.
  const tmp = arenaCalloc(<usize>(bh * W) << 2);
  for (let y = 0; y < bh; y++) resampleInk(lastSrc + <usize>((y + inkY0) * lastW + inkX0), bw, lastLut, tmp + (<usize>(y * W) << 2), W);
  resampleRows(tmp, bh, out, H, W);
  if (keep) {
    keptRows = tmp;
    keptPhase = phaseX;
  } else arenaRewind(scratch);
}

/** The horizontal pass kept by keepRows (0: none), and the x phase it was resampled at. */
let keptRows: usize = 0;
let keptPhase: f32 = -1;

/**
 * Resample the last crop's ink box along its rows at x phase `px` and keep the result (bh x normW f32,
 * reserved now): renormalise at that x phase then runs only the vertical pass, which is an eighth of the
 * work. The eight extra sampling grids come three, three and two to an x phase (src/verify/core.ts
 * phasedVector), and those at x = 0 use the pass preprocess kept. The buffer is forgotten on the next
 * preprocess, and when the arena is rewound below it (forgetRowsFrom).
 */
export function keepRows(px: f32): void {
  keptRows = 0;
  if (normW == 0 || !(px >= 0 && px < 1)) return;
  const W = normW, bh = inkH, bw = inkW;
  const rows = arenaCalloc(<usize>(bh * W) << 2);
  phaseX = px;
  for (let y = 0; y < bh; y++) resampleInk(lastSrc + <usize>((y + inkY0) * lastW + inkX0), bw, lastLut, rows + (<usize>(y * W) << 2), W);
  phaseX = 0;
  keptRows = rows;
  keptPhase = px;
}

/** The x phase of the kept row pass, or -1 when none is kept. */
export function rowsPhase(): f32 {
  return keptRows != 0 ? keptPhase : -1;
}

/** The arena is given back from `mark` on (arena rewind or reset): a kept row pass there is gone. */
export function forgetRowsFrom(mark: usize): void {
  if (keptRows >= mark) keptRows = 0;
}

/**
 * The last preprocessed crop normalised again with the grid moved by (px, py) of a normalised pixel
 * (0 <= p < 1): same box, same size. Ink the move pushes past the last row or column is left out, at most
 * that fraction of a pixel of the box's outermost ink. Replaces normPtr (the earlier image stays in the
 * arena: setNormPtr goes back to it). No-op when the crop held no ink, or for a move outside [0, 1).
 */
export function renormalise(px: f32, py: f32): void {
  if (normW == 0 || !(px >= 0 && px < 1) || !(py >= 0 && py < 1)) return;
  phaseX = px;
  phaseY = py;
  normalise();
  phaseX = 0;
  phaseY = 0;
}

/**
 * One row of `n` grey pixels at `src`, as ink weights (`lut`), area-resampled onto `m` f32 at `dst`
 * (zeroed): resampleRows with width 1, reading the grey row itself. Paper adds nothing to any output, so
 * its pixels (16 at a time where a block is all paper) are skipped before any span is worked out: most
 * of a crop's box is paper. Each output still sums its ink pixels in ascending order with the same
 * factors, so the image comes out bit for bit the same.
 */
function resampleInk(src: usize, n: i32, lut: usize, dst: usize, m: i32): void {
  const s: f32 = <f32>m / <f32>n;
  for (let blk = 0; blk < n; blk += 16) {
    if (blk + 16 <= n && paperBlock(src + <usize>blk)) continue;
    const end = min(n, blk + 16);
    for (let i = blk; i < end; i++) {
      const v = load<f32>(lut + (<usize>load<u8>(src + <usize>i) << 2));
      if (v == 0) continue;
      const a: f32 = <f32>i * s + phaseX;
      const b: f32 = a + s;
      let o = <i32>a;
      if (s < 1 && o + 1 < m) {
        // Shrinking, the usual case: the pixel's span meets output o and at most o + 1. The same terms as
        // the loop below (there max(a, o) is a, and min(b, o + 2) is b), without its tests.
        const p = dst + (<usize>o << 2);
        const hi = min<f32>(b, <f32>(o + 1));
        if (hi > a) store<f32>(p, load<f32>(p) + v * (hi - a));
        const lo = <f32>(o + 1);
        if (b > lo) store<f32>(p + 4, load<f32>(p + 4) + v * (b - lo));
        continue;
      }
      while (o < m && <f32>o < b) {
        const lo = max<f32>(a, <f32>o);
        const hi = min<f32>(b, <f32>(o + 1));
        if (hi > lo) {
          const p = dst + (<usize>o << 2);
          store<f32>(p, load<f32>(p) + v * (hi - lo));
        }
        o++;
      }
    }
  }
}

/**
 * Area resampling of `n` rows of `width` f32 at `src` onto `m` rows at `dst` (zeroed first): each output
 * row is the mean of the source interval it covers, which works for both shrinking and enlarging (the
 * vertical pass; resampleInk is the horizontal one). It runs row by row rather than down each column, so
 * memory is read in order and each source row's span is worked out once. Each output sums its sources in
 * ascending order.
 */
function resampleRows(src: usize, n: i32, dst: usize, m: i32, width: i32): void {
  const s: f32 = <f32>m / <f32>n;
  const rowBytes = <usize>width << 2;
  for (let i = 0; i < n; i++) {
    const row = src + <usize>i * rowBytes;
    const a: f32 = <f32>i * s + phaseY;
    const b: f32 = a + s;
    let o = <i32>a;
    while (o < m && <f32>o < b) {
      const lo = max<f32>(a, <f32>o);
      const hi = min<f32>(b, <f32>(o + 1));
      if (hi > lo) {
        const k = hi - lo;
        const out = dst + <usize>o * rowBytes;
        // Four at a time: paper (0) adds exactly 0, so adding it too leaves the same bits as skipping it.
        const kv = f32x4.splat(k);
        let x = 0;
        for (; x + 4 <= width; x += 4) {
          const at = <usize>x << 2;
          const v = v128.load(row + at);
          if (!v128.any_true(v)) continue;
          v128.store(out + at, f32x4.add(v128.load(out + at), f32x4.mul(v, kv)));
        }
        for (; x < width; x++) {
          const v = load<f32>(row + (<usize>x << 2));
          if (v == 0) continue;
          const p = out + (<usize>x << 2);
          store<f32>(p, load<f32>(p) + v * k);
        }
      }
      o++;
    }
  }
}

/**
 * The normalised image blurred by a separable Gaussian of `sigma` px (E24's canonicalBlur): the second
 * comparison regime, for questioned signatures that are themselves blurred (a phone photo). Replaces normPtr.
 */
export function blurNorm(sigma: f32): void {
  if (normW == 0 || sigma <= 0) return;
  normPtr = gaussianBlur(normPtr, normW, normH, sigma);
}

/**
 * One output of a 1-D pass of gaussianBlur, scalar: the taps of kernel `k` (radius r) around position
 * `at` along a line of `len` pixels, the pixel at position q being at index base + q * step. Taps that
 * fall outside the line are dropped.
 */
function blurTap(img: usize, k: usize, r: i32, len: i32, at: i32, base: i32, step: i32): f32 {
  let a: f32 = 0;
  for (let i = -r; i <= r; i++) {
    const q = at + i;
    if (q < 0 || q >= len) continue;
    a += load<f32>(k + (<usize>(i + r) << 2)) * load<f32>(img + (<usize>(base + q * step) << 2));
  }
  return a;
}

function gaussianBlur(src: usize, W: i32, H: i32, sigma: f32): usize {
  const r = <i32>Mathf.ceil(3 * sigma);
  const k = arenaAlloc(<usize>(2 * r + 1) << 2);
  let sum: f32 = 0;
  for (let i = -r; i <= r; i++) {
    const v = Mathf.exp(-(<f32>(i * i)) / (2 * sigma * sigma));
    store<f32>(k + (<usize>(i + r) << 2), v);
    sum += v;
  }
  for (let i = 0; i <= 2 * r; i++) store<f32>(k + (<usize>i << 2), load<f32>(k + (<usize>i << 2)) / sum);
  const tmp = arenaCalloc(<usize>(W * H) << 2);
  const dst = arenaCalloc(<usize>(W * H) << 2);
  const taps = 2 * r + 1;
  // Away from the edges every tap is inside: the same sums in the same order, without the bounds tests,
  // four outputs at a time (lane by lane the same operations as one at a time: SIMD has no fused
  // multiply-add, so each lane equals the scalar sum bit for bit).
  for (let y = 0; y < H; y++) {
    let x = 0;
    for (; x < min(r, W); x++) store<f32>(tmp + (<usize>(y * W + x) << 2), blurTap(src, k, r, W, x, y * W, 1));
    for (; x + 4 <= W - r; x += 4) {
      const p = src + (<usize>(y * W + x - r) << 2);
      let a = f32x4.splat(0);
      for (let i = 0; i < taps; i++) a = f32x4.add(a, f32x4.mul(f32x4.splat(load<f32>(k + (<usize>i << 2))), v128.load(p + (<usize>i << 2))));
      v128.store(tmp + (<usize>(y * W + x) << 2), a);
    }
    for (; x < W; x++) store<f32>(tmp + (<usize>(y * W + x) << 2), blurTap(src, k, r, W, x, y * W, 1));
  }
  const stride = <usize>W << 2;
  for (let y = 0; y < H; y++) {
    const inside = y >= r && y < H - r;
    let x = 0;
    if (inside) {
      for (; x + 4 <= W; x += 4) {
        const p = tmp + (<usize>((y - r) * W + x) << 2);
        let a = f32x4.splat(0);
        for (let i = 0; i < taps; i++) a = f32x4.add(a, f32x4.mul(f32x4.splat(load<f32>(k + (<usize>i << 2))), v128.load(p + <usize>i * stride)));
        v128.store(dst + (<usize>(y * W + x) << 2), a);
      }
    }
    for (; x < W; x++) store<f32>(dst + (<usize>(y * W + x) << 2), blurTap(tmp, k, r, H, y, x, W));
  }
  return dst;
}

/**
 * A synthetic variant of the normalised image: rotation (radians), scale, horizontal shear and a smooth
 * sinusoidal elastic displacement (amplitude in pixels), about the centre, bilinear. Replaces normPtr.
 */
export function warp(rot: f32, scale: f32, shear: f32, elastic: f32, phase: f32): void {
  const W = normW;
  const H = normH;
  if (W == 0) return;
  const src = normPtr;
  const dst = arenaCalloc(<usize>(W * H) << 2);
  const cx: f32 = <f32>W * 0.5;
  const cy: f32 = <f32>H * 0.5;
  const c = Mathf.cos(rot) / scale;
  const sn = Mathf.sin(rot) / scale;
  const wx: f32 = 6.2831853 / <f32>max(W, 1) * 2.0;
  const wy: f32 = 6.2831853 / <f32>max(H, 1);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      // Inverse map: destination pixel to source position.
      let dx = <f32>x - cx;
      const dy = <f32>y - cy;
      dx -= shear * dy;
      let sx = c * dx + sn * dy + cx;
      let sy = -sn * dx + c * dy + cy;
      sx += elastic * Mathf.sin(wy * <f32>y + phase);
      sy += elastic * Mathf.sin(wx * <f32>x + phase * 1.7);
      if (sx < 0 || sy < 0 || sx > <f32>(W - 1) || sy > <f32>(H - 1)) continue;
      const ix = <i32>sx;
      const iy = <i32>sy;
      const fx = sx - <f32>ix;
      const fy = sy - <f32>iy;
      const ix1 = min(ix + 1, W - 1);
      const iy1 = min(iy + 1, H - 1);
      const p00 = load<f32>(src + (<usize>(iy * W + ix) << 2));
      const p01 = load<f32>(src + (<usize>(iy * W + ix1) << 2));
      const p10 = load<f32>(src + (<usize>(iy1 * W + ix) << 2));
      const p11 = load<f32>(src + (<usize>(iy1 * W + ix1) << 2));
      const v = (p00 * (1 - fx) + p01 * fx) * (1 - fy) + (p10 * (1 - fx) + p11 * fx) * fy;
      store<f32>(dst + (<usize>(y * W + x) << 2), v);
    }
  }
  normPtr = dst;
}

export function setNormPtr(p: usize): void {
  normPtr = p;
}
