import { describe, expect, it } from "vitest";
import { labelComponents } from "../../src/verify/components";
import { estimateSkew } from "../../src/verify/ink-mask";
import { closeGrey, removeRulingLines } from "../../src/verify/morphology";
import { eraseRings } from "../../src/verify/stamps";

describe("locator pixel operations", () => {
  it("closes grey images exactly like the naive square-window max-then-min", () => {
    const w = 97,
      h = 61,
      r = 3;
    const d = new Uint8Array(w * h).map((_, i) => (i * 7919 + (i >> 3)) & 255);
    const at = (a: Uint8Array, x: number, y: number, pad: number) => (x < 0 || y < 0 || x >= w || y >= h ? pad : a[y * w + x]);
    const mx = new Uint8Array(w * h),
      want = new Uint8Array(w * h);
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) {
        let m = 0;
        for (let dy = -r; dy <= r; dy++) for (let dx = -r; dx <= r; dx++) m = Math.max(m, at(d, x + dx, y + dy, 0));
        mx[y * w + x] = m;
      }
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) {
        let m = 255;
        for (let dy = -r; dy <= r; dy++) for (let dx = -r; dx <= r; dx++) m = Math.min(m, at(mx, x + dx, y + dy, 255));
        want[y * w + x] = m;
      }
    expect(closeGrey({ width: w, height: h, data: d }, r).data).toEqual(want);
  });

  it("removes thin ruling lines, tilted a little, and keeps a thick pen stroke crossing them", () => {
    const w = 300,
      h = 200;
    const mask = new Uint8Array(w * h);
    for (let x = 10; x < 290; x++) mask[(100 + Math.floor(x / 60)) * w + x] = 1; // a 1 px rule drifting 4 rows
    for (let y = 20; y < 180; y++) for (let x = 150; x < 156; x++) mask[y * w + x] = 1; // a 6 px wide stroke
    for (let y = 10; y < 190; y++) mask[y * w + 40] = 1; // a vertical rule
    removeRulingLines(mask, w, h, 100, 100);
    expect(mask[100 * w + 20]).toBe(0);
    expect(mask[104 * w + 280]).toBe(0);
    expect(mask[50 * w + 40]).toBe(0);
    let stroke = 0;
    for (let y = 20; y < 180; y++) for (let x = 150; x < 156; x++) stroke += mask[y * w + x];
    expect(stroke).toBeGreaterThan(0.95 * 160 * 6);
  });

  it("labels 8-connected components with their boxes", () => {
    const w = 10,
      h = 6;
    const mask = new Uint8Array(w * h);
    mask[0] = mask[w + 1] = mask[2 * w + 2] = 1; // a diagonal: one component
    mask[5 * w + 9] = 1;
    const { components, count } = labelComponents(mask, w, h);
    expect(count).toBe(2);
    expect(components.map((c) => [c.x, c.y, c.w, c.h, c.area])).toEqual([
      [0, 0, 3, 3, 3],
      [9, 5, 1, 1, 1],
    ]);
  });

  it("measures the skew of rows of print", () => {
    const w = 600,
      h = 400;
    for (const deg of [-2.5, 0, 1.5]) {
      const mask = new Uint8Array(w * h);
      const t = Math.tan((deg * Math.PI) / 180);
      for (let row = 0; row < 12; row++) {
        for (let x = 40; x < 560; x++) {
          if (x % 9 < 2) continue; // gaps between letters
          const y = Math.round(60 + row * 25 + (x - w / 2) * t);
          for (let k = 0; k < 5; k++) mask[(y + k) * w + x] = 1;
        }
      }
      expect((estimateSkew(mask, w, h) * 180) / Math.PI).toBeCloseTo(deg, 0);
    }
  });

  it("finds a ring with strokes running across it, and erases only the ring", () => {
    const w = 200,
      h = 200;
    const mask = new Uint8Array(w * h);
    for (let a = 0; a < 2 * Math.PI; a += 0.005)
      for (let t = -1.5; t <= 1.5; t += 0.5)
        mask[Math.round(100 + (40 + t) * Math.sin(a)) * w + Math.round(100 + (40 + t) * Math.cos(a))] = 1;
    for (let x = 20; x < 180; x++) for (let k = 0; k < 3; k++) mask[(60 + Math.round(20 * Math.sin(x / 15)) + k) * w + x] = 1;
    const rings = eraseRings(mask, w, h, 15, 60);
    expect(rings).toHaveLength(1);
    expect(rings[0].r).toBeGreaterThan(37);
    expect(rings[0].r).toBeLessThan(43);
    expect(Math.hypot(rings[0].cx - 100, rings[0].cy - 100)).toBeLessThan(3);
    expect(mask[100 * w + 140]).toBe(0); // the ring's right-hand side is gone
    expect(mask[(60 + Math.round(20 * Math.sin(30 / 15)) + 1) * w + 30]).toBe(1); // the stroke outside it stays
  });
});
