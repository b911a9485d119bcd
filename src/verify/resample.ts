import type { Raster } from "./types";

/**
 * Shrink a grey raster to exactly width x height by area averaging: each output pixel is the mean of the
 * source rectangle it covers (rounded to whole source pixels). Plain JavaScript on purpose: the only large
 * buffer is the output, and nothing lands in a WebAssembly memory that would keep its high-water mark for
 * the isolate's life (as photon's and the core's do). Never enlarges: callers ask for at most the source size.
 */
export function areaResample(r: Raster, width: number, height: number): Raster {
  const { width: w, height: h, data } = r;
  const W = Math.max(1, Math.min(w, width));
  const H = Math.max(1, Math.min(h, height));
  if (W === w && H === h) return r;
  const out = new Uint8Array(W * H);
  const x0 = new Int32Array(W + 1);
  for (let X = 0; X <= W; X++) x0[X] = Math.min(w, Math.round((X * w) / W));
  const acc = new Float64Array(W);
  for (let Y = 0; Y < H; Y++) {
    const ya = Math.round((Y * h) / H);
    const yb = Math.max(ya + 1, Math.round(((Y + 1) * h) / H));
    acc.fill(0);
    for (let y = ya; y < yb; y++) {
      const row = y * w;
      for (let X = 0; X < W; X++) {
        let sum = 0;
        for (let x = x0[X]; x < x0[X + 1]; x++) sum += data[row + x];
        acc[X] += sum;
      }
    }
    for (let X = 0; X < W; X++) out[Y * W + X] = Math.round(acc[X] / ((yb - ya) * Math.max(1, x0[X + 1] - x0[X])));
  }
  return { width: W, height: H, data: out };
}
