// Zoned features of the normalised ink image: gradient orientation histograms (HOG), uniform LBP(8,1)
// on ink pixels, orientation co-occurrence along the contour (a curvature histogram), ink mass per zone,
// projection profiles, and two sequences across the ink box for elastic matching (columns, orientation
// strips). Zones: a Cartesian pyramid 1x1, 2x4 (rows x columns), 4x8, and polar sectors
// x rings around the ink centroid. Every histogram is L1-normalised, then square-rooted.
import { arenaAlloc, arenaCalloc } from "./arena";
import {
  HOG_BINS, LBP_BINS, POLAR_SECTORS, POLAR_ZONES, PROFILE_X, PROFILE_Y, COOC_BINS, SEQ_LEN, SEQ_DIM,
  STRIP_LEN, STRIP_BINS, STRIP_DIM,
  GROUP_COUNT, groupOffset, featureLength,
} from "./layout";

const PI: f32 = 3.14159265;
const EDGE_MIN: f32 = 0.08;
const LBP_INK_MIN: f32 = 0.15;
const COOC_STEP: f32 = 3.0;

const uniformLut: usize = memory.data(256);
let lutReady = false;

function transitions(c: i32): i32 {
  let t = 0;
  for (let i = 0; i < 8; i++) {
    const a = (c >> i) & 1;
    const b = (c >> ((i + 1) & 7)) & 1;
    if (a != b) t++;
  }
  return t;
}

function initLut(): void {
  let next = 0;
  for (let c = 0; c < 256; c++) {
    if (transitions(c) <= 2) {
      store<u8>(uniformLut + <usize>c, <u8>next);
      next++;
    } else {
      store<u8>(uniformLut + <usize>c, <u8>(LBP_BINS - 1));
    }
  }
  lutReady = true;
}

@inline function addf(p: usize, v: f32): void {
  store<f32>(p, load<f32>(p) + v);
}

@inline function px(img: usize, W: i32, x: i32, y: i32): f32 {
  return load<f32>(img + (<usize>(y * W + x) << 2));
}

/** The four pixels from (x, y) are all paper (exactly 0). */
@inline function paperRun(img: usize, W: i32, x: i32, y: i32): bool {
  return !v128.any_true(v128.load(img + (<usize>(y * W + x) << 2)));
}

/**
 * The polar zone of the offset (dx, dy) from the ink centroid: one of POLAR_SECTORS sectors of the angle
 * atan2(dy, dx) + pi, by eighths of a turn from -pi, and the ring (inside or outside the mean radius). The
 * sector comes from the signs and the larger of |dx| and |dy|, the eighths' edges being the axes and the
 * diagonals, so no arctangent is taken for every ink and edge pixel (feature version 8).
 */
function polarZone(dx: f32, dy: f32, rMean: f32): i32 {
  const ring = dx * dx + dy * dy < rMean * rMean ? 0 : 1;
  return ring * POLAR_SECTORS + polarSector(dx, dy);
}

/** The sector of polarZone: each eighth holds its lower edge, and (0, 0) lies at angle 0 (sector 4). */
@inline export function polarSector(dx: f32, dy: f32): i32 {
  const ax = Mathf.abs(dx), ay = Mathf.abs(dy);
  if (dy < 0) return dx < 0 ? (ay < ax ? 0 : 1) : (ay > ax ? 2 : 3);
  if (dx > 0) return dy < dx ? 4 : 5;
  if (dx == 0) return dy == 0 ? 4 : 6;
  return dy > ax ? 6 : 7;
}

/**
 * The orientation of the gradient (gx, gy), not (0, 0), folded into [0, pi): atan2's angle modulo pi. A
 * polynomial on [0, 1] (within 1.2e-5 rad of the arctangent), reflected into the quadrant. Every edge pixel
 * needs one, and the library's atan2 was a fifth of the HOG pass (feature version 8).
 */
@inline export function foldedAngle(gx: f32, gy: f32): f32 {
  const ax = Mathf.abs(gx), ay = Mathf.abs(gy);
  const steep = ay > ax;
  const a = steep ? ax / ay : ay / ax;
  const s = a * a;
  let r: f32 = ((((<f32>0.0208351 * s - <f32>0.085133) * s + <f32>0.180141) * s - <f32>0.3302995) * s + <f32>0.999866) * a;
  // The diagonals exactly, as atan2 gives them: a sampled stroke's edges often lie on one, and the
  // co-occurrence's eighths have an edge there.
  if (ax == ay) r = PI / 4;
  else if (steep) r = PI / 2 - r;
  // Opposite signs: the second quadrant, or the fourth folded onto it.
  if (r > 0 && (gx < 0) != (gy < 0)) r = PI - r;
  return r;
}

/**
 * The uniform LBP(8,1) bin of an ink pixel of weight v from its neighbours a0 to a7 (clockwise from above
 * left): a neighbour sets its bit when it is at most 0.02 lighter than the pixel.
 */
@inline function lbpBin(v: f32, a0: f32, a1: f32, a2: f32, a3: f32, a4: f32, a5: f32, a6: f32, a7: f32): i32 {
  const t = v - 0.02;
  let code = 0;
  if (a0 >= t) code |= 1;
  if (a1 >= t) code |= 2;
  if (a2 >= t) code |= 4;
  if (a3 >= t) code |= 8;
  if (a4 >= t) code |= 16;
  if (a5 >= t) code |= 32;
  if (a6 >= t) code |= 64;
  if (a7 >= t) code |= 128;
  return <i32>load<u8>(uniformLut + <usize>code);
}

/** Count LBP bin u once in each zoning: 1x1, the 2x4 zone z24, the 4x8 zone z48 and the polar zone pz. */
@inline function countLbp(lbp1: usize, lbp24: usize, lbp48: usize, lbpP: usize, u: i32, z24: i32, z48: i32, pz: i32): void {
  addf(lbp1 + (<usize>u << 2), 1);
  addf(lbp24 + (<usize>(z24 * LBP_BINS + u) << 2), 1);
  addf(lbp48 + (<usize>(z48 * LBP_BINS + u) << 2), 1);
  addf(lbpP + (<usize>(pz * LBP_BINS + u) << 2), 1);
}

/** Per column strip: the ink-weighted sum of rows and the ink weight, then the local centre (stripSplits). */
const stripRowSum: usize = memory.data(STRIP_LEN * 4);
const stripInk: usize = memory.data(STRIP_LEN * 4);
const stripSplit: usize = memory.data(STRIP_LEN * 4);
/** A strip's split is the ink centroid of the strips this many either side of it, itself included. */
const SPLIT_REACH: i32 = 4;

/**
 * The writing's local centre per column strip (feature version 11): the ink centroid's row over the strips
 * within SPLIT_REACH, or `cy` (the whole ink's) where they hold no ink. The orientation strips are split
 * there into above and below, and the column sequence measures its contours from it. A line at the whole
 * signature's centroid crosses a rising or falling signature, or one whose parts sit at different heights,
 * at another height in every strip, so the same stroke can fall on either side of it from one sample to
 * the next. A centre taken over nine strips (about a quarter of the ink box) follows the writing; for the
 * strips, a reach of 8 did worse and one of 2 about as well (docs/accuracy.md, E67). `list` holds the
 * `count` ink pixels listInk listed.
 */
function stripSplits(img: usize, W: i32, list: usize, count: i32, cy: f32): void {
  memory.fill(stripRowSum, 0, STRIP_LEN * 4);
  memory.fill(stripInk, 0, STRIP_LEN * 4);
  for (let k = 0; k < count; k++) {
    const i = load<i32>(list + (<usize>k << 2));
    const y = i / W;
    const s = ((i - y * W) * STRIP_LEN) / W;
    const v = load<f32>(img + (<usize>i << 2));
    addf(stripRowSum + (<usize>s << 2), v * <f32>y);
    addf(stripInk + (<usize>s << 2), v);
  }
  for (let s = 0; s < STRIP_LEN; s++) {
    let rows: f32 = 0, ink: f32 = 0;
    for (let t = max(0, s - SPLIT_REACH); t <= min(STRIP_LEN - 1, s + SPLIT_REACH); t++) {
      rows += load<f32>(stripRowSum + (<usize>t << 2));
      ink += load<f32>(stripInk + (<usize>t << 2));
    }
    store<f32>(stripSplit + (<usize>s << 2), ink > 0 ? rows / ink : cy);
  }
}

/** The last listInk's ink centroid and mean radius (ink-weighted distance from the centroid). */
let inkCx: f32 = 0;
let inkCy: f32 = 0;
let inkRadius: f32 = 0;

/**
 * List the ink pixels (weight not 0) of the W x H image at `at`, as i32 indices in row-major order, and
 * measure their centroid and mean radius (inkCx, inkCy, inkRadius), every sum taken in that order. Paper is
 * skipped sixteen or four pixels at a time; it adds nothing. Returns how many; 0 leaves the measures as they were.
 */
function listInk(img: usize, W: i32, H: i32, at: usize): i32 {
  let count = 0;
  let m: f32 = 0, mx: f32 = 0, my: f32 = 0;
  for (let y = 0; y < H; y++) {
    const row = img + (<usize>(y * W) << 2);
    const fy = <f32>y;
    let x = 0;
    // Four pixels at a time: skipped when all paper, otherwise each taken without a branch (paper adds
    // exactly 0 to the sums, and its index is written over by the next pixel's), since within a stroke's
    // edge ink and paper alternate too irregularly for a branch to be predicted.
    for (; x + 4 <= W; x += 4) {
      const p = row + (<usize>x << 2);
      if (!v128.any_true(v128.load(p))) continue;
      for (let j = 0; j < 4; j++) {
        const v = load<f32>(p + (<usize>j << 2));
        const fx = <f32>(x + j);
        m += v; mx += v * fx; my += v * fy;
        store<i32>(at + (<usize>count << 2), y * W + x + j);
        count += i32(v != 0);
      }
    }
    for (; x < W; x++) {
      const v = load<f32>(row + (<usize>x << 2));
      if (v == 0) continue;
      m += v; mx += v * <f32>x; my += v * fy;
      store<i32>(at + (<usize>count << 2), y * W + x);
      count++;
    }
  }
  if (count == 0 || m <= 0) return 0;
  const cx = mx / m, cy = my / m;
  let rs: f32 = 0;
  // The list is in row-major order: the row follows along, no division per pixel.
  let y = -1, rowStart = -W;
  for (let k = 0; k < count; k++) {
    const i = load<i32>(at + (<usize>k << 2));
    if (i >= rowStart + W) {
      y = i / W;
      rowStart = y * W;
    }
    const dx = <f32>(i - rowStart) - cx, dy = <f32>y - cy;
    rs += load<f32>(img + (<usize>i << 2)) * Mathf.sqrt(dx * dx + dy * dy);
  }
  inkCx = cx;
  inkCy = cy;
  inkRadius = rs / m;
  return count;
}

/** L1-normalise then square-root `zones` consecutive histograms of `bins` each. */
function normaliseHists(p: usize, zones: i32, bins: i32): void {
  for (let z = 0; z < zones; z++) {
    const h = p + (<usize>(z * bins) << 2);
    let s: f32 = 0;
    for (let i = 0; i < bins; i++) s += load<f32>(h + (<usize>i << 2));
    if (s <= 0) continue;
    const inv: f32 = 1 / s;
    for (let i = 0; i < bins; i++) {
      const q = h + (<usize>i << 2);
      store<f32>(q, Mathf.sqrt(load<f32>(q) * inv));
    }
  }
}

/** Every group of lib/layout.ts. */
export const ALL_GROUPS: i32 = (1 << GROUP_COUNT) - 1;

@inline function has(mask: i32, g: i32): bool {
  return ((mask >> g) & 1) != 0;
}

/**
 * Extract the feature vector of the W x H ink image `img` (f32 in [0, 1]). `aspect` is the ink box's
 * width / height in the source crop. Returns a pointer to featureLength() zero-padded f32. Only the
 * groups in `mask` (bit g = group g) are computed, the others left zero: the core reads the texture
 * groups from one image and the shape groups from another (core.ts features), and each pass then skips
 * the work the other's groups need (gradients and angles, or the LBP codes). A group's values do not
 * depend on which other groups are computed.
 */
export function extractFeatures(img: usize, W: i32, H: i32, aspect: f32, mask: i32 = ALL_GROUPS): usize {
  if (!lutReady) initLut();
  const n = featureLength();
  const f = arenaCalloc(<usize>n << 2);
  if (W < 3 || H < 3) return f;
  const doHog = (mask & 0b1111) != 0;
  const doLbp = (mask & 0b11110000) != 0;
  const doMass = has(mask, 8);
  const doProf = has(mask, 9);
  const doCooc = has(mask, 11) || has(mask, 12);
  const doStrip = has(mask, 14);
  // The gradient feeds HOG, the co-occurrence and the orientation strips.
  const doGrad = doHog || doCooc || doStrip;

  const hog1 = f + (<usize>groupOffset(0) << 2);
  const hog24 = f + (<usize>groupOffset(1) << 2);
  const hog48 = f + (<usize>groupOffset(2) << 2);
  const hogP = f + (<usize>groupOffset(3) << 2);
  const lbp1 = f + (<usize>groupOffset(4) << 2);
  const lbp24 = f + (<usize>groupOffset(5) << 2);
  const lbp48 = f + (<usize>groupOffset(6) << 2);
  const lbpP = f + (<usize>groupOffset(7) << 2);
  const mass = f + (<usize>groupOffset(8) << 2);
  const prof = f + (<usize>groupOffset(9) << 2);
  const glob = f + (<usize>groupOffset(10) << 2);
  const co1 = f + (<usize>groupOffset(11) << 2);
  const co24 = f + (<usize>groupOffset(12) << 2);
  const strip = f + (<usize>groupOffset(14) << 2);

  // Centroid and mean radius of the ink.
  const inkList = arenaAlloc(<usize>(W * H) << 2);
  const count = listInk(img, W, H, inkList);
  if (count == 0) return f;
  const cx = inkCx, cy = inkCy, rMean = inkRadius;
  // The orientation strips and the column sequence read where the writing's centre runs.
  if (doStrip || has(mask, 13)) stripSplits(img, W, inkList, count, cy);

  // Per-pixel orientation (unsigned, radians) for the co-occurrence pass; -1 where there is no edge.
  const orient = doCooc ? arenaAlloc(<usize>(W * H) << 2) : 0;
  if (doCooc) memory.fill(orient, 0xff, <usize>(W * H) << 2); // NaN-free sentinel: 0xffffffff reads as NaN, tested below
  // Where the co-occurrence looks from each edge pixel: COOC_STEP along the edge, as a byte per pixel,
  // (dx + 4) | (dy + 4) << 4, from the gradient itself rather than the sine and cosine of its angle.
  const step = doCooc ? arenaAlloc(<usize>(W * H)) : 0;

  const rowBytes = <usize>W << 2;
  for (let y = 1; y < H - 1; y++) {
    const zy24 = (y * 2) / H;
    const zy48 = (y * 4) / H;
    for (let x = 1; x < W - 1; x++) {
      // Most of the image is paper. Four pixels with no ink add nothing without gradients; with them,
      // nothing either when their whole 3 x 3 neighbourhood is paper too (no gradient, no edge): skip
      // such a run of four (x += 3, then the loop's x++).
      if (x + 4 < W) {
        const p = img + <usize>(y * W + x) * 4;
        let any = v128.load(p);
        if (doGrad) {
          const up = p - rowBytes - 4;
          const down = p + rowBytes - 4;
          any = v128.or(any, v128.or(v128.load(p - 4), v128.load(p + 4)));
          any = v128.or(any, v128.or(v128.load(up), v128.load(up + 8)));
          any = v128.or(any, v128.or(v128.load(down), v128.load(down + 8)));
        }
        if (!v128.any_true(any)) {
          x += 3;
          continue;
        }
      }
      const zx24 = (x * 4) / W;
      const zx48 = (x * 8) / W;
      const z24 = zy24 * 4 + zx24;
      const z48 = zy48 * 8 + zx48;
      const v = px(img, W, x, y);
      // Without gradients, only ink pixels add anything (ink mass, profiles, LBP).
      if (!doGrad && v == 0) continue;
      const a0 = px(img, W, x - 1, y - 1), a1 = px(img, W, x, y - 1), a2 = px(img, W, x + 1, y - 1);
      const a3 = px(img, W, x + 1, y), a4 = px(img, W, x + 1, y + 1), a5 = px(img, W, x, y + 1);
      const a6 = px(img, W, x - 1, y + 1), a7 = px(img, W, x - 1, y);
      let gx: f32 = 0, gy: f32 = 0, mag: f32 = 0;
      if (doGrad) {
        gx = (a2 + 2 * a3 + a4) - (a0 + 2 * a7 + a6);
        gy = (a6 + 2 * a5 + a4) - (a0 + 2 * a1 + a2);
        mag = Mathf.sqrt(gx * gx + gy * gy);
      }
      // The polar zone costs an atan2: only where a polar histogram reads it.
      let pz = -1;
      if ((doMass && v > 0) || (doHog && mag > EDGE_MIN) || (doLbp && v > LBP_INK_MIN)) pz = polarZone(<f32>x - cx, <f32>y - cy, rMean);
      if (v > 0) {
        if (doMass) {
          addf(mass + (<usize>z48 << 2), v);
          addf(mass + (<usize>(32 + pz) << 2), v);
        }
        if (doProf) {
          addf(prof + (<usize>((x * PROFILE_X) / W) << 2), v);
          addf(prof + (<usize>(PROFILE_X + (y * PROFILE_Y) / H) << 2), v);
        }
      }
      if (mag > EDGE_MIN) {
        const th = foldedAngle(gx, gy);
        if (doCooc) {
          store<f32>(orient + (<usize>(y * W + x) << 2), th);
          // Along the edge, turned so that it matches the folded angle th (in [0, pi)): the direction
          // (cos th, sin th) is the gradient's own, or its opposite where atan2 gave an angle below 0 or pi.
          const k: f32 = (gy > 0 || (gy == 0 && gx > 0) ? COOC_STEP : -COOC_STEP) / mag;
          const sx = <i32>Mathf.round(-gy * k), sy = <i32>Mathf.round(gx * k);
          store<u8>(step + <usize>(y * W + x), <u8>((sx + 4) | ((sy + 4) << 4)));
        }
        if (doStrip) {
          // Which sector, in which strip, above or below the strip's split (stripSplits): the layout of the
          // signature's strokes along its length, which DTW then matches with some play (feature version 10).
          let o = <i32>(th / PI * <f32>STRIP_BINS);
          if (o >= STRIP_BINS) o = STRIP_BINS - 1;
          const sx = (x * STRIP_LEN) / W;
          const at = sx * STRIP_DIM + (<f32>y < load<f32>(stripSplit + (<usize>sx << 2)) ? 0 : STRIP_BINS) + o;
          addf(strip + (<usize>at << 2), mag);
        }
        if (doHog) {
          const fb = th / PI * <f32>HOG_BINS - 0.5;
          let b0 = <i32>Mathf.floor(fb);
          const fr = fb - <f32>b0;
          if (b0 < 0) b0 += HOG_BINS;
          const b1 = b0 + 1 == HOG_BINS ? 0 : b0 + 1;
          const w0 = mag * (1 - fr), w1 = mag * fr;
          addf(hog1 + (<usize>b0 << 2), w0); addf(hog1 + (<usize>b1 << 2), w1);
          addf(hog24 + (<usize>(z24 * HOG_BINS + b0) << 2), w0); addf(hog24 + (<usize>(z24 * HOG_BINS + b1) << 2), w1);
          addf(hog48 + (<usize>(z48 * HOG_BINS + b0) << 2), w0); addf(hog48 + (<usize>(z48 * HOG_BINS + b1) << 2), w1);
          addf(hogP + (<usize>(pz * HOG_BINS + b0) << 2), w0); addf(hogP + (<usize>(pz * HOG_BINS + b1) << 2), w1);
        }
      }
      if (doLbp && v > LBP_INK_MIN) {
        countLbp(lbp1, lbp24, lbp48, lbpP, lbpBin(v, a0, a1, a2, a3, a4, a5, a6, a7), z24, z48, pz);
      }
    }
  }

  // Orientation co-occurrence a few pixels along the contour: how the stroke direction turns.
  const coocRows = doCooc ? H - 1 : 0;
  for (let y = 1; y < coocRows; y++) {
    const zy24 = (y * 2) / H;
    for (let x = 1; x < W - 1; x++) {
      // Four pixels without an edge (the all-ones sentinel) start nothing.
      if (x + 4 < W && i32x4.all_true(i32x4.eq(v128.load(orient + (<usize>(y * W + x) << 2)), i32x4.splat(-1)))) {
        x += 3;
        continue;
      }
      const th = load<f32>(orient + (<usize>(y * W + x) << 2));
      if (th != th) continue;
      const st = <i32>load<u8>(step + <usize>(y * W + x));
      const qx = x + (st & 15) - 4;
      const qy = y + (st >> 4) - 4;
      if (qx < 0 || qy < 0 || qx >= W || qy >= H) continue;
      const th2 = load<f32>(orient + (<usize>(qy * W + qx) << 2));
      if (th2 != th2) continue;
      let o1 = <i32>(th / PI * 8); if (o1 > 7) o1 = 7;
      let o2 = <i32>(th2 / PI * 8); if (o2 > 7) o2 = 7;
      const b = o1 * 8 + o2;
      const z24 = zy24 * 4 + (x * 4) / W;
      addf(co1 + (<usize>b << 2), 1);
      addf(co24 + (<usize>(z24 * COOC_BINS + b) << 2), 1);
    }
  }

  normaliseHists(hog1, 1, HOG_BINS);
  normaliseHists(hog24, 8, HOG_BINS);
  normaliseHists(hog48, 32, HOG_BINS);
  normaliseHists(hogP, POLAR_ZONES, HOG_BINS);
  normaliseHists(lbp1, 1, LBP_BINS);
  normaliseHists(lbp24, 8, LBP_BINS);
  normaliseHists(lbp48, 32, LBP_BINS);
  normaliseHists(lbpP, POLAR_ZONES, LBP_BINS);
  normaliseHists(mass, 1, 32);
  normaliseHists(mass + (32 << 2), 1, POLAR_ZONES);
  normaliseHists(prof, 1, PROFILE_X);
  normaliseHists(prof + (<usize>PROFILE_X << 2), 1, PROFILE_Y);
  normaliseHists(co1, 1, COOC_BINS);
  normaliseHists(co24, 8, COOC_BINS);
  // One histogram over the whole sequence: a strip's share of the signature's edges is part of its evidence.
  normaliseHists(strip, 1, STRIP_LEN * STRIP_DIM);
  if (has(mask, 10)) store<f32>(glob, Mathf.log(max<f32>(aspect, 0.01)));
  if (has(mask, 13)) columnSequence(img, W, H, f + (<usize>groupOffset(13) << 2));
  // Groups that share a pass with a requested one (the 1x1, 2x4, 4x8 and polar zones of HOG or LBP, the
  // two co-occurrences) were computed together: clear the unrequested.
  for (let g = 0; g < GROUP_COUNT; g++) {
    if (has(mask, g)) continue;
    const at = f + (<usize>groupOffset(g) << 2);
    memory.fill(at, 0, <usize>(groupOffset(g + 1) - groupOffset(g)) << 2);
  }
  return f;
}

/** The texture groups: LBP at every zoning (4 to 7) and the global shape (10). */
export const TEXTURE_GROUPS: i32 = 0b10011110000;

/**
 * extractFeatures(img, W, H, aspect, TEXTURE_GROUPS), bit for bit, with less work: the extra sampling
 * grids' pass (core.ts texture), run eight times per vector, and the texture half of every full pass
 * (core.ts features). extractFeatures walks the whole image for its codes, since the gradients need the
 * paper around the ink; the LBP codes do not, so here they visit only the ink pixels listInk found.
 * Walking the whole image had cost three times the codes themselves. Every sum adds the same terms in the
 * same order, and the histogram counts are whole numbers.
 */
export function textureFeatures(img: usize, W: i32, H: i32, aspect: f32): usize {
  if (!lutReady) initLut();
  const f = arenaCalloc(<usize>featureLength() << 2);
  if (W < 3 || H < 3) return f;
  const inkAt = arenaAlloc(<usize>(W * H) << 2);
  const count = listInk(img, W, H, inkAt);
  if (count == 0) return f;
  const cx = inkCx, cy = inkCy, rMean = inkRadius;

  const lbp1 = f + (<usize>groupOffset(4) << 2);
  const lbp24 = f + (<usize>groupOffset(5) << 2);
  const lbp48 = f + (<usize>groupOffset(6) << 2);
  const lbpP = f + (<usize>groupOffset(7) << 2);
  // The zones' columns, looked up: the divisions per ink pixel were a fifth of this pass (run eight times
  // per vector). The ink list is in row-major order, so the row and its zones follow along.
  const zoneCols = arenaAlloc(<usize>W << 1);
  for (let x = 0; x < W; x++) {
    store<u8>(zoneCols + (<usize>x << 1), <u8>((x * 4) / W));
    store<u8>(zoneCols + (<usize>x << 1) + 1, <u8>((x * 8) / W));
  }
  let y = -1, rowStart = -W, zy24 = 0, zy48 = 0;
  for (let k = 0; k < count; k++) {
    const i = load<i32>(inkAt + (<usize>k << 2));
    if (i >= rowStart + W) {
      y = i / W;
      rowStart = y * W;
      zy24 = ((y * 2) / H) * 4;
      zy48 = ((y * 4) / H) * 8;
    }
    const x = i - rowStart;
    // extractFeatures reads codes inside the one-pixel border only.
    if (y < 1 || y >= H - 1 || x < 1 || x >= W - 1) continue;
    const v = load<f32>(img + (<usize>i << 2));
    if (v <= LBP_INK_MIN) continue;
    const a0 = px(img, W, x - 1, y - 1), a1 = px(img, W, x, y - 1), a2 = px(img, W, x + 1, y - 1);
    const a3 = px(img, W, x + 1, y), a4 = px(img, W, x + 1, y + 1), a5 = px(img, W, x, y + 1);
    const a6 = px(img, W, x - 1, y + 1), a7 = px(img, W, x - 1, y);
    const z24 = zy24 + <i32>load<u8>(zoneCols + (<usize>x << 1));
    const z48 = zy48 + <i32>load<u8>(zoneCols + (<usize>x << 1) + 1);
    const pz = polarZone(<f32>x - cx, <f32>y - cy, rMean);
    countLbp(lbp1, lbp24, lbp48, lbpP, lbpBin(v, a0, a1, a2, a3, a4, a5, a6, a7), z24, z48, pz);
  }
  normaliseHists(lbp1, 1, LBP_BINS);
  normaliseHists(lbp24, 8, LBP_BINS);
  normaliseHists(lbp48, 32, LBP_BINS);
  normaliseHists(lbpP, POLAR_ZONES, LBP_BINS);
  store<f32>(f + (<usize>groupOffset(10) << 2), Mathf.log(max<f32>(aspect, 0.01)));
  return f;
}

const SEQ_INK: f32 = 0.3;

/**
 * The ink box cut into SEQ_LEN column slices; per slice: mean upper contour, mean lower contour, ink density
 * and black-white transitions per column. The contours are fractions of the height, measured from the
 * strips' split where the slice lies (stripSplits, which must have run): from the writing's local centre,
 * not from the top of the box (feature version 11, E69), so that a signature that rises or falls, or a part
 * written higher, moves the contours of that part only. Empty slices sit at the centre (0).
 */
function columnSequence(img: usize, W: i32, H: i32, out: usize): void {
  const invH: f32 = 1 / <f32>H;
  for (let i = 0; i < SEQ_LEN; i++) {
    const x0 = (i * W) / SEQ_LEN;
    const x1 = max(x0 + 1, ((i + 1) * W) / SEQ_LEN);
    let cols = 0, inkCols = 0;
    let top: f32 = 0, bottom: f32 = 0, mass: f32 = 0, trans: f32 = 0;
    for (let x = x0; x < x1 && x < W; x++) {
      cols++;
      let first = -1, last = -1, inside = false;
      for (let y = 0; y < H; y++) {
        const v = px(img, W, x, y);
        mass += v;
        const ink = v > SEQ_INK;
        if (ink) {
          if (first < 0) first = y;
          last = y;
        }
        if (ink && !inside) trans += 1;
        inside = ink;
      }
      if (first >= 0) {
        inkCols++;
        top += <f32>first * invH;
        bottom += <f32>last * invH;
      }
    }
    const p = out + (<usize>(i * SEQ_DIM) << 2);
    const c = load<f32>(stripSplit + (<usize>((i * STRIP_LEN) / SEQ_LEN) << 2)) * invH;
    store<f32>(p, inkCols > 0 ? top / <f32>inkCols - c : 0);
    store<f32>(p + 4, inkCols > 0 ? bottom / <f32>inkCols - c : 0);
    store<f32>(p + 8, cols > 0 ? 3 * mass * invH / <f32>cols : 0);
    store<f32>(p + 12, cols > 0 ? 0.25 * trans / <f32>cols : 0);
  }
}
