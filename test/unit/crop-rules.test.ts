import { describe, expect, it } from "vitest";
import { eraseRules } from "../../src/verify/crop-rules";
import { getCore } from "../../src/verify/core-module";
import { decodePage } from "../../src/verify/decode";
import { extractFeatures, featureVector } from "../../src/verify/features";
import { analyseDocument, enrolReference, learnedCropPng } from "../../src/verify/pipeline";
import { cropRaster } from "../../src/verify/render";
import type { Box, Raster } from "../../src/verify/types";
import { fillRect, strokePolyline } from "../fixtures/draw";
import { encodePng, inkBounds, makeWriter, renderForm, renderSignature } from "../fixtures/generator";

/** A writer's signature on white, 900 x 300 px, as a 300 dpi crop would hold it. */
function signature(seed: number): Raster {
  return renderSignature(makeWriter(seed), { variant: 1, width: 900, height: 300 });
}

/** Paper beside and above the signature, in pixels: what ruleWindow takes around a box. */
const SIDE = 600;
const TOP = 40;

/** The signature on a sheet with paper around it, and its ink box there (what the locator boxes). */
function onSheet(sig: Raster): { sheet: Raster; box: Box } {
  const w = sig.width + 2 * SIDE;
  const h = sig.height + 2 * TOP;
  const sheet: Raster = { width: w, height: h, data: new Uint8Array(w * h).fill(255) };
  for (let y = 0; y < sig.height; y++) sheet.data.set(sig.data.subarray(y * sig.width, (y + 1) * sig.width), (y + TOP) * w + SIDE);
  const ink = inkBounds(sig)!;
  return { sheet, box: { x: ink.x + SIDE, y: ink.y + TOP, w: ink.w, h: ink.h } };
}

/** A straight line y = y0 + slope * x from x0 to x1, `thick` px, grey 40 (a printed rule). */
function rule(r: Raster, y0: number, slope: number, thick: number, x0 = 0, x1 = r.width): void {
  if (slope === 0) {
    fillRect(r, x0, Math.round(y0 - thick / 2), x1 - x0, thick, 40);
    return;
  }
  const pts: number[] = [];
  const radii: number[] = [];
  for (let x = x0; x <= x1; x += 20) {
    pts.push(x, y0 + slope * x);
    radii.push(thick / 2);
  }
  strokePolyline(r, pts, radii, 40);
}

/** Share of the box's columns whose pixel on the line is paper (lighter than 200); r is the box's crop. */
function paperAlong(r: Raster, y0: number, slope: number): number {
  let paper = 0;
  for (let x = 0; x < r.width; x++) if (r.data[Math.round(y0 + slope * x) * r.width + x] >= 200) paper++;
  return paper / r.width;
}

/** Of the signature's own ink pixels (darker than 128), the share still darker than 128 after erasing. */
function inkKept(sig: Raster, erased: Raster): number {
  let ink = 0,
    kept = 0;
  for (let i = 0; i < sig.data.length; i++) {
    if (sig.data[i] >= 128) continue;
    ink++;
    if (erased.data[i] < 128) kept++;
  }
  return ink > 0 ? kept / ink : 1;
}

describe("painting printed rules out of a located signature", () => {
  it("removes the line a signature was signed on, keeping the strokes that cross it", () => {
    for (const seed of [3, 11, 27]) {
      const { sheet, box } = onSheet(signature(seed));
      const clean = cropRaster(sheet, box);
      const y = Math.round(box.y + 0.8 * box.h);
      const signed = { ...sheet, data: sheet.data.slice() };
      rule(signed, y, 0, 4);
      // Before: the line is ink along the whole width.
      expect(paperAlong(cropRaster(signed, box), y - box.y, 0)).toBe(0);
      const erased = eraseRules(signed, box);
      expect([erased.width, erased.height]).toEqual([box.w, box.h]);
      // The line is gone except under the strokes that cross it...
      expect(paperAlong(erased, y - box.y, 0), `seed ${seed}`).toBeGreaterThan(paperAlong(clean, y - box.y, 0) - 0.05);
      // ...and the signature's own ink is all but untouched (only where a stroke runs along the line).
      expect(inkKept(clean, erased), `seed ${seed}`).toBeGreaterThan(0.97);
      // The window is not modified.
      expect(paperAlong(cropRaster(signed, box), y - box.y, 0)).toBe(0);
    }
  });

  it("follows a rule tilted by a scan's skew", () => {
    const { sheet, box } = onSheet(signature(5));
    const clean = cropRaster(sheet, box);
    const slope = Math.tan((1.5 * Math.PI) / 180);
    const y0 = Math.round(box.y + 0.75 * box.h - (slope * sheet.width) / 2);
    const signed = { ...sheet, data: sheet.data.slice() };
    rule(signed, y0, slope, 4);
    const erased = eraseRules(signed, box);
    const inBox = y0 - box.y + slope * box.x;
    expect(paperAlong(cropRaster(signed, box), inBox, slope)).toBeLessThan(0.05);
    expect(paperAlong(erased, inBox, slope)).toBeGreaterThan(paperAlong(clean, inBox, slope) - 0.05);
    expect(inkKept(clean, erased)).toBeGreaterThan(0.97);
  });

  it("keeps a straight stroke that ends inside the signature, as one drawn through the name does", () => {
    for (const seed of [3, 11]) {
      const { sheet, box } = onSheet(signature(seed));
      const struck = { ...sheet, data: sheet.data.slice() };
      // As straight as print, over most of the width, but it starts and ends where the ink does.
      rule(struck, Math.round(box.y + 0.45 * box.h), 0, 5, box.x, box.x + box.w);
      const kept = cropRaster(struck, box);
      const erased = eraseRules(struck, box);
      expect(Array.from(erased.data)).toEqual(Array.from(kept.data));
    }
  });

  it("removes a line the signature starts at the end of, and keeps a long tail cut at the box", () => {
    const { sheet, box } = onSheet(signature(3));
    const clean = cropRaster(sheet, box);
    const y = Math.round(box.y + 0.8 * box.h);
    // The line starts under the first letter and runs on far to the right.
    const signed = { ...sheet, data: sheet.data.slice() };
    rule(signed, y, 0, 4, box.x + 10, sheet.width);
    const erased = eraseRules(signed, box);
    expect(paperAlong(erased, y - box.y, 0)).toBeGreaterThan(paperAlong(clean, y - box.y, 0) - 0.05);
    // A straight tail across the name that runs a third of the box's width past it (the locator took
    // its end for a rule and cut it) is the signature's.
    const tailed = { ...sheet, data: sheet.data.slice() };
    rule(tailed, y, 0, 6, box.x + 10, box.x + box.w + Math.round(0.35 * box.w));
    expect(Array.from(eraseRules(tailed, box).data)).toEqual(Array.from(cropRaster(tailed, box).data));
  });

  it("leaves a signature without a rule, and a hand-drawn underline, as they are", () => {
    for (const seed of [3, 11, 27]) {
      const { sheet, box } = onSheet(signature(seed));
      expect(Array.from(eraseRules(sheet, box).data), `seed ${seed}`).toEqual(Array.from(cropRaster(sheet, box).data));
      // An underline drawn by hand under the name: it wanders by a few pixels, and it ends where the ink
      // does (the box is the signature's ink).
      const underlined = { ...sheet, data: sheet.data.slice() };
      const pts: number[] = [];
      const radii: number[] = [];
      for (let x = box.x + 4; x <= box.x + box.w - 4; x += 10) {
        pts.push(x, box.y + 0.9 * box.h + 5 * Math.sin(x / 90) + 0.01 * x);
        radii.push(2.2);
      }
      strokePolyline(underlined, pts, radii, 30);
      expect(Array.from(eraseRules(underlined, box).data), `seed ${seed}`).toEqual(Array.from(cropRaster(underlined, box).data));
    }
  });

  it("leaves blank paper and narrow boxes alone", () => {
    const blank: Raster = { width: 600, height: 200, data: new Uint8Array(600 * 200).fill(250) };
    expect(eraseRules(blank, { x: 50, y: 50, w: 500, h: 100 }).data.every((v) => v === 250)).toBe(true);
    const small: Raster = { width: 200, height: 60, data: new Uint8Array(200 * 60).fill(250) };
    fillRect(small, 0, 30, 200, 3, 40);
    expect(eraseRules(small, { x: 20, y: 10, w: 160, h: 40 }).data.some((v) => v === 40)).toBe(true);
  });

  it("takes a form's features without its signing line, and a bare signature image's with its underline", async () => {
    const form = renderForm({
      signatures: [{ writer: makeWriter(8), variant: 1, box: { x: 200, y: 1200, w: 800, h: 260 } }],
      seed: 4,
      stamp: false,
    });
    const a = await analyseDocument(encodePng(form.raster), { inputType: "scan", qualityFloor: 0, renderCrops: false });
    expect(a.signatures).toHaveLength(1);
    const crop = a.crops[0];
    // The form draws the signing line at 0.8 of the box, across the signature; no row of the crop is
    // still dark across most of its width.
    for (let y = 0; y < crop.height; y++) {
      let dark = 0;
      for (let x = 0; x < crop.width; x++) if (crop.data[y * crop.width + x] < 128) dark++;
      expect(dark / crop.width, `row ${y}`).toBeLessThan(0.6);
    }
    // A bare signature image is all signature: a straight underline stays.
    const sig = signature(8);
    const ink = inkBounds(sig)!;
    // On a taller sheet, so the underline is not at the image's edge (a frame edge is dropped).
    const underlined: Raster = {
      width: sig.width,
      height: sig.height + 100,
      data: new Uint8Array(sig.width * (sig.height + 100)).fill(255),
    };
    underlined.data.set(sig.data, 50 * sig.width);
    fillRect(underlined, 10, 50 + ink.y + ink.h + 6, sig.width - 20, 4, 30);
    const bare = await analyseDocument(encodePng(underlined), { inputType: "signature_image", qualityFloor: 0, renderCrops: false });
    const c = bare.crops[0];
    let longest = 0;
    for (let y = 0; y < c.height; y++) {
      let dark = 0;
      for (let x = 0; x < c.width; x++) if (c.data[y * c.width + x] < 128) dark++;
      longest = Math.max(longest, dark / c.width);
    }
    expect(longest).toBeGreaterThan(0.9);
  });

  it("gives learning the pixels the check's features saw: enrolled as a bare image, the same features", async () => {
    const core = getCore();
    // Writer 23's ink ends just above the form's line, writer 8's line runs through the signature.
    for (const [writer, variant] of [
      [23, 9],
      [8, 1],
    ]) {
      const form = renderForm({
        signatures: [{ writer: makeWriter(writer), variant, box: { x: 200, y: 1200, w: 800, h: 260 } }],
        seed: 4,
        stamp: false,
      });
      const a = await analyseDocument(encodePng(form.raster), { inputType: "scan", qualityFloor: 0, renderCrops: false });
      const png = await learnedCropPng(form.raster, a.signatures[0].box, "scan");
      const learned = await decodePage(png, 0);
      for (let y = 0; y < learned.height; y++) {
        let dark = 0;
        for (let x = 0; x < learned.width; x++) if (learned.data[y * learned.width + x] < 128) dark++;
        expect(dark / learned.width, `writer ${writer}, row ${y}`).toBeLessThan(0.6);
      }
      const enrolled = await enrolReference(core, png, { qualityFloor: 0 });
      if (!("features" in enrolled)) throw new Error(`not enrolled: ${enrolled.detail}`);
      const checked = featureVector(extractFeatures(core, a.crops[0]));
      const relearned = featureVector(enrolled.features);
      let diff = 0;
      for (let i = 0; i < checked.length; i++) diff = Math.max(diff, Math.abs(checked[i] - relearned[i]));
      expect(diff, `writer ${writer}`).toBeLessThan(1e-4);
    }
  });
});
