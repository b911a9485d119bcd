import UTIF from "utif2";
import { PDFDocument } from "pdf-lib";
import { describe, expect, it } from "vitest";
import type { Raster } from "../../src/verify/types";
import {
  blankPage,
  blurredPhoto,
  darkPhoto,
  encodeJpeg,
  encodePng,
  inkBounds,
  makeWriter,
  photoOf,
  renderForm,
  renderSignature,
  resizeRaster,
  signatureBoxes,
  toPdf,
  toTiff,
} from "../fixtures/generator";

/** Crop to the ink, scale to a fixed frame, binarise and thicken: a crude shape print for comparing signings. */
function shapeMask(r: Raster): Uint8Array {
  const b = inkBounds(r)!;
  const crop: Raster = { width: b.w, height: b.h, data: new Uint8Array(b.w * b.h) };
  for (let y = 0; y < b.h; y++) crop.data.set(r.data.subarray((b.y + y) * r.width + b.x, (b.y + y) * r.width + b.x + b.w), y * b.w);
  const small = resizeRaster(crop, 96, 40);
  const m = new Uint8Array(96 * 40);
  for (let y = 0; y < 40; y++)
    for (let x = 0; x < 96; x++) {
      let hit = 0;
      for (let dy = -2; dy <= 2 && !hit; dy++)
        for (let dx = -2; dx <= 2 && !hit; dx++) {
          const yy = y + dy,
            xx = x + dx;
          if (yy >= 0 && yy < 40 && xx >= 0 && xx < 96 && small.data[yy * 96 + xx] < 200) hit = 1;
        }
      m[y * 96 + x] = hit;
    }
  return m;
}

function iou(a: Uint8Array, b: Uint8Array): number {
  let inter = 0,
    union = 0;
  for (let i = 0; i < a.length; i++) {
    inter += a[i] & b[i];
    union += a[i] | b[i];
  }
  return inter / union;
}

function mean(r: Raster): number {
  let s = 0;
  for (const v of r.data) s += v;
  return s / r.data.length;
}

describe("signature generator", () => {
  it("is deterministic from its seeds", () => {
    const a = renderSignature(makeWriter(4), { variant: 3 });
    const b = renderSignature(makeWriter(4), { variant: 3 });
    expect(a.width).toBe(b.width);
    expect(a.data).toEqual(b.data);
    const c = renderSignature(makeWriter(4), { variant: 4 });
    expect(c.data).not.toEqual(a.data);
  });

  it("draws ink on white within the requested frame", () => {
    const s = renderSignature(makeWriter(1), { width: 400, height: 160, inkLevel: 40 });
    expect([s.width, s.height]).toEqual([400, 160]);
    const b = inkBounds(s)!;
    expect(b.w).toBeGreaterThan(200);
    expect(s.data.reduce((m, v) => Math.min(m, v), 255)).toBe(40); // full-coverage ink reaches the requested level, never darker
    expect(s.data[0]).toBe(255);
  });

  it("keeps a writer's variants closer to each other than to other writers", () => {
    const writers = [1, 2, 3, 4, 5, 6, 7, 8].map(makeWriter);
    const masks = writers.map((w) => [1, 2].map((variant) => shapeMask(renderSignature(w, { variant, width: 480, height: 180 }))));
    const same: number[] = [],
      diff: number[] = [];
    for (let i = 0; i < writers.length; i++) {
      same.push(iou(masks[i][0], masks[i][1]));
      for (let j = 0; j < writers.length; j++) if (j !== i) diff.push(iou(masks[i][0], masks[j][1]));
    }
    const avg = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
    expect(avg(same)).toBeGreaterThan(avg(diff) + 0.2);
    // Every writer's own variant beats the typical other writer.
    for (const s of same) expect(s).toBeGreaterThan(avg(diff));
    // More variation drifts further from the canonical signing.
    const w = writers[0];
    const canon = shapeMask(renderSignature(w, { variation: 0, width: 480, height: 180 }));
    const mild = iou(canon, shapeMask(renderSignature(w, { variant: 5, variation: 0.5, width: 480, height: 180 })));
    const wild = iou(canon, shapeMask(renderSignature(w, { variant: 5, variation: 3, width: 480, height: 180 })));
    expect(mild).toBeGreaterThan(wild);
  });
});

describe("form generator", () => {
  const boxes = signatureBoxes(1240, 1754, 2);
  const form = renderForm({
    signatures: [
      { writer: makeWriter(3), variant: 1, box: boxes[0] },
      { writer: makeWriter(9), box: boxes[1] },
    ],
    stamp: true,
    seed: 5,
  });

  it("places each signature inside its box and reports its ink box", () => {
    expect(form.signatures).toHaveLength(2);
    for (const s of form.signatures) {
      expect(s.inkBox.x).toBeGreaterThanOrEqual(s.box.x);
      expect(s.inkBox.x + s.inkBox.w).toBeLessThanOrEqual(s.box.x + s.box.w);
      expect(s.inkBox.w).toBeGreaterThan(s.box.w * 0.4);
      // The reported ink box really holds dark pixels.
      let dark = 0;
      for (let y = s.inkBox.y; y < s.inkBox.y + s.inkBox.h; y++)
        for (let x = s.inkBox.x; x < s.inkBox.x + s.inkBox.w; x++) if (form.raster.data[y * 1240 + x] < 128) dark++;
      expect(dark).toBeGreaterThan(200);
    }
  });

  it("contains printed text, ruling lines and a stamp", () => {
    const { raster } = form;
    // Text: many dark rows in the upper half, in regular bands.
    let inkRows = 0;
    for (let y = 150; y < 800; y++) {
      let n = 0;
      for (let x = 0; x < raster.width; x++) if (raster.data[y * raster.width + x] < 128) n++;
      if (n > 20) inkRows++;
    }
    expect(inkRows).toBeGreaterThan(150);
    expect(form.textRegions.length).toBeGreaterThan(5);
    // A ruling line: a row that is dark across most of the page width.
    let longRows = 0;
    for (let y = 0; y < raster.height; y++) {
      let run = 0,
        best = 0;
      for (let x = 0; x < raster.width; x++) {
        run = raster.data[y * raster.width + x] < 128 ? run + 1 : 0;
        best = Math.max(best, run);
      }
      if (best > 600) longRows++;
    }
    expect(longRows).toBeGreaterThan(2);
    // The stamp's ring is mid-grey ink on its circle.
    const st = form.stamp!;
    let onRing = 0;
    for (let a = 0; a < 360; a += 3) {
      const x = Math.round(st.cx + st.r * Math.cos((a * Math.PI) / 180)),
        y = Math.round(st.cy + st.r * Math.sin((a * Math.PI) / 180));
      if (raster.data[y * raster.width + x] < 200) onRing++;
    }
    expect(onRing).toBeGreaterThan(100);
  });

  it("gives a blank form without signatures and keeps the boxes free of text", () => {
    const blank = renderForm({ signatures: [], seed: 5 });
    expect(blank.signatures).toEqual([]);
    const withBoxes = renderForm({ signatures: [{ writer: makeWriter(1), box: boxes[0] }], stamp: false, seed: 8 });
    const { box } = withBoxes.signatures[0];
    const sig = renderSignature(makeWriter(1), { width: box.w, height: box.h });
    // Inside the box above the signature line, every dark pixel belongs to the signature.
    for (let y = box.y; y < box.y + box.h * 0.78; y++)
      for (let x = box.x; x < box.x + box.w; x++)
        if (withBoxes.raster.data[y * 1240 + x] < 128) expect(sig.data[(y - box.y) * box.w + (x - box.x)]).toBeLessThan(128);
  });
});

describe("photos and encoders", () => {
  const page = renderForm({ signatures: [{ writer: makeWriter(2), box: signatureBoxes(1240, 1754)[0] }], seed: 2 }).raster;

  it("makes a smaller, softer, unevenly lit photo", () => {
    const p = photoOf(page, { seed: 1, width: 640, rotation: 1.5, blur: 1.2 });
    expect(p.width).toBe(640);
    expect(p.height).toBe(Math.round((1754 * 640) / 1240));
    expect(p.data.reduce((m, v) => Math.max(m, v), 0)).toBeLessThan(255);
    // Uneven light: the corners' paper differs in brightness.
    const corner = (x: number, y: number) => p.data[y * 640 + x];
    const paper = [corner(60, 60), corner(580, 60), corner(60, 850), corner(580, 850)];
    expect(Math.max(...paper) - Math.min(...paper)).toBeGreaterThan(15);
    expect(photoOf(page, { seed: 1, width: 640 }).data).toEqual(photoOf(page, { seed: 1, width: 640 }).data);
  });

  it("has dark and blurred presets", () => {
    const frame = photoOf(page, { seed: 3, width: 640 });
    expect(mean(darkPhoto(frame)) / 255).toBeLessThan(0.08);
    const sharpness = (r: Raster) => {
      let s = 0;
      for (let y = 1; y < r.height - 1; y++)
        for (let x = 1; x < r.width - 1; x++) {
          const i = y * r.width + x;
          const lap = 4 * r.data[i] - r.data[i - 1] - r.data[i + 1] - r.data[i - r.width] - r.data[i + r.width];
          s += lap * lap;
        }
      return s / (r.width * r.height);
    };
    expect(sharpness(blurredPhoto(frame))).toBeLessThan(sharpness(frame) / 5);
    expect(blankPage(10, 5).data.every((v) => v === 255)).toBe(true);
  });

  it("encodes PNG, JPEG, PDF and multi-page TIFF", async () => {
    const small = resizeRaster(page, 310, 438);
    const png = encodePng(small);
    expect([...png.subarray(1, 4)].map((c) => String.fromCharCode(c)).join("")).toBe("PNG");
    const jpeg = encodeJpeg(small, 80);
    expect([jpeg[0], jpeg[1]]).toEqual([0xff, 0xd8]);
    const pdf = await toPdf([{ jpeg }, { png }, {}]);
    const doc = await PDFDocument.load(pdf);
    expect(doc.getPageCount()).toBe(3);
    const tiff = toTiff([small, blankPage(40, 30, 200)]);
    const ifds = UTIF.decode(tiff.buffer as ArrayBuffer);
    expect(ifds).toHaveLength(2);
    UTIF.decodeImage(tiff.buffer as ArrayBuffer, ifds[0]);
    UTIF.decodeImage(tiff.buffer as ArrayBuffer, ifds[1]);
    expect([ifds[0].width, ifds[0].height, ifds[1].width]).toEqual([310, 438, 40]);
    expect(ifds[0].data.subarray(0, 5000)).toEqual(small.data.subarray(0, 5000));
    expect(ifds[1].data[17]).toBe(200);
  });
});
