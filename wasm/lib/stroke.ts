// Pen-width normalisation of the normalised ink image. A writer who changes pens, or a scanner that
// blurs or thins the ink, changes how wide every stroke is more than where it goes. The shape features
// (orientations, ink distribution, contour sequence) are computed on the ink redrawn at one mean stroke
// width; the stroke texture (LBP) stays on the original, because the width and texture of the ink are
// also evidence: forgers draw slower and wider (docs/accuracy.md, experiments E1 to E3).
import { arenaAlloc, arenaCalloc } from "./arena";

/** Ink weight at or above which a pixel of the normalised image counts as ink for the skeleton. */
const BIN: f32 = 0.5;
/**
 * Thinning removes one layer of pixels per pass, so it converges within half the widest stroke; the
 * cap bounds the work on any image (strokes of the normalised image are a few pixels wide).
 */
const MAX_PASSES: i32 = 40;
/** Width of the soft cut's ramp (in blurred ink weight), so the redrawn edges stay anti-aliased. */
const RAMP: f32 = 0.12;

/** Mean stroke width before normalising (ink area over skeleton length) and the skeleton's length. */
export let strokeWidth: f32 = 0;
export let skeletonLength: i32 = 0;

/**
 * Zhang-Suen's test for one pixel, from its 8 neighbours as bits (bit 0 = p2 above, then clockwise: p3
 * above right, p4 right, p5 below right, p6 below, p7 below left, p8 left, p9 above left): true when the
 * sub-iteration (`second`) deletes it. 2 to 6 neighbours, exactly one 0 -> 1 transition around it (removing
 * it does not split the stroke), and the sub-iteration's two products of p2, p4, p6, p8 zero.
 */
function deletable(code: i32, second: bool): bool {
  const p2 = code & 1, p3 = (code >> 1) & 1, p4 = (code >> 2) & 1, p5 = (code >> 3) & 1;
  const p6 = (code >> 4) & 1, p7 = (code >> 5) & 1, p8 = (code >> 6) & 1, p9 = (code >> 7) & 1;
  const neighbours = p2 + p3 + p4 + p5 + p6 + p7 + p8 + p9;
  if (neighbours < 2 || neighbours > 6) return false;
  let a = 0;
  if (p2 == 0 && p3 == 1) a++;
  if (p3 == 0 && p4 == 1) a++;
  if (p4 == 0 && p5 == 1) a++;
  if (p5 == 0 && p6 == 1) a++;
  if (p6 == 0 && p7 == 1) a++;
  if (p7 == 0 && p8 == 1) a++;
  if (p8 == 0 && p9 == 1) a++;
  if (p9 == 0 && p2 == 1) a++;
  if (a != 1) return false;
  if (!second) return p2 * p4 * p6 == 0 && p4 * p6 * p8 == 0;
  return p2 * p4 * p8 == 0 && p2 * p6 * p8 == 0;
}

/** deletable() for every neighbourhood: bytes 0-255 the first sub-iteration's answer, 256-511 the second's. */
const thinLut: usize = memory.data(512);
let thinLutReady = false;

function initThinLut(): void {
  for (let c = 0; c < 256; c++) {
    store<u8>(thinLut + <usize>c, deletable(c, false) ? 1 : 0);
    store<u8>(thinLut + 256 + <usize>c, deletable(c, true) ? 1 : 0);
  }
  thinLutReady = true;
}

/**
 * One Zhang-Suen sub-iteration over the `count` pixels listed at `idx` (the ink pixels still standing;
 * `second` selects the second sub-iteration's conditions, read from thinLut by the neighbourhood's bits).
 * The deletions are listed in `del` and applied after the scan, as the method requires, so the order of
 * the list does not matter. Returns their count.
 */
function thinPass(b: usize, idx: usize, count: i32, del: usize, W: i32, second: bool): i32 {
  const lut = thinLut + (second ? 256 : 0);
  const w = <usize>W;
  let n = 0;
  for (let k = 0; k < count; k++) {
    const i = load<i32>(idx + (<usize>k << 2));
    const p = b + <usize>i;
    const code =
      <i32>load<u8>(p - w) | (<i32>load<u8>(p - w + 1) << 1) | (<i32>load<u8>(p + 1) << 2) | (<i32>load<u8>(p + w + 1) << 3) |
      (<i32>load<u8>(p + w) << 4) | (<i32>load<u8>(p + w - 1) << 5) | (<i32>load<u8>(p - 1) << 6) | (<i32>load<u8>(p - w - 1) << 7);
    if (load<u8>(lut + <usize>code) == 0) continue;
    store<i32>(del + (<usize>n << 2), i);
    n++;
  }
  for (let k = 0; k < n; k++) store<u8>(b + <usize>load<i32>(del + (<usize>k << 2)), 0);
  return n;
}

/** Drop the pixels a pass deleted from the list at `idx`; returns the new count. */
function compact(b: usize, idx: usize, count: i32): i32 {
  let m = 0;
  for (let k = 0; k < count; k++) {
    const i = load<i32>(idx + (<usize>k << 2));
    if (load<u8>(b + <usize>i) != 0) {
      store<i32>(idx + (<usize>m << 2), i);
      m++;
    }
  }
  return m;
}

/**
 * The one-pixel skeleton of the binarised ink image, as a W x H u8 mask (border pixels left out). The
 * passes visit only the ink pixels still standing (a list), not the whole image: ink is a small share
 * of a signature's box, and each pass deletes only ink.
 */
function skeleton(img: usize, W: i32, H: i32): usize {
  const n = W * H;
  const b = arenaCalloc(<usize>n);
  const idx = arenaAlloc(<usize>n << 2);
  let count = 0;
  for (let y = 1; y < H - 1; y++) {
    for (let x = 1; x < W - 1; x++) {
      const i = y * W + x;
      if (load<f32>(img + (<usize>i << 2)) >= BIN) {
        store<u8>(b + <usize>i, 1);
        store<i32>(idx + (<usize>count << 2), i);
        count++;
      }
    }
  }
  const del = arenaAlloc(<usize>n << 2);
  if (!thinLutReady) initThinLut();
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const first = thinPass(b, idx, count, del, W, false);
    if (first > 0) count = compact(b, idx, count);
    const second = thinPass(b, idx, count, del, W, true);
    if (second > 0) count = compact(b, idx, count);
    if (first + second == 0) break;
  }
  return b;
}

// Gaussian kernel, sigma 1 px, radius 3 (normalised to sum 1).
const K0: f32 = 0.39905;
const K1: f32 = 0.24203;
const K2: f32 = 0.054;
const K3: f32 = 0.00443;

@inline function tap(d: i32): f32 {
  return d == 1 ? K1 : d == 2 ? K2 : K3;
}

/** The blur's horizontal taps at pixel x of the row at `row` (scalar; near the edges the missing taps are dropped). */
@inline function blurX(row: usize, W: i32, x: i32): f32 {
  const p = row + (<usize>x << 2);
  let s: f32 = K0 * load<f32>(p);
  if (x >= 3 && x < W - 3) {
    s += K1 * load<f32>(p - 4);
    s += K1 * load<f32>(p + 4);
    s += K2 * load<f32>(p - 8);
    s += K2 * load<f32>(p + 8);
    s += K3 * load<f32>(p - 12);
    s += K3 * load<f32>(p + 12);
  } else {
    for (let d = 1; d <= 3; d++) {
      if (x - d >= 0) s += tap(d) * load<f32>(row + (<usize>(x - d) << 2));
      if (x + d < W) s += tap(d) * load<f32>(row + (<usize>(x + d) << 2));
    }
  }
  return s;
}

/** The blur's vertical taps at pixel x of row y of `img` (scalar; near the edges the missing taps are dropped). */
@inline function blurY(img: usize, W: i32, H: i32, x: i32, y: i32): f32 {
  const stride = <usize>W << 2;
  const p = img + (<usize>(y * W + x) << 2);
  let s: f32 = K0 * load<f32>(p);
  if (y >= 3 && y < H - 3) {
    s += K1 * load<f32>(p - stride);
    s += K1 * load<f32>(p + stride);
    s += K2 * load<f32>(p - 2 * stride);
    s += K2 * load<f32>(p + 2 * stride);
    s += K3 * load<f32>(p - 3 * stride);
    s += K3 * load<f32>(p + 3 * stride);
  } else {
    for (let d = 1; d <= 3; d++) {
      if (y - d >= 0) s += tap(d) * load<f32>(img + (<usize>((y - d) * W + x) << 2));
      if (y + d < H) s += tap(d) * load<f32>(img + (<usize>((y + d) * W + x) << 2));
    }
  }
  return s;
}

/**
 * Seven taps (K0, then K1, K2, K3 on either side) at four neighbouring outputs, `step` bytes between
 * taps: blurX and blurY's interior sums, lane by lane in the same order (SIMD has no fused multiply-add),
 * so each lane equals the scalar result bit for bit.
 */
@inline function taps4(p: usize, step: usize): v128 {
  let s = f32x4.mul(f32x4.splat(K0), v128.load(p));
  s = f32x4.add(s, f32x4.mul(f32x4.splat(K1), v128.load(p - step)));
  s = f32x4.add(s, f32x4.mul(f32x4.splat(K1), v128.load(p + step)));
  s = f32x4.add(s, f32x4.mul(f32x4.splat(K2), v128.load(p - 2 * step)));
  s = f32x4.add(s, f32x4.mul(f32x4.splat(K2), v128.load(p + 2 * step)));
  s = f32x4.add(s, f32x4.mul(f32x4.splat(K3), v128.load(p - 3 * step)));
  return f32x4.add(s, f32x4.mul(f32x4.splat(K3), v128.load(p + 3 * step)));
}

/** Separable Gaussian blur of a W x H f32 image into a new one (edges: the missing taps are dropped). */
function blur(img: usize, W: i32, H: i32): usize {
  const tmp = arenaAlloc(<usize>(W * H) << 2);
  const out = arenaAlloc(<usize>(W * H) << 2);
  for (let y = 0; y < H; y++) {
    const row = img + (<usize>(y * W) << 2);
    const dst = tmp + (<usize>(y * W) << 2);
    let x = 0;
    for (; x < min(3, W); x++) store<f32>(dst + (<usize>x << 2), blurX(row, W, x));
    // Away from the edges every tap is inside: four outputs at a time.
    for (; x + 4 <= W - 3; x += 4) v128.store(dst + (<usize>x << 2), taps4(row + (<usize>x << 2), 4));
    for (; x < W; x++) store<f32>(dst + (<usize>x << 2), blurX(row, W, x));
  }
  const stride = <usize>W << 2;
  for (let y = 0; y < H; y++) {
    const dst = out + (<usize>(y * W) << 2);
    let x = 0;
    if (y >= 3 && y < H - 3) {
      const src = tmp + (<usize>(y * W) << 2);
      for (; x + 4 <= W; x += 4) v128.store(dst + (<usize>x << 2), taps4(src + (<usize>x << 2), stride));
    }
    for (; x < W; x++) store<f32>(dst + (<usize>x << 2), blurY(tmp, W, H, x, y));
  }
  return out;
}

@inline function soft(g: f32, level: f32): f32 {
  let v = (g - level) / RAMP + 0.5;
  if (v < 0) v = 0;
  if (v > 1) v = 1;
  return v;
}

/** Side of the grid on which the cut level is set, in pixels of the normalised image. */
const TILE: i32 = 32;
/** Skeleton pixels a window needs to count in the median; with none such, the whole image sets the level. */
const MIN_WINDOW_SKELETON: i32 = 12;
const BINS: i32 = 256;

/** The histogram bin of each pixel of the blurred image `g`, as a W x H u8 map (levelFor reads it). */
function binMap(g: usize, n: i32): usize {
  const m = arenaAlloc(<usize>n);
  // Sixteen at a time: the same truncation and clamp lane by lane, narrowed to bytes.
  const scale = f32x4.splat(<f32>BINS);
  const lo = i32x4.splat(0), hi = i32x4.splat(BINS - 1);
  let i = 0;
  for (; i + 16 <= n; i += 16) {
    const p = g + (<usize>i << 2);
    const a = i32x4.min_s(i32x4.max_s(i32x4.trunc_sat_f32x4_s(f32x4.mul(v128.load(p), scale)), lo), hi);
    const b = i32x4.min_s(i32x4.max_s(i32x4.trunc_sat_f32x4_s(f32x4.mul(v128.load(p + 16), scale)), lo), hi);
    const c = i32x4.min_s(i32x4.max_s(i32x4.trunc_sat_f32x4_s(f32x4.mul(v128.load(p + 32), scale)), lo), hi);
    const d = i32x4.min_s(i32x4.max_s(i32x4.trunc_sat_f32x4_s(f32x4.mul(v128.load(p + 48), scale)), lo), hi);
    v128.store(m + <usize>i, i8x16.narrow_i16x8_u(i16x8.narrow_i32x4_s(a, b), i16x8.narrow_i32x4_s(c, d)));
  }
  for (; i < n; i++) {
    let b = <i32>(load<f32>(g + (<usize>i << 2)) * <f32>BINS);
    if (b < 0) b = 0;
    if (b >= BINS) b = BINS - 1;
    store<u8>(m + <usize>i, <u8>b);
  }
  return m;
}

/**
 * The level at which the soft cut of the blurred image leaves an ink area of `want` over the rectangle
 * [x0, x1) x [y0, y1): a histogram of the blurred values (`bins`, binMap), then a bisection on it (the
 * area falls as the level rises). Most of a window is far from any stroke, in bin 0: such runs are
 * counted 16 pixels at a time. The counts are whole numbers, exact in f32, so the bisection sums what it
 * did when the histogram was built pixel by pixel in f32.
 */
function levelFor(bins: usize, W: i32, x0: i32, y0: i32, x1: i32, y1: i32, want: f32, hist: usize): f32 {
  memory.fill(hist, 0, <usize>BINS << 2);
  let empty = 0;
  for (let y = y0; y < y1; y++) {
    const row = bins + <usize>(y * W);
    let x = x0;
    for (; x + 16 <= x1; x += 16) {
      const v = v128.load(row + <usize>x);
      if (!v128.any_true(v)) {
        empty += 16;
        continue;
      }
      for (let k = x; k < x + 16; k++) {
        const p = hist + (<usize>load<u8>(row + <usize>k) << 2);
        store<i32>(p, load<i32>(p) + 1);
      }
    }
    for (; x < x1; x++) {
      const p = hist + (<usize>load<u8>(row + <usize>x) << 2);
      store<i32>(p, load<i32>(p) + 1);
    }
  }
  store<i32>(hist, load<i32>(hist) + empty);
  let lo: f32 = 0.01;
  let hi: f32 = 0.99;
  for (let step = 0; step < 16; step++) {
    const mid = (lo + hi) * 0.5;
    // The soft cut rises with the bin (binCentre and soft are monotone): below `from` every bin adds
    // exactly 0, and from `full` on every bin adds its count times exactly 1. Only the ramp between needs
    // soft(), and the sum is the same, in the same order, as over every bin.
    const from = firstBin(mid, false);
    const full = firstBin(mid, true);
    let a: f32 = 0;
    for (let b = from; b < BINS; b++) {
      const c = <f32>load<i32>(hist + (<usize>b << 2));
      if (c > 0) a += b < full ? c * soft(binCentre(b), mid) : c;
    }
    if (a > want) lo = mid;
    else hi = mid;
  }
  return (lo + hi) * 0.5;
}

@inline function binCentre(b: i32): f32 {
  return (<f32>b + 0.5) / <f32>BINS;
}

/**
 * The first bin whose soft cut at `level` is above 0, or with `full` is 1 (BINS when none): a bisection,
 * soft being monotone in the bin.
 */
function firstBin(level: f32, full: bool): i32 {
  let lo = 0;
  let hi = BINS;
  while (lo < hi) {
    const m = (lo + hi) >> 1;
    const v = soft(binCentre(m), level);
    if (full ? v >= 1 : v > 0) hi = m;
    else lo = m + 1;
  }
  return lo;
}

/** The weighted median of `n` values (insertion sort: at most about a hundred windows, since the image holds about 48,000 pixels). */
function weightedMedian(v: usize, w: usize, n: i32, total: f32): f32 {
  for (let i = 1; i < n; i++) {
    const a = load<f32>(v + (<usize>i << 2));
    const b = load<f32>(w + (<usize>i << 2));
    let j = i - 1;
    while (j >= 0 && load<f32>(v + (<usize>j << 2)) > a) {
      store<f32>(v + (<usize>(j + 1) << 2), load<f32>(v + (<usize>j << 2)));
      store<f32>(w + (<usize>(j + 1) << 2), load<f32>(w + (<usize>j << 2)));
      j--;
    }
    store<f32>(v + (<usize>(j + 1) << 2), a);
    store<f32>(w + (<usize>(j + 1) << 2), b);
  }
  let acc: f32 = 0;
  for (let i = 0; i < n; i++) {
    acc += load<f32>(w + (<usize>i << 2));
    if (acc >= total * 0.5) return load<f32>(v + (<usize>i << 2));
  }
  return load<f32>(v + (<usize>(n - 1) << 2));
}

/** The summed-area table of the u8 mask `sk` (W x H), (W + 1) x (H + 1) i32 with a zero first row and column. */
function skeletonSums(sk: usize, W: i32, H: i32): usize {
  const stride = W + 1;
  const sat = arenaCalloc(<usize>(stride * (H + 1)) << 2);
  for (let y = 0; y < H; y++) {
    let run = 0;
    for (let x = 0; x < W; x++) {
      run += <i32>load<u8>(sk + <usize>(y * W + x));
      const above = load<i32>(sat + (<usize>(y * stride + x + 1) << 2));
      store<i32>(sat + (<usize>((y + 1) * stride + x + 1) << 2), above + run);
    }
  }
  return sat;
}

@inline function satAt(sat: usize, stride: i32, x: i32, y: i32): i32 {
  return load<i32>(sat + (<usize>(y * stride + x) << 2));
}

/** The mask's count over [x0, x1) x [y0, y1) from its summed-area table. */
@inline function boxSum(sat: usize, W: i32, x0: i32, y0: i32, x1: i32, y1: i32): i32 {
  const s = W + 1;
  return satAt(sat, s, x1, y1) - satAt(sat, s, x0, y1) - satAt(sat, s, x1, y0) + satAt(sat, s, x0, y0);
}

/**
 * The W x H ink image `img` (f32 in [0, 1]) redrawn with a mean stroke width of `target` pixels, as a
 * new image; `img` itself when it is too small or holds too little ink to measure. The skeleton's length
 * L hardly depends on the pen, and the ink area is about L times the mean width. The image is blurred so
 * that each stroke's cross-section becomes a smooth bump, then cut at the level where the ink area is
 * target x L: a thick and a thin pen come out alike, while the outline and the variation of width along
 * each stroke survive.
 *
 * One level serves the whole image (the same pen everywhere), but it is not measured on the whole image:
 * a blot, a stamp or a scribble has much area and little skeleton, and would raise that level until every
 * other stroke thins, so that one deviating spot moves the features everywhere. Each window of a
 * TILE-pixel grid (twice as wide as a tile) finds its own level; the image takes their median, weighted
 * by skeleton length, which such a spot cannot move.
 */
export function normaliseWidth(img: usize, W: i32, H: i32, target: f32): usize {
  strokeWidth = 0;
  skeletonLength = 0;
  if (W < 8 || H < 8) return img;
  const n = W * H;
  const sk = skeleton(img, W, H);
  let len = 0;
  let area: f32 = 0;
  for (let i = 0; i < n; i++) {
    len += <i32>load<u8>(sk + <usize>i);
    area += load<f32>(img + (<usize>i << 2));
  }
  skeletonLength = len;
  strokeWidth = len > 0 ? area / <f32>len : 0;
  if (len < 8) return img;
  const g = blur(img, W, H);
  const bins = binMap(g, n);
  const hist = arenaAlloc(<usize>BINS << 2);
  // Skeleton pixels in the rectangle [0, x) x [0, y) at sat[y * (W + 1) + x]: each window's count in
  // four reads instead of a pass over the window.
  const sat = skeletonSums(sk, W, H);

  // One level per window centred on each tile of the grid; the image's level is their median, weighted
  // by each window's skeleton length.
  const tx = (W + TILE - 1) / TILE;
  const ty = (H + TILE - 1) / TILE;
  const count = tx * ty;
  const levels = arenaAlloc(<usize>count << 2);
  const weights = arenaAlloc(<usize>count << 2);
  const half = TILE / 2;
  let used = 0;
  let total: f32 = 0;
  for (let j = 0; j < ty; j++) {
    for (let i = 0; i < tx; i++) {
      const x0 = max(0, i * TILE - half), x1 = min(W, (i + 1) * TILE + half);
      const y0 = max(0, j * TILE - half), y1 = min(H, (j + 1) * TILE + half);
      const l = boxSum(sat, W, x0, y0, x1, y1);
      if (l < MIN_WINDOW_SKELETON) continue;
      store<f32>(levels + (<usize>used << 2), levelFor(bins, W, x0, y0, x1, y1, target * <f32>l, hist));
      store<f32>(weights + (<usize>used << 2), <f32>l);
      total += <f32>l;
      used++;
    }
  }
  const level = used > 0 ? weightedMedian(levels, weights, used, total) : levelFor(bins, W, 0, 0, W, H, target * <f32>len, hist);
  const out = arenaAlloc(<usize>n << 2);
  // soft() four pixels at a time: the same operations lane by lane, so the same bits.
  const lv = f32x4.splat(level), ramp = f32x4.splat(RAMP), mid = f32x4.splat(0.5);
  const zero = f32x4.splat(0), one = f32x4.splat(1);
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const v = f32x4.add(f32x4.div(f32x4.sub(v128.load(g + (<usize>i << 2)), lv), ramp), mid);
    v128.store(out + (<usize>i << 2), f32x4.min(f32x4.max(v, zero), one));
  }
  for (; i < n; i++) store<f32>(out + (<usize>i << 2), soft(load<f32>(g + (<usize>i << 2)), level));
  return out;
}
