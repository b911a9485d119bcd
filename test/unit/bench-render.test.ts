// The robustness bench's renderers (bench/lib/render.ts) must do what their names say, or its table
// measures something else: a "longer tail" that is not longer, a "crop" that cuts nothing.
import { describe, expect, it } from "vitest";
import {
  binarise,
  blur,
  CONDITIONS,
  cropTail,
  jpegRoundTrip,
  lightThinOnGrey,
  morph3,
  otsu,
  paperAndLight,
  resampleToDpi,
  rngFor,
  rotate,
  scaleTail,
} from "../../bench/lib/render";
import type { Raster } from "../../src/verify/types";
import { inkBounds, makeWriter, renderSignature } from "../fixtures/generator";

const sig = renderSignature(makeWriter(31), { variant: 2 });

const inkCount = (r: Raster, t = otsu(r)) => r.data.reduce((n, v) => n + (v <= t ? 1 : 0), 0);
const levels = (r: Raster) => new Set(r.data).size;
const mean = (r: Raster) => r.data.reduce((s, v) => s + v, 0) / r.data.length;

/** Columns holding ink below a fixed level (the renderers keep paper light and ink dark). */
function inkSpan(r: Raster, t = 128): { x0: number; x1: number } {
  let x0 = r.width,
    x1 = -1;
  for (let i = 0; i < r.data.length; i++)
    if (r.data[i] <= t) {
      const x = i % r.width;
      x0 = Math.min(x0, x);
      x1 = Math.max(x1, x);
    }
  return { x0, x1: x1 + 1 };
}

describe("robustness renderers", () => {
  it("the fixture is a signature on paper", () => {
    expect(inkBounds(sig)).not.toBeNull();
    expect(inkCount(sig)).toBeGreaterThan(500);
  });

  it("resample to a lower dpi by the ratio to 300", () => {
    const r = resampleToDpi(sig, 150);
    expect(r.width).toBe(Math.round(sig.width / 2));
    expect(r.height).toBe(Math.round(sig.height / 2));
  });

  it("binarise to two levels, blur to many", () => {
    expect([...new Set(binarise(sig).data)].sort((a, b) => a - b)).toEqual([0, 255]);
    expect(levels(blur(binarise(sig), 1.5))).toBeGreaterThan(20);
  });

  it("thin and thicken the pen", () => {
    const t = otsu(sig);
    const n = inkCount(sig, t);
    expect(inkCount(morph3(sig, "max"), t)).toBeLessThan(n * 0.8);
    expect(inkCount(morph3(sig, "min"), t)).toBeGreaterThan(n * 1.2);
  });

  it("put light strokes on grey paper", () => {
    const r = lightThinOnGrey(sig);
    expect(r.data.reduce((a, b) => Math.min(a, b))).toBeGreaterThanOrEqual(130);
    expect(r.data.reduce((a, b) => Math.max(a, b))).toBeLessThanOrEqual(200);
  });

  it("lengthen, shorten and crop the tail on the right only", () => {
    const { x0, x1 } = inkSpan(sig);
    const w = x1 - x0;
    const longer = inkSpan(scaleTail(sig, 1.5));
    const shorter = inkSpan(scaleTail(sig, 0.6));
    const cropped = cropTail(sig);
    // The left edge stays put; the right end moves by the tail's share of the width times the change.
    expect(longer.x0).toBe(x0);
    expect(longer.x1 - x1).toBeGreaterThanOrEqual(Math.floor(0.2 * w * 0.5) - 2);
    expect(x1 - shorter.x1).toBeGreaterThanOrEqual(Math.floor(0.2 * w * 0.4) - 2);
    expect(cropped.width).toBeLessThan(x1);
    expect(x1 - cropped.width).toBeGreaterThanOrEqual(Math.floor(0.13 * w) - 1);
    // Left of the tail, nothing changed.
    const left = x0 + Math.floor(0.5 * w);
    for (let y = 0; y < sig.height; y += 7) expect(cropped.data[y * cropped.width + left]).toBe(sig.data[y * sig.width + left]);
  });

  it("rotate on a larger canvas without losing the ink", () => {
    const r = rotate(sig, 3);
    expect(r.width).toBeGreaterThan(sig.width);
    expect(r.height).toBeGreaterThan(sig.height);
    const n = inkCount(sig, 128);
    expect(Math.abs(inkCount(r, 128) - n)).toBeLessThan(0.15 * n);
  });

  it("darken the paper unevenly, the same way for the same key", () => {
    const a = paperAndLight(sig, rngFor("paper|x"));
    const b = paperAndLight(sig, rngFor("paper|x"));
    const c = paperAndLight(sig, rngFor("paper|y"));
    expect(a.data).toEqual(b.data);
    expect(a.data).not.toEqual(c.data);
    expect(mean(a)).toBeLessThan(mean(sig) - 5);
  });

  it("round-trip through JPEG to a close but not identical raster", async () => {
    const r = await jpegRoundTrip(sig, 50);
    expect([r.width, r.height]).toEqual([sig.width, sig.height]);
    expect(r.data).not.toEqual(sig.data);
    let err = 0;
    for (let i = 0; i < r.data.length; i++) err += Math.abs(r.data[i] - sig.data[i]);
    expect(err / r.data.length).toBeLessThan(8);
  });

  it("every condition renders a raster with ink", async () => {
    for (const c of CONDITIONS) {
      const r = await c.render(sig, rngFor(`${c.name}|t`));
      expect(r.data.length, c.name).toBe(r.width * r.height);
      expect(inkCount(r), c.name).toBeGreaterThan(100);
    }
  });
});
