// Paper under uneven light (a lamp to one side, a phone's shadow) is evened out before the ink threshold:
// otherwise the paper on the dark side is darker than light ink on the other, and reads as ink.
import { describe, expect, it } from "vitest";
import coreModule from "../../wasm/build/core.wasm";
import { createCore } from "../../src/verify/core";
import { makeWriter, renderSignature } from "../fixtures/generator";
import type { Raster } from "../../src/verify/types";

/** A grey scan of a light pen: ink at 150, paper at 245, the signature with a margin of paper around it. */
function lightPenScan(writer: number): Raster {
  const sig = renderSignature(makeWriter(writer), { width: 520, height: 200 });
  const W = 640;
  const H = 300;
  const out = new Uint8Array(W * H).fill(245);
  for (let y = 0; y < sig.height; y++) {
    for (let x = 0; x < sig.width; x++) {
      const ink = 1 - sig.data[y * sig.width + x] / 255;
      out[(y + 50) * W + x + 60] = Math.round(245 - ink * 95);
    }
  }
  return { width: W, height: H, data: out };
}

/** The same image with the light falling linearly to `floor` of its level from left to right. */
function litFromLeft(r: Raster, floor: number): Raster {
  const data = new Uint8Array(r.data.length);
  for (let y = 0; y < r.height; y++)
    for (let x = 0; x < r.width; x++) {
      const light = 1 - (1 - floor) * (x / (r.width - 1));
      data[y * r.width + x] = Math.round(r.data[y * r.width + x] * light);
    }
  return { ...r, data };
}

describe("uneven light", () => {
  it("leaves the ink box and the features of a light pen as they are on evenly lit paper", () => {
    const core = createCore(coreModule);
    for (const writer of [4, 9]) {
      const even = lightPenScan(writer);
      const clean = core.extract(even).main;
      // Paper at the right edge falls to 245 x 0.65 = 159: darker than the ink's 150 on the left side is light.
      const lit = core.extract(litFromLeft(even, 0.65)).main;
      expect(lit.inkFound).toBe(true);
      // The paper on the dark side is not ink: the box stays the signature's, within a few pixels.
      for (const k of ["x", "y", "w", "h"] as const)
        expect(Math.abs(lit.inkBox[k] - clean.inkBox[k]), `${k} of writer ${writer}`).toBeLessThanOrEqual(6);
      // And the vector is the same writer's: closer to the clean one than another writer's signature is.
      const other = core.extract(lightPenScan(writer + 20)).main;
      const sum = (d: Float32Array) => d.reduce((a, v) => a + v, 0);
      const toLit = sum(core.groupDistances(clean.vector, [lit.vector]));
      const toOther = sum(core.groupDistances(clean.vector, [other.vector]));
      expect(toLit).toBeLessThan(toOther / 3);
    }
  });

  it("keeps the ink box of a light pen with a shadow's edge running through the signature", () => {
    const core = createCore(coreModule);
    for (const writer of [4, 9]) {
      const even = lightPenScan(writer);
      const clean = core.extract(even).main;
      // Everything right of x = 300 in a shadow at 65% light, with an 8 px penumbra: the paper there (159)
      // is darker than the ink on the lit side (150) is light.
      const shaded = {
        ...even,
        data: even.data.map((v, i) => Math.round(v * (1 - 0.35 * Math.min(1, Math.max(0, ((i % even.width) - 300) / 8 + 0.5))))),
      };
      const lit = core.extract(shaded).main;
      for (const k of ["x", "y", "w", "h"] as const)
        expect(Math.abs(lit.inkBox[k] - clean.inkBox[k]), `${k} of writer ${writer}`).toBeLessThanOrEqual(6);
      const other = core.extract(lightPenScan(writer + 20)).main;
      const sum = (d: Float32Array) => d.reduce((a, v) => a + v, 0);
      expect(sum(core.groupDistances(clean.vector, [lit.vector]))).toBeLessThan(sum(core.groupDistances(clean.vector, [other.vector])) / 3);
    }
  });

  it("evens out a shadow over a whole band of a wide bitonal crop (once taken for ink)", () => {
    // A black-on-white signature on a wide crop, the top 90 rows in a shadow at 65% light with an 8 px
    // penumbra. A coarse grid of tiles (two rows of them here) took the whole shaded row of tiles for ink
    // and left the crop as it was: the shaded paper (166) then read as ink, and the box became the crop's.
    const core = createCore(coreModule);
    const bitonal = (writer: number): Raster => {
      const sig = renderSignature(makeWriter(writer), { width: 700, height: 160 });
      const W = 1000;
      const H = 260;
      const out = new Uint8Array(W * H).fill(255);
      for (let y = 0; y < sig.height; y++)
        for (let x = 0; x < sig.width; x++) out[(y + 50) * W + x + 150] = sig.data[y * sig.width + x] < 128 ? 0 : 255;
      return { width: W, height: H, data: out };
    };
    for (const writer of [5, 12]) {
      const even = bitonal(writer);
      const clean = core.extract(even).main;
      const shaded = {
        ...even,
        data: even.data.map((v, i) => Math.round(v * (1 - 0.35 * Math.min(1, Math.max(0, (90 - Math.floor(i / even.width)) / 8 + 0.5))))),
      };
      const lit = core.extract(shaded).main;
      for (const k of ["x", "y", "w", "h"] as const)
        expect(Math.abs(lit.inkBox[k] - clean.inkBox[k]), `${k} of writer ${writer}`).toBeLessThanOrEqual(6);
      const other = core.extract(bitonal(writer + 20)).main;
      const sum = (d: Float32Array) => d.reduce((a, v) => a + v, 0);
      expect(sum(core.groupDistances(clean.vector, [lit.vector]))).toBeLessThan(sum(core.groupDistances(clean.vector, [other.vector])) / 3);
    }
  });

  it("rewrites no pixel of an evenly lit scan with grain, and evens out a lit one", () => {
    // The core's own exports: the crop is evened out in place, so what it holds afterwards shows whether
    // the paper was rewritten.
    const x = new WebAssembly.Instance(coreModule, {}).exports as unknown as {
      memory: WebAssembly.Memory;
      reset(): void;
      alloc(n: number): number;
      preprocess(src: number, w: number, h: number, hard: number): number;
    };
    const preprocessed = (r: Raster) => {
      x.reset();
      const p = x.alloc(r.data.length);
      new Uint8Array(x.memory.buffer, p, r.data.length).set(r.data);
      expect(x.preprocess(p, r.width, r.height, 0)).toBe(1);
      return new Uint8Array(x.memory.buffer, p, r.data.length).slice();
    };
    const even = lightPenScan(6);
    // A flatbed scan's paper varies by a few levels (here +-4): below the gate.
    const grain = { ...even, data: even.data.map((v, i) => Math.max(0, Math.min(255, v + ((i * 7919) % 9) - 4))) };
    expect(preprocessed(grain)).toEqual(grain.data);
    // Lit from the left, the paper's level is brought back up: the right edge's paper, at 159, to within a
    // few levels of the left edge's.
    const lit = litFromLeft(even, 0.65);
    const out = preprocessed(lit);
    const col = (d: Uint8Array, x0: number) => d[150 * lit.width + x0];
    expect(col(lit.data, lit.width - 2)).toBeLessThan(165);
    expect(Math.abs(col(out, lit.width - 2) - col(out, 1))).toBeLessThanOrEqual(8);
  });
});
