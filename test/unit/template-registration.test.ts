import { describe, expect, it } from "vitest";
import { locateSignatures } from "../../src/verify/locate";
import { buildTemplate, locateWithTemplate, type TemplateModel } from "../../src/verify/template";
import type { Box, Raster } from "../../src/verify/types";
import { boxIoU, makeWriter, photoOf, renderForm, scanOf, scanPoint, signatureBoxes, type ScanOptions } from "../fixtures/generator";
import { median3 } from "../../src/verify/template";

const boxes = signatureBoxes(1240, 1754, 2);
const blank = renderForm({ signatures: [], boxes, seed: 9 }).raster;

/** Where a box of the original page lies after `scanOf`. */
function movedBox(page: Raster, opts: ScanOptions, b: Box): Box {
  const pts = [
    scanPoint(page, opts, b.x, b.y),
    scanPoint(page, opts, b.x + b.w, b.y),
    scanPoint(page, opts, b.x, b.y + b.h),
    scanPoint(page, opts, b.x + b.w, b.y + b.h),
  ];
  const xs = pts.map((p) => p[0]),
    ys = pts.map((p) => p[1]);
  return { x: Math.min(...xs), y: Math.min(...ys), w: Math.max(...xs) - Math.min(...xs), h: Math.max(...ys) - Math.min(...ys) };
}

describe("templates", () => {
  const template = buildTemplate(blank, boxes);

  it("is plain JSON holding the boxes and what registration needs", () => {
    const stored = JSON.parse(JSON.stringify(template)) as TemplateModel;
    expect(stored).toEqual(template);
    expect(stored.version).toBe(1);
    expect([stored.width, stored.height]).toEqual([1240, 1754]);
    expect(stored.boxes).toEqual(boxes);
    expect(stored.zones).toHaveLength(2);
    expect(stored.keypoints.length / 4).toBeGreaterThan(100);
    // Small enough to store beside the template's metadata.
    expect(JSON.stringify(stored).length).toBeLessThan(200_000);
  });

  it("refuses boxes off the blank page, and clips boxes that stick out", () => {
    expect(() => buildTemplate(blank, [{ x: 5000, y: 10, w: 100, h: 100 }])).toThrow(/boxes\[0\]/);
    expect(() => buildTemplate(blank, [boxes[0], { x: 10, y: 10, w: 0, h: 50 }])).toThrow(/boxes\[1\]/);
    expect(buildTemplate(blank, [{ x: 1200, y: 1700, w: 100, h: 100 }]).boxes).toEqual([{ x: 1200, y: 1700, w: 40, h: 54 }]);
  });

  it("registers a shifted (40 px) and turned (1.5 degrees) scan and finds the signature in its box", () => {
    const filled = renderForm({ signatures: [{ writer: makeWriter(4), box: boxes[0] }], boxes, stamp: true, seed: 9 });
    const opts = { dx: 40, dy: 25, rotation: 1.5, seed: 2 };
    const scan = scanOf(filled.raster, opts);
    const stored = JSON.parse(JSON.stringify(template)) as TemplateModel;
    const t0 = performance.now();
    const found = locateSignatures([scan], { template: stored });
    console.log(`template locate on a 1240x1754 scan: ${(performance.now() - t0).toFixed(0)} ms`);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ index: 0, page: 1 });
    expect(boxIoU(found[0].box, movedBox(filled.raster, opts, filled.signatures[0].inkBox))).toBeGreaterThan(0.85);
    expect(found[0].confidence).toBeGreaterThan(0.5);
  });

  it("copes with rotation either way up to 3 degrees and a 2% change of scale", () => {
    for (const [k, opts] of [
      { dx: -30, dy: 40, rotation: -2, scale: 1.02, seed: 3 },
      { dx: 60, dy: -20, rotation: 3, scale: 0.98, seed: 4 },
      { dx: 0, dy: 0, rotation: 0, seed: 5 },
    ].entries()) {
      const filled = renderForm({ signatures: [{ writer: makeWriter(7 + k), box: boxes[1] }], boxes, stamp: true, seed: 9 });
      const scan = scanOf(filled.raster, opts);
      const found = locateWithTemplate(scan, template, { x: 0, y: 0, w: scan.width, h: scan.height });
      expect(found, JSON.stringify(opts)).not.toBeNull();
      expect(found!).toHaveLength(1);
      expect(boxIoU(found![0].box, movedBox(filled.raster, opts, filled.signatures[0].inkBox)), JSON.stringify(opts)).toBeGreaterThan(0.8);
    }
  });

  it("reports each filled box, and none for a filled-in page without signatures", () => {
    const both = renderForm({
      signatures: [
        { writer: makeWriter(2), box: boxes[0] },
        { writer: makeWriter(5), box: boxes[1] },
      ],
      boxes,
      seed: 9,
    });
    const found = locateSignatures([scanOf(both.raster, { dx: 15, dy: -10, rotation: 0.7 })], { template });
    expect(found.map((f) => f.index)).toEqual([0, 1]);
    expect(found[0].box.x).toBeLessThan(found[1].box.x);
    const stampedOnly = renderForm({
      signatures: [],
      boxes,
      stamp: { cx: boxes[0].x + boxes[0].w - 40, cy: boxes[0].y + 60, r: 85 },
      seed: 9,
    });
    expect(locateSignatures([scanOf(stampedOnly.raster, { dx: 20, dy: 30, rotation: -1 })], { template })).toEqual([]);
  });

  it("honours target.box with a template", () => {
    const filled = renderForm({ signatures: [{ writer: makeWriter(4), box: boxes[0] }], boxes, seed: 9 });
    const scan = scanOf(filled.raster, { dx: 10, dy: 10 });
    expect(locateSignatures([scan], { template, target: { box: { x: 620, y: 1200, w: 600, h: 500 } } })).toEqual([]);
    const hit = locateSignatures([scan], { template, target: { page: 1, box: { x: 0, y: 1200, w: 620, h: 500 } } });
    expect(hit).toHaveLength(1);
  });

  it("falls back to locating without the template when the page is another form", () => {
    const other = renderForm({ signatures: [{ writer: makeWriter(3), box: boxes[1] }], seed: 77, stamp: false });
    expect(locateWithTemplate(other.raster, template, { x: 0, y: 0, w: 1240, h: 1754 })).toBeNull();
    const found = locateSignatures([other.raster], { template });
    expect(found).toHaveLength(1);
    expect(boxIoU(found[0].box, other.signatures[0].inkBox)).toBeGreaterThan(0.8);
  });

  it("registers phone photos of the form (uneven light, noise, blur, a turn) and finds the signature in its box", () => {
    const filled = renderForm({ signatures: [{ writer: makeWriter(6), box: boxes[1] }], boxes, seed: 9 });
    for (const opts of [{ seed: 3 }, { seed: 5, rotation: 2 }, { seed: 8, rotation: -1.2 }]) {
      const photo = photoOf(filled.raster, opts);
      const found = locateWithTemplate(photo, template, { x: 0, y: 0, w: photo.width, h: photo.height });
      expect(found, JSON.stringify(opts)).not.toBeNull();
      expect(
        found!.map((f) => f.zone),
        JSON.stringify(opts),
      ).toEqual([1]);
      expect(boxIoU(found![0].box, filled.signatures[0].inkBox), JSON.stringify(opts)).toBeGreaterThan(0.6);
    }
  });

  it("median3 takes out single-pixel specks and keeps strokes", () => {
    const r = { width: 5, height: 5, data: new Uint8Array(25).fill(255) };
    r.data[6] = 0; // a speck
    for (let y = 0; y < 5; y++) r.data[y * 5 + 3] = 0; // a 1 px vertical stroke... thinner than the filter
    for (let y = 0; y < 5; y++) r.data[y * 5 + 4] = 0; // ...made 2 px wide
    const m = median3(r);
    expect(m.data[6]).toBe(255);
    expect([...Array(5).keys()].every((y) => m.data[y * 5 + 3] === 0 && m.data[y * 5 + 4] === 0)).toBe(true);
  });
});
