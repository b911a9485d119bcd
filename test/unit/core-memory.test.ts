// The WASM core's memory: what goes in is capped, the module has a maximum, and a large call gives its
// memory back (a WebAssembly memory never shrinks, so the instance is dropped after a large call).
import { describe, expect, it } from "vitest";
import coreModule from "../../wasm/build/core.wasm";
import { CORE_MAX_PIXELS, CORE_RETAINED_BYTES, createCore, fitForCore } from "../../src/verify/core";
import { JITTERS } from "../../src/verify/model";
import { blankPage, makeWriter, renderSignature } from "../fixtures/generator";

/** A 7000x5700 page (the crop that once left 41 MiB held) with a signature's ink drawn large in a box. */
function hugeCrop() {
  const page = blankPage(7000, 5700);
  const sig = renderSignature(makeWriter(5), { height: 200 });
  // Nearest-neighbour upscale by 5 into (1000, 2000).
  for (let y = 0; y < sig.height * 5; y++) {
    for (let x = 0; x < sig.width * 5; x++)
      page.data[(2000 + y) * page.width + 1000 + x] = sig.data[((y / 5) | 0) * sig.width + ((x / 5) | 0)];
  }
  return { page, sig };
}

describe("WASM core memory", () => {
  it("keeps its memory bounded through a 7000x5700 crop and gives it back afterwards", () => {
    const core = createCore(coreModule);
    const { page, sig } = hugeCrop();
    const small = core.extract(sig).main.inkBox;
    const { main } = core.extract(page);
    expect(main.inkFound).toBe(true);
    // The ink box is reported in the caller's pixels (the core saw a downscaled copy): it is the
    // signature's own box, scaled by 5 and moved to where it was drawn, within a few pixels of the copy.
    const want = { x: 1000 + small.x * 5, y: 2000 + small.y * 5, w: small.w * 5, h: small.h * 5 };
    for (const k of ["x", "y", "w", "h"] as const) expect(Math.abs(main.inkBox[k] - want[k])).toBeLessThan(20);
    // 40 MP went in; the core never held more than the capped copy and its working buffers.
    expect(core.peakMemoryBytes).toBeLessThan(CORE_MAX_PIXELS + 4 * 1024 * 1024);
    expect(core.memoryBytes()).toBeLessThanOrEqual(CORE_RETAINED_BYTES);
  });

  it("gives the same features before and after a large call dropped and rebuilt the instance", () => {
    const core = createCore(coreModule);
    const sig = renderSignature(makeWriter(12), { height: 160 });
    const before = core.extract(sig).main.vector;
    core.extract(hugeCrop().page);
    expect(core.memoryBytes()).toBeLessThanOrEqual(CORE_RETAINED_BYTES);
    const after = core.extract(sig).main.vector;
    expect(Array.from(after)).toEqual(Array.from(before));
    // And a second call on a warm instance (arena reset, memory not zeroed) agrees too.
    expect(Array.from(core.extract(sig).main.vector)).toEqual(Array.from(before));
    const d = core.groupDistances(before, [after, before]);
    expect(Array.from(d).every((v) => v === 0)).toBe(true);
  });

  it("keeps the warm instance through a reference's every pass: each pass gives its scratch back", () => {
    // A reference is extracted in every regime (sharp, blurred, binarised), and with synthetic variants when
    // it is one of few. Passes that each kept their scratch summed to over 10 MiB for this crop, so every
    // reference dropped the instance and the next call paid for a fresh one.
    const core = createCore(coreModule);
    const sig = renderSignature(makeWriter(7), { width: 1200, height: 400 });
    const first = core.extract(sig, JITTERS, { blurred: true, binarised: () => true });
    expect(first.main.binarised).not.toBeNull();
    expect(first.variants).toHaveLength(JITTERS.length);
    expect(core.peakMemoryBytes).toBeLessThanOrEqual(CORE_RETAINED_BYTES);
    expect(core.memoryBytes()).toBeGreaterThan(0);
    // The passes read what they should: each one alone, on a fresh instance, gives the same vectors.
    const alone = createCore(coreModule);
    expect(Array.from(first.main.vector)).toEqual(Array.from(alone.extractOne(sig, () => "sharp").vector));
    expect(Array.from(first.main.blurred)).toEqual(Array.from(alone.extractOne(sig, () => "blurred").vector));
    expect(Array.from(first.main.binarised!)).toEqual(Array.from(alone.extractOne(sig, () => "binarised").vector));
    const variant = alone.extract(sig, [JITTERS[2]], { blurred: false }).variants[0];
    expect(Array.from(first.variants[2])).toEqual(Array.from(variant));
  });

  it("caps what is copied in by area and by side, leaving ordinary crops untouched", () => {
    const small = blankPage(900, 300);
    expect(fitForCore(small).raster).toBe(small);
    const wide = fitForCore(blankPage(20_000, 50));
    expect(wide.raster.width).toBeLessThanOrEqual(4096);
    expect(wide.raster.width * wide.raster.height).toBeLessThanOrEqual(CORE_MAX_PIXELS);
    const big = fitForCore(blankPage(7000, 5700));
    expect(big.raster.width * big.raster.height).toBeLessThanOrEqual(CORE_MAX_PIXELS);
    expect(big.raster.data.every((v) => v === 255)).toBe(true);
  });

  it("has a maximum memory: growing past it is refused by the module itself", () => {
    const instance = new WebAssembly.Instance(coreModule, {});
    const memory = instance.exports.memory as WebAssembly.Memory;
    expect(() => memory.grow(1024)).toThrow(RangeError);
  });
});
