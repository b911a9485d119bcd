/**
 * The WASM distance kernels (wasm/lib/distance.ts) in plain TypeScript: the unit tests hold the two equal,
 * and the speed bench reports how much faster the WASM ones are. Same arithmetic, in f32 lanes of four.
 */
const EPS = 1e-6;

export function chi2(a: Float32Array, b: Float32Array, from: number, to: number): number {
  const lanes = new Float32Array(4);
  for (let i = from; i < to; i += 4) {
    for (let l = 0; l < 4; l++) {
      const x = a[i + l], y = b[i + l];
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
      const from = groupOffsets[k], to = groupOffsets[k + 1];
      out[ri * g + k] = groupKinds[k] === 0 ? chi2(q, r, from, to) : l2sq(q, r, from, to);
    }
  });
  return out;
}
