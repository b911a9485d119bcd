/**
 * The WASM distance kernels (wasm/lib/distance.ts) in plain TypeScript: the unit tests hold the two equal,
 * and the speed bench reports how much faster the WASM ones are. Same arithmetic, in f32 (lanes of four for
 * the histogram kernels).
 */
const EPS = 1e-6;

export function chi2(a: Float32Array, b: Float32Array, from: number, to: number): number {
  const lanes = new Float32Array(4);
  for (let i = from; i < to; i += 4) {
    for (let l = 0; l < 4; l++) {
      const x = a[i + l],
        y = b[i + l];
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

/** Dynamic time warping of two column sequences (L1 step cost, Sakoe-Chiba band), over the length. */
export function dtw(a: Float32Array, b: Float32Array, from: number): number {
  const n = SEQ_LEN;
  let prev = new Float32Array(n + 1).fill(1e30);
  let cur = new Float32Array(n + 1);
  prev[0] = 0;
  for (let i = 1; i <= n; i++) {
    cur.fill(1e30);
    const lo = Math.max(1, i - SEQ_BAND),
      hi = Math.min(n, i + SEQ_BAND);
    const pa = from + (i - 1) * SEQ_DIM;
    for (let j = lo; j <= hi; j++) {
      const pb = from + (j - 1) * SEQ_DIM;
      let cost = 0;
      for (let k = 0; k < SEQ_DIM; k++) cost = Math.fround(cost + Math.abs(Math.fround(a[pa + k] - b[pb + k])));
      cur[j] = Math.fround(cost + Math.min(prev[j - 1], prev[j], cur[j - 1]));
    }
    [prev, cur] = [cur, prev];
  }
  return Math.fround(prev[n] / n);
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
      out[ri * g + k] = kind === 0 ? chi2(q, r, from, to) : kind === 1 ? l2sq(q, r, from, to) : dtw(q, r, from);
    }
  });
  return out;
}
