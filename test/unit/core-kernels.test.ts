// The WASM core: its distance kernels equal the plain TypeScript ones, and it copes with blank and bad input.
import { describe, expect, it } from "vitest";
import { getCore } from "../../src/verify/core-module";
import { groupDistancesTs } from "../../src/verify/kernels-ts";
import { blankPage, makeWriter, renderSignature } from "../fixtures/generator";

const core = getCore();

describe("WASM core", () => {
  it("computes the same per-group distances as the TypeScript kernels", () => {
    const vecs = [1, 2, 3, 4].map((seed) => core.extract(renderSignature(makeWriter(seed), { variant: seed })).main.vector);
    const wasm = core.groupDistances(vecs[0], vecs.slice(1));
    const ts = groupDistancesTs(vecs[0], vecs.slice(1), core.groupOffsets, core.groupKinds);
    expect(wasm.length).toBe(3 * core.groupCount);
    for (let i = 0; i < wasm.length; i++) expect(wasm[i]).toBeCloseTo(ts[i], 4);
    // Distances are real: a signature is at distance 0 from itself and not from others.
    expect(Array.from(core.groupDistances(vecs[0], [vecs[0]])).every((d) => d === 0)).toBe(true);
    expect(wasm.some((d) => d > 0.01)).toBe(true);
  });

  it("also agrees on arbitrary non-negative vectors with the L2 groups", () => {
    const n = core.featureLength;
    const a = new Float32Array(n).map((_, i) => ((i * 7919) % 101) / 100);
    const b = new Float32Array(n).map((_, i) => ((i * 104729) % 97) / 96);
    const wasm = core.groupDistances(a, [b]);
    const ts = groupDistancesTs(a, [b], core.groupOffsets, core.groupKinds);
    for (let g = 0; g < core.groupCount; g++) expect(wasm[g] / ts[g]).toBeCloseTo(1, 5);
  });

  it("reports a blank crop as no ink, with an all-zero vector", () => {
    const { main } = core.extract(blankPage(300, 120));
    expect(main.inkFound).toBe(false);
    expect(main.vector.every((v) => v === 0)).toBe(true);
  });

  it("finds the tight ink box of a signature drawn on a large margin", () => {
    const sig = renderSignature(makeWriter(9));
    const page = blankPage(sig.width + 200, sig.height + 100);
    for (let y = 0; y < sig.height; y++) page.data.set(sig.data.subarray(y * sig.width, (y + 1) * sig.width), (y + 60) * page.width + 150);
    const a = core.extract(sig).main;
    const b = core.extract(page).main;
    expect(b.inkBox.x - a.inkBox.x).toBeCloseTo(150, -1);
    expect(b.inkBox.y - a.inkBox.y).toBeCloseTo(60, -1);
    // Margins do not change the features.
    const d = core.groupDistances(a.vector, [b.vector]);
    expect(Math.max(...d)).toBeLessThan(1e-3);
  });

  it("leaves an isolated speck of dust out of the ink box", () => {
    const sig = renderSignature(makeWriter(11));
    const dusty = { ...sig, data: sig.data.slice() };
    // A 3x3 speck near the top-right corner, well away from the strokes.
    for (let y = 2; y < 5; y++) for (let x = sig.width - 5; x < sig.width - 2; x++) dusty.data[y * sig.width + x] = 30;
    const clean = core.extract(sig).main;
    const dirty = core.extract(dusty).main;
    expect(dirty.inkBox).toEqual(clean.inkBox);
    const d = core.groupDistances(clean.vector, [dirty.vector]);
    expect(Math.max(...d)).toBeLessThan(0.05);
  });

  it("refuses a raster whose data is shorter than its size", () => {
    expect(() => core.extract({ width: 100, height: 100, data: new Uint8Array(50) })).toThrow(RangeError);
  });
});
