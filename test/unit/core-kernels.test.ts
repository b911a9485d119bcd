// The WASM core: its distance kernels equal the plain TypeScript ones, and it copes with blank and bad input.
import { describe, expect, it } from "vitest";
import coreModule from "../../wasm/build/core.wasm";
import { type CoreExports, EXTRA_GRIDS } from "../../src/verify/core";
import { getCore } from "../../src/verify/core-module";
import { groupDistancesTs } from "../../src/verify/kernels-ts";
import { blankPage, makeWriter, photoOf, renderSignature } from "../fixtures/generator";

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

  it("matches the orientation strips elastically: strips drifted sideways cost little, strips reordered a lot", () => {
    const strips = core.groupCount - 1;
    expect(core.groupKinds[strips]).toBe(3);
    const from = core.groupOffsets[strips],
      to = core.groupOffsets[strips + 1];
    const dim = 16,
      len = (to - from) / dim;
    expect(len).toBe(32);
    const a = core.extract(renderSignature(makeWriter(5))).main.vector;
    // One histogram over the sequence, L1-normalised then square-rooted: the squares sum to 1.
    const squares = a.subarray(from, to).reduce((s, v) => s + v * v, 0);
    expect(squares).toBeCloseTo(1, 4);
    const rebuilt = (strip: (i: number) => number) => {
      const b = a.slice();
      for (let i = 0; i < len; i++) b.set(a.subarray(from + strip(i) * dim, from + (strip(i) + 1) * dim), from + i * dim);
      return b;
    };
    // Everything two strips to the right (the first strip drawn three times), as a longer lead-in would.
    const drifted = rebuilt((i) => Math.max(0, i - 2));
    // The same strips in reverse order: the same histogram over the whole signature, another layout.
    const reversed = rebuilt((i) => len - 1 - i);
    const [dDrift] = core.groupDistances(a, [drifted]).subarray(strips, strips + 1);
    const [dReversed] = core.groupDistances(a, [reversed]).subarray(strips, strips + 1);
    // Strip by strip (no warping), the drift would cost about as much as the reversal.
    const fixed = (b: Float32Array) => {
      let s = 0;
      for (let i = from; i < to; i++) s += (a[i] - b[i]) ** 2 / (a[i] + b[i] + 1e-6);
      return s / len;
    };
    expect(dDrift).toBeLessThan(0.25 * fixed(drifted));
    expect(dReversed).toBeGreaterThan(0.5 * fixed(reversed));
    expect(dReversed).toBeGreaterThan(4 * dDrift);
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

  // The raw exports, for the kernels the wrapper does not expose.
  interface RawCore extends CoreExports {
    orientation(gx: number, gy: number): number;
    sectorOf(dx: number, dy: number): number;
  }
  const raw = () => new WebAssembly.Instance(coreModule, {}).exports as unknown as RawCore;
  /** Reset the core and copy the raster's pixels in; returns where they are. */
  const copyIn = (c: RawCore, raster: { width: number; height: number; data: Uint8Array }): number => {
    c.reset();
    const n = raster.width * raster.height;
    const src = c.alloc(n);
    new Uint8Array(c.memory.buffer, src, n).set(raster.data);
    return src;
  };

  it("takes a gradient's orientation within 1.2e-5 rad of atan2's, folded into [0, pi), and the axes and diagonals exactly", () => {
    const c = raw();
    const folded = (gx: number, gy: number) => {
      let t = Math.atan2(gy, gx);
      if (t < 0) t += Math.PI;
      return t >= Math.PI ? t - Math.PI : t;
    };
    let worst = 0;
    for (let i = -40; i <= 40; i++) {
      for (let j = -40; j <= 40; j++) {
        if (i === 0 && j === 0) continue;
        const gx = Math.fround(i * 0.0731),
          gy = Math.fround(j * 0.0529);
        const got = c.orientation(gx, gy);
        expect(got).toBeGreaterThanOrEqual(0);
        expect(got).toBeLessThan(Math.PI);
        const e = Math.abs(got - folded(gx, gy));
        worst = Math.max(worst, Math.min(e, Math.PI - e));
      }
    }
    expect(worst).toBeLessThan(1.2e-5);
    // Sampled strokes put many edges on an axis or a diagonal, where the co-occurrence's eighths meet.
    const f = Math.fround;
    expect(c.orientation(1, 0)).toBe(0);
    expect(c.orientation(-1, 0)).toBe(0);
    expect(c.orientation(0, 1)).toBe(f(f(3.14159265) / 2));
    expect(c.orientation(0, -1)).toBe(f(f(3.14159265) / 2));
    expect(c.orientation(0.5, 0.5)).toBe(f(f(3.14159265) / 4));
    expect(c.orientation(-0.5, -0.5)).toBe(f(f(3.14159265) / 4));
    expect(c.orientation(-0.5, 0.5)).toBe(f(f(3.14159265) - f(f(3.14159265) / 4)));
    expect(c.orientation(0.5, -0.5)).toBe(f(f(3.14159265) - f(f(3.14159265) / 4)));
  });

  it("puts an offset from the ink centroid in the polar sector of its angle, each eighth holding its lower edge", () => {
    const c = raw();
    // Off the edges, the sector atan2 gives: eighths of a turn from -pi.
    for (let a = 0; a < 64; a++) {
      const angle = -Math.PI + ((a + 0.5) * Math.PI) / 32;
      const dx = 3 * Math.cos(angle),
        dy = 3 * Math.sin(angle);
      expect(c.sectorOf(dx, dy)).toBe(Math.floor(a / 8));
    }
    // On them: an axis or a diagonal belongs to the eighth it starts; pi (dx < 0 on the axis) to the last.
    const edges: [number, number, number][] = [
      [-1, -1, 1],
      [0, -1, 2],
      [1, -1, 3],
      [1, 0, 4],
      [1, 1, 5],
      [0, 1, 6],
      [-1, 1, 7],
      [-1, 0, 7],
      [0, 0, 4],
    ];
    for (const [dx, dy, sector] of edges) expect(c.sectorOf(dx * 2.5, dy * 2.5)).toBe(sector);
  });

  it("averages the texture groups over nine sampling grids and reads the shape groups from the crop's own", () => {
    const raster = renderSignature(makeWriter(6), { height: 200 });
    const c = raw();
    const src = copyIn(c, raster);
    expect(c.preprocess(src, raster.width, raster.height, 0)).toBe(1);
    const base = c.mark();
    const read = (p: number) => new Float32Array(c.memory.buffer, p, core.featureLength).slice();
    const own = read(c.features());
    const grids = [own];
    expect(EXTRA_GRIDS).toHaveLength(8);
    for (const [x, y] of EXTRA_GRIDS) {
      c.rewind(base);
      c.renormalise(x, y);
      grids.push(read(c.texture()));
    }
    const { vector } = core.extractOne(raster, () => "sharp");
    const mask = c.textureGroups();
    let texture = 0;
    for (let g = 0; g < core.groupCount; g++) {
      const isTexture = ((mask >> g) & 1) === 1;
      if (isTexture) texture++;
      for (let i = core.groupOffsets[g]; i < core.groupOffsets[g + 1]; i++) {
        if (!isTexture) {
          expect(vector[i]).toBe(own[i]);
          continue;
        }
        let sum = 0;
        for (const v of grids) sum = Math.fround(sum + v[i]);
        expect(vector[i]).toBe(Math.fround(sum / 9));
      }
    }
    // LBP at four zonings and the global shape; the grids do differ there, or the mean would prove nothing.
    expect(texture).toBe(5);
    const lbp = core.groupOffsets[4];
    expect(grids.slice(1).some((v) => v[lbp + 10] !== own[lbp + 10] || v[lbp + 20] !== own[lbp + 20])).toBe(true);
  });

  it("uses a kept row pass only while it is in the arena: after a rewind below it, or a new crop, it resamples afresh", () => {
    const raster = renderSignature(makeWriter(7), { height: 180 });
    const c = raw();
    const src = copyIn(c, raster);
    const afterCrop = c.mark();
    expect(c.preprocess(src, raster.width, raster.height, 0)).toBe(1);
    const size = c.info(5) * c.info(6);
    const image = () => new Float32Array(c.memory.buffer, c.normPointer(), size).slice();
    const base = c.mark();
    // preprocess keeps its own row pass (phase 0) for the grids at x = 0: the same image as a fresh pass.
    expect(c.rowsPhase()).toBe(0);
    const own = image();
    c.renormalise(0, 0);
    expect(image()).toEqual(own);
    c.rewind(base);
    c.renormalise(0.5, 0);
    const fresh = image();
    // Kept, and used: the same image.
    c.rewind(base);
    c.keepRows(0.5);
    const afterRows = c.mark();
    c.renormalise(0.5, 0);
    expect(image()).toEqual(fresh);
    c.rewind(afterRows);
    c.renormalise(0.5, 0.5);
    const kept = image();
    // Rewound below it, and the arena written over where it was: a renormalise must not read it.
    c.rewind(base);
    new Float32Array(c.memory.buffer, c.alloc(4 * size), size).fill(0.77);
    c.rewind(base);
    c.renormalise(0.5, 0.5);
    expect(image()).toEqual(kept);
    // A new crop preprocessed over a kept pass, with no rewind between (here the same pixels, kept as a
    // bitonal scan, then preprocessed as they are): its own rows, not the bitonal ones.
    c.rewind(afterCrop);
    expect(c.rowsPhase()).toBe(-1);
    expect(c.preprocess(src, raster.width, raster.height, 1)).toBe(1);
    c.keepRows(0.5);
    expect(c.preprocess(src, raster.width, raster.height, 0)).toBe(1);
    c.renormalise(0.5, 0);
    expect(image()).toEqual(fresh);
  });

  it("gives from its texture-only pass the very texture groups of the full pass, and zeros elsewhere", () => {
    const c = raw();
    const mask = c.textureGroups();
    // A small, a wide and a blurred photographed signature: grey edges, ink on the border rows.
    const rasters = [
      renderSignature(makeWriter(12), { height: 90 }),
      renderSignature(makeWriter(13), { width: 1100, height: 300 }),
      photoOf(renderSignature(makeWriter(14), { height: 240 }), { seed: 3, blur: 1.5, noise: 4 }),
    ];
    for (const raster of rasters) {
      const src = copyIn(c, raster);
      expect(c.preprocess(src, raster.width, raster.height, 0)).toBe(1);
      const base = c.mark();
      // The pass first: it can grow the memory, which detaches an earlier view of the buffer.
      const fullAt = c.features();
      const full = new Float32Array(c.memory.buffer, fullAt, core.featureLength).slice();
      c.rewind(base);
      const textureAt = c.texture();
      const texture = new Float32Array(c.memory.buffer, textureAt, core.featureLength).slice();
      let compared = 0;
      for (let g = 0; g < core.groupCount; g++) {
        const own = ((mask >> g) & 1) === 1;
        for (let i = core.groupOffsets[g]; i < core.groupOffsets[g + 1]; i++) {
          expect(texture[i]).toBe(own ? full[i] : 0);
          if (own && full[i] !== 0) compared++;
        }
      }
      expect(compared).toBeGreaterThan(100);
    }
  });
});
