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

@inline function at(b: usize, W: i32, x: i32, y: i32): i32 {
  return <i32>load<u8>(b + <usize>(y * W + x));
}

/**
 * One Zhang-Suen sub-iteration over the interior (`second` selects the second one's conditions). The
 * deletions are listed in `del` and applied after the scan, as the method requires. Returns their count.
 */
function thinPass(b: usize, del: usize, W: i32, H: i32, second: bool): i32 {
  let n = 0;
  for (let y = 1; y < H - 1; y++) {
    for (let x = 1; x < W - 1; x++) {
      if (at(b, W, x, y) == 0) continue;
      const p2 = at(b, W, x, y - 1), p3 = at(b, W, x + 1, y - 1), p4 = at(b, W, x + 1, y);
      const p5 = at(b, W, x + 1, y + 1), p6 = at(b, W, x, y + 1), p7 = at(b, W, x - 1, y + 1);
      const p8 = at(b, W, x - 1, y), p9 = at(b, W, x - 1, y - 1);
      const neighbours = p2 + p3 + p4 + p5 + p6 + p7 + p8 + p9;
      if (neighbours < 2 || neighbours > 6) continue;
      // Exactly one 0 -> 1 transition around the pixel: removing it does not split the stroke.
      let a = 0;
      if (p2 == 0 && p3 == 1) a++;
      if (p3 == 0 && p4 == 1) a++;
      if (p4 == 0 && p5 == 1) a++;
      if (p5 == 0 && p6 == 1) a++;
      if (p6 == 0 && p7 == 1) a++;
      if (p7 == 0 && p8 == 1) a++;
      if (p8 == 0 && p9 == 1) a++;
      if (p9 == 0 && p2 == 1) a++;
      if (a != 1) continue;
      if (!second) {
        if (p2 * p4 * p6 != 0 || p4 * p6 * p8 != 0) continue;
      } else if (p2 * p4 * p8 != 0 || p2 * p6 * p8 != 0) continue;
      store<i32>(del + (<usize>n << 2), y * W + x);
      n++;
    }
  }
  for (let i = 0; i < n; i++) store<u8>(b + <usize>load<i32>(del + (<usize>i << 2)), 0);
  return n;
}

/** Length in pixels of the one-pixel skeleton of the binarised ink image (border pixels left out). */
function skeletonPixels(img: usize, W: i32, H: i32): i32 {
  const n = W * H;
  const b = arenaCalloc(<usize>n);
  for (let y = 1; y < H - 1; y++) {
    for (let x = 1; x < W - 1; x++) {
      const i = y * W + x;
      if (load<f32>(img + (<usize>i << 2)) >= BIN) store<u8>(b + <usize>i, 1);
    }
  }
  const del = arenaAlloc(<usize>n << 2);
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    if (thinPass(b, del, W, H, false) + thinPass(b, del, W, H, true) == 0) break;
  }
  let len = 0;
  for (let i = 0; i < n; i++) len += <i32>load<u8>(b + <usize>i);
  return len;
}

// Gaussian kernel, sigma 1 px, radius 3 (normalised to sum 1).
const K0: f32 = 0.39905;
const K1: f32 = 0.24203;
const K2: f32 = 0.054;
const K3: f32 = 0.00443;

@inline function tap(d: i32): f32 {
  return d == 1 ? K1 : d == 2 ? K2 : K3;
}

/** Separable Gaussian blur of a W x H f32 image into a new one (edges: the missing taps are dropped). */
function blur(img: usize, W: i32, H: i32): usize {
  const tmp = arenaAlloc(<usize>(W * H) << 2);
  const out = arenaAlloc(<usize>(W * H) << 2);
  for (let y = 0; y < H; y++) {
    const row = img + (<usize>(y * W) << 2);
    for (let x = 0; x < W; x++) {
      let s: f32 = K0 * load<f32>(row + (<usize>x << 2));
      for (let d = 1; d <= 3; d++) {
        if (x - d >= 0) s += tap(d) * load<f32>(row + (<usize>(x - d) << 2));
        if (x + d < W) s += tap(d) * load<f32>(row + (<usize>(x + d) << 2));
      }
      store<f32>(tmp + (<usize>(y * W + x) << 2), s);
    }
  }
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      let s: f32 = K0 * load<f32>(tmp + (<usize>(y * W + x) << 2));
      for (let d = 1; d <= 3; d++) {
        if (y - d >= 0) s += tap(d) * load<f32>(tmp + (<usize>((y - d) * W + x) << 2));
        if (y + d < H) s += tap(d) * load<f32>(tmp + (<usize>((y + d) * W + x) << 2));
      }
      store<f32>(out + (<usize>(y * W + x) << 2), s);
    }
  }
  return out;
}

@inline function soft(g: f32, level: f32): f32 {
  let v = (g - level) / RAMP + 0.5;
  if (v < 0) v = 0;
  if (v > 1) v = 1;
  return v;
}

/**
 * The W x H ink image `img` (f32 in [0, 1]) redrawn with a mean stroke width of `target` pixels, as a
 * new image; `img` itself when it is too small or holds too little ink to measure. The skeleton's length
 * L hardly depends on the pen, and the ink area is about L times the mean width. The image is blurred so
 * that each stroke's cross-section becomes a smooth bump, then cut at the level where the ink area is
 * target x L: a thick and a thin pen come out alike, while the outline and the variation of width along
 * each stroke survive.
 */
export function normaliseWidth(img: usize, W: i32, H: i32, target: f32): usize {
  strokeWidth = 0;
  skeletonLength = 0;
  if (W < 8 || H < 8) return img;
  const n = W * H;
  const len = skeletonPixels(img, W, H);
  let area: f32 = 0;
  for (let i = 0; i < n; i++) area += load<f32>(img + (<usize>i << 2));
  skeletonLength = len;
  strokeWidth = len > 0 ? area / <f32>len : 0;
  if (len < 8) return img;
  const want: f32 = target * <f32>len;
  const g = blur(img, W, H);
  // The ink area falls as the cut rises: bisect for the level that gives `want` (18 steps: well under
  // the ramp's width).
  let lo: f32 = 0.01;
  let hi: f32 = 0.99;
  for (let step = 0; step < 18; step++) {
    const mid = (lo + hi) * 0.5;
    let a: f32 = 0;
    for (let i = 0; i < n; i++) a += soft(load<f32>(g + (<usize>i << 2)), mid);
    if (a > want) lo = mid;
    else hi = mid;
  }
  const level = (lo + hi) * 0.5;
  const out = arenaAlloc(<usize>n << 2);
  for (let i = 0; i < n; i++) store<f32>(out + (<usize>i << 2), soft(load<f32>(g + (<usize>i << 2)), level));
  return out;
}
