/**
 * The WASM distance kernels (wasm/lib/distance.ts) in plain TypeScript: the unit tests hold the two equal,
 * and the speed bench reports how much faster the WASM ones are. Same arithmetic, in f32 (lanes of four for
 * the histogram kernels).
 */
const EPS = 1e-6;

export function chi2(a: Float32Array, b: Float32Array, from: number, to: number): number {
  return chi2At(a, from, b, from, to - from);
}

/** chi2 of n values from a[ia] and b[ib] (n a multiple of 4). */
function chi2At(a: Float32Array, ia: number, b: Float32Array, ib: number, n: number): number {
  const lanes = new Float32Array(4);
  for (let i = 0; i < n; i += 4) {
    for (let l = 0; l < 4; l++) {
      const x = a[ia + i + l],
        y = b[ib + i + l];
      const d = Math.fround(x - y);
      lanes[l] = Math.fround(lanes[l] + Math.fround(Math.fround(d * d) / Math.fround(Math.fround(x + y) + EPS)));
    }
  }
  return Math.fround(Math.fround(Math.fround(lanes[0] + lanes[1]) + lanes[2]) + lanes[3]);
}

export function l2sq(a: Float32Array, b: Float32Array, from: number, to: number): number {
  const lanes = new Float32Array(4);
  for (let i = from; i < to; i += 4) {
    for (let l = 0; l < 4; l++) {
      const d = Math.fround(a[i + l] - b[i + l]);
      lanes[l] = Math.fround(lanes[l] + Math.fround(d * d));
    }
  }
  return Math.fround(Math.fround(Math.fround(lanes[0] + lanes[1]) + lanes[2]) + lanes[3]);
}

export const SEQ_LEN = 64;
export const SEQ_DIM = 4;
export const SEQ_BAND = 8;
export const STRIP_LEN = 32;
export const STRIP_DIM = 16;
export const STRIP_BAND = 4;

/**
 * Dynamic time warping of two sequences of n steps, dim values each, inside a band of `band` steps, over
 * n; the step cost L1 (`chiSquare` false) or chi2.
 */
function bandedDtw(a: Float32Array, b: Float32Array, from: number, n: number, dim: number, band: number, chiSquare: boolean): number {
  let prev = new Float32Array(n + 1).fill(1e30);
  let cur = new Float32Array(n + 1);
  prev[0] = 0;
  for (let i = 1; i <= n; i++) {
    cur.fill(1e30);
    const lo = Math.max(1, i - band),
      hi = Math.min(n, i + band);
    const pa = from + (i - 1) * dim;
    for (let j = lo; j <= hi; j++) {
      const pb = from + (j - 1) * dim;
      let cost = 0;
      if (chiSquare) cost = chi2At(a, pa, b, pb, dim);
      else for (let k = 0; k < dim; k++) cost = Math.fround(cost + Math.abs(Math.fround(a[pa + k] - b[pb + k])));
      cur[j] = Math.fround(cost + Math.min(prev[j - 1], prev[j], cur[j - 1]));
    }
    [prev, cur] = [cur, prev];
  }
  return Math.fround(prev[n] / n);
}

/** The column sequences (group 13): L1 step cost. */
export function dtw(a: Float32Array, b: Float32Array, from: number): number {
  return bandedDtw(a, b, from, SEQ_LEN, SEQ_DIM, SEQ_BAND, false);
}

/** The orientation strips (group 14): chi-square step cost. */
export function dtwStrips(a: Float32Array, b: Float32Array, from: number): number {
  return bandedDtw(a, b, from, STRIP_LEN, STRIP_DIM, STRIP_BAND, true);
}

/** Same output as Core.groupDistances: refs.length * groupCount, ref-major. */
export function groupDistancesTs(
  q: Float32Array,
  refs: readonly Float32Array[],
  groupOffsets: readonly number[],
  groupKinds: readonly number[],
): Float32Array {
  const g = groupKinds.length;
  const out = new Float32Array(refs.length * g);
  refs.forEach((r, ri) => {
    for (let k = 0; k < g; k++) {
      const from = groupOffsets[k],
        to = groupOffsets[k + 1];
      const kind = groupKinds[k];
      out[ri * g + k] =
        kind === 0 ? chi2(q, r, from, to) : kind === 1 ? l2sq(q, r, from, to) : kind === 2 ? dtw(q, r, from) : dtwStrips(q, r, from);
    }
  });
  return out;
}
