// The comparison core. PLACEHOLDER kernel so the build and the .wasm import are wired end to end;
// the verification-core work replaces it.

/** Reserve `bytes` of linear memory for the host to write into; returns the offset. */
export function alloc(bytes: i32): usize {
  return heap.alloc(<usize>bytes);
}

export function free(ptr: usize): void {
  heap.free(ptr);
}

/** Squared L2 distance of two f32 vectors of length n (n a multiple of 4), with SIMD. */
export function l2sq(a: usize, b: usize, n: i32): f32 {
  let acc = f32x4.splat(0);
  for (let i = 0; i < n; i += 4) {
    const d = f32x4.sub(v128.load(a + (<usize>i << 2)), v128.load(b + (<usize>i << 2)));
    acc = f32x4.add(acc, f32x4.mul(d, d));
  }
  return f32x4.extract_lane(acc, 0) + f32x4.extract_lane(acc, 1) + f32x4.extract_lane(acc, 2) + f32x4.extract_lane(acc, 3);
}
