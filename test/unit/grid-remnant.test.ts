// gridRemnant (src/verify/ink-mask.ts): what rule removal leaves of a table's grid, told from a hand's
// strokes by its straight arms along the page's axes.
import { describe, expect, it } from "vitest";
import { labelComponents } from "../../src/verify/components";
import { gridRemnant } from "../../src/verify/ink-mask";

const W = 80,
  H = 80;

function draw(mask: Uint8Array, x0: number, y0: number, x1: number, y1: number): void {
  for (let y = y0; y <= y1; y++) for (let x = x0; x <= x1; x++) mask[y * W + x] = 1;
}

/** The largest piece of the mask, with the labels, as gridRemnant takes them. */
function largest(mask: Uint8Array) {
  const { labels, components } = labelComponents(mask, W, H);
  return { labels, c: components.reduce((a, b) => (b.area > a.area ? b : a)) };
}

describe("gridRemnant", () => {
  it("takes a grid's corner and cross, with a blurred junction, for a grid's", () => {
    const corner = new Uint8Array(W * H);
    draw(corner, 10, 10, 11, 50);
    draw(corner, 10, 49, 45, 50);
    draw(corner, 8, 46, 14, 53); // the junction, rounded by blur
    const a = largest(corner);
    expect(gridRemnant(a.c, a.labels, W)).toBe(true);
    const cross = new Uint8Array(W * H);
    draw(cross, 39, 5, 40, 70);
    draw(cross, 5, 39, 70, 40);
    const b = largest(cross);
    expect(gridRemnant(b.c, b.labels, W)).toBe(true);
  });

  it("does not take a slanted stroke, an arc or a loop for a grid's", () => {
    const slant = new Uint8Array(W * H);
    for (let t = 0; t <= 40; t++) draw(slant, 10 + Math.round(t * 0.6), 10 + t, 11 + Math.round(t * 0.6), 10 + t);
    const arc = new Uint8Array(W * H);
    const loop = new Uint8Array(W * H);
    for (let a = 0; a <= 360; a++) {
      const c = Math.cos((a * Math.PI) / 180),
        s = Math.sin((a * Math.PI) / 180);
      if (a <= 180) draw(arc, Math.round(40 + 25 * c), Math.round(50 - 25 * s), Math.round(41 + 25 * c), Math.round(51 - 25 * s));
      draw(loop, Math.round(30 + 8 * c), Math.round(40 - 30 * s), Math.round(31 + 8 * c), Math.round(41 - 30 * s));
    }
    for (const [name, mask] of [
      ["slant", slant],
      ["arc", arc],
      ["loop", loop],
    ] as const) {
      const { c, labels } = largest(mask);
      expect(gridRemnant(c, labels, W), name).toBe(false);
    }
  });
});
