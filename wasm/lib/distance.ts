// Distance kernels over the feature groups, four lanes at a time. src/verify/kernels-ts.ts is the same
// arithmetic in plain TypeScript (tests hold the two equal; the speed bench compares them).
import { GROUP_COUNT, G_KIND, groupOffset, featureLength } from "./layout";

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
      const d = unchecked(G_KIND[g]) == 0 ? chi2(q + off, rv + off, n) : l2sq(q + off, rv + off, n);
      store<f32>(out + (<usize>(r * GROUP_COUNT + g) << 2), d);
    }
  }
}
