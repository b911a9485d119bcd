// Distance kernels over the feature groups, four lanes at a time. src/verify/kernels-ts.ts is the same
// arithmetic in plain TypeScript (tests hold the two equal; the speed bench compares them).
import { GROUP_COUNT, G_KIND, SEQ_BAND, SEQ_DIM, SEQ_LEN, STRIP_BAND, STRIP_DIM, STRIP_LEN, groupOffset, featureLength } from "./layout";

const EPS: f32 = 1e-6;

/** Chi-square over n f32 (n a multiple of 4): sum (a - b)^2 / (a + b). */
export function chi2(a: usize, b: usize, n: i32): f32 {
  let acc = f32x4.splat(0);
  const eps = f32x4.splat(EPS);
  for (let i = 0; i < n; i += 4) {
    const off = <usize>i << 2;
    const x = v128.load(a + off);
    const y = v128.load(b + off);
    const d = f32x4.sub(x, y);
    acc = f32x4.add(acc, f32x4.div(f32x4.mul(d, d), f32x4.add(f32x4.add(x, y), eps)));
  }
  return f32x4.extract_lane(acc, 0) + f32x4.extract_lane(acc, 1) + f32x4.extract_lane(acc, 2) + f32x4.extract_lane(acc, 3);
}

/** Squared L2 over n f32 (n a multiple of 4). */
export function l2sq(a: usize, b: usize, n: i32): f32 {
  let acc = f32x4.splat(0);
  for (let i = 0; i < n; i += 4) {
    const off = <usize>i << 2;
    const d = f32x4.sub(v128.load(a + off), v128.load(b + off));
    acc = f32x4.add(acc, f32x4.mul(d, d));
  }
  return f32x4.extract_lane(acc, 0) + f32x4.extract_lane(acc, 1) + f32x4.extract_lane(acc, 2) + f32x4.extract_lane(acc, 3);
}

// One row more than the longer of the two sequences.
const DTW_ROW: i32 = (SEQ_LEN > STRIP_LEN ? SEQ_LEN : STRIP_LEN) + 1;
const dtwPrev: usize = memory.data(DTW_ROW * 4);
const dtwCur: usize = memory.data(DTW_ROW * 4);
const INF: f32 = 1e30;

/**
 * Dynamic time warping of two sequences of n steps, dim f32 each, inside a Sakoe-Chiba band of `band`
 * steps, divided by n: tolerant of a part of the signature drifting sideways or a tail drawn longer, which
 * fixed zones are not. The step cost is the L1 distance (`chiSquare` false; dim must be 4) or chi2.
 */
function bandedDtw(a: usize, b: usize, n: i32, dim: i32, band: i32, chiSquare: bool): f32 {
  for (let j = 0; j <= n; j++) store<f32>(dtwPrev + (<usize>j << 2), INF);
  store<f32>(dtwPrev, 0);
  for (let i = 1; i <= n; i++) {
    for (let j = 0; j <= n; j++) store<f32>(dtwCur + (<usize>j << 2), INF);
    const lo = max(1, i - band);
    const hi = min(n, i + band);
    const pa = a + (<usize>((i - 1) * dim) << 2);
    for (let j = lo; j <= hi; j++) {
      const pb = b + (<usize>((j - 1) * dim) << 2);
      let cost: f32;
      if (chiSquare) cost = chi2(pa, pb, dim);
      else {
        const d = f32x4.abs(f32x4.sub(v128.load(pa), v128.load(pb)));
        cost = f32x4.extract_lane(d, 0) + f32x4.extract_lane(d, 1) + f32x4.extract_lane(d, 2) + f32x4.extract_lane(d, 3);
      }
      const up = load<f32>(dtwPrev + (<usize>j << 2));
      const left = load<f32>(dtwCur + (<usize>(j - 1) << 2));
      const diag = load<f32>(dtwPrev + (<usize>(j - 1) << 2));
      store<f32>(dtwCur + (<usize>j << 2), cost + min(diag, min(up, left)));
    }
    memory.copy(dtwPrev, dtwCur, <usize>(n + 1) << 2);
  }
  return load<f32>(dtwPrev + (<usize>n << 2)) / <f32>n;
}

/** The column sequences (group 13): L1 step cost over their SEQ_DIM (4) values. */
export function dtw(a: usize, b: usize): f32 {
  return bandedDtw(a, b, SEQ_LEN, SEQ_DIM, SEQ_BAND, false);
}

/** The orientation strips (group 14): chi-square step cost over each strip's histograms. */
export function dtwStrips(a: usize, b: usize): f32 {
  return bandedDtw(a, b, STRIP_LEN, STRIP_DIM, STRIP_BAND, true);
}

/**
 * Per-group distances of `q` to each of `count` vectors stored back to back at `refs`:
 * out[r * GROUP_COUNT + g] (f32).
 */
export function groupDistances(q: usize, refs: usize, count: i32, out: usize): void {
  const len = featureLength();
  for (let r = 0; r < count; r++) {
    const rv = refs + (<usize>(r * len) << 2);
    for (let g = 0; g < GROUP_COUNT; g++) {
      const off = <usize>groupOffset(g) << 2;
      const n = groupOffset(g + 1) - groupOffset(g);
      const kind = unchecked(G_KIND[g]);
      const d =
        kind == 0 ? chi2(q + off, rv + off, n) : kind == 1 ? l2sq(q + off, rv + off, n) : kind == 2 ? dtw(q + off, rv + off) : dtwStrips(q + off, rv + off);
      store<f32>(out + (<usize>(r * GROUP_COUNT + g) << 2), d);
    }
  }
}
