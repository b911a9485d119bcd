import { describe, expect, it } from "vitest";
import { decodePage } from "../../src/verify/decode";
import { pngHeader } from "../../src/verify/decode/png";
import { CROP_MAX_SIDE, THUMBNAIL_MAX_SIDE, paddedBox, referenceThumbnailPng, signatureCropPng } from "../../src/verify/render";
import type { Raster } from "../../src/verify/types";

function page(w: number, h: number): Raster {
  // Paper with a dark rectangle at (100, 200) 300 x 100: the "signature".
  const data = new Uint8Array(w * h).fill(255);
  for (let y = 200; y < 300; y++) data.fill(0, y * w + 100, y * w + 400);
  return { width: w, height: h, data };
}

describe("images for people", () => {
  it("pads a signature box by 8% of its width and height on each side", () => {
    expect(paddedBox({ x: 100, y: 200, w: 300, h: 100 }, { width: 1000, height: 1000 })).toEqual({ x: 76, y: 192, w: 348, h: 116 });
  });

  it("clamps the padding to the page", () => {
    expect(paddedBox({ x: 5, y: 0, w: 300, h: 100 }, { width: 310, height: 1000 })).toEqual({ x: 0, y: 0, w: 310, h: 108 });
  });

  it("writes a grey PNG crop of the padded box, never upscaled", async () => {
    const png = await signatureCropPng(page(1000, 800), { x: 100, y: 200, w: 300, h: 100 });
    const h = pngHeader(png);
    expect([h.colourType, h.bitDepth]).toEqual([0, 8]);
    const r = await decodePage(png, 0);
    expect([r.width, r.height]).toEqual([348, 116]);
    // The padding is paper, the box is ink.
    expect(r.data[0]).toBe(255);
    expect(r.data[58 * 348 + 174]).toBe(0);
  });

  it("shrinks a large crop to 640 px on its long side, keeping the aspect ratio", async () => {
    const big = page(3000, 2000);
    const png = await signatureCropPng(big, { x: 200, y: 100, w: 2000, h: 500 });
    const r = await decodePage(png, 0);
    expect(Math.max(r.width, r.height)).toBe(CROP_MAX_SIDE);
    expect(r.width / r.height).toBeCloseTo(2320 / 580, 1);
  });

  it("makes a reference thumbnail at most 512 px on its long side, and keeps small ones as they are", async () => {
    const t = await decodePage(await referenceThumbnailPng(page(2480, 3508)), 0);
    expect(t.height).toBe(THUMBNAIL_MAX_SIDE);
    expect(t.width).toBe(Math.round((2480 * 512) / 3508));
    const small = await decodePage(await referenceThumbnailPng(page(420, 310)), 0);
    expect([small.width, small.height]).toEqual([420, 310]);
  });
});
