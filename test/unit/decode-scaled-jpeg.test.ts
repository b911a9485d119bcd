/**
 * The scaled JPEG decode (issue 15): the page at 1/2, 1/4 or 1/8 through the scaled IDCT, full-resolution
 * windows of it, and the pipeline that locates on the scaled page and crops at full resolution.
 */
import { describe, expect, it } from "vitest";
import { openDocument } from "../../src/verify/decode";
import { decodeJpegScaled } from "../../src/verify/decode/jpeg";
import { decodeJpegLumaJob } from "../../src/verify/decode/jpeg-luma";
import { locateSignatures } from "../../src/verify/locate";
import { shrink, shrinkScaled } from "../../src/verify/morphology";
import { analyseDocument, pageDecodeScale } from "../../src/verify/pipeline";
import { assessQuality } from "../../src/verify/quality";
import { eraseRules, ruleWindow } from "../../src/verify/crop-rules";
import { cropRaster, paddedBox } from "../../src/verify/render";
import { DEFAULT_DECODE_LIMITS, VerifyError, type Box, type Raster } from "../../src/verify/types";
import { encodeJpeg, makeWriter, renderForm, signatureBoxes } from "../fixtures/generator";
import { encodeProgressiveJpeg } from "./jpeg-progressive-encode";

/** The full decode averaged over s x s blocks, against the scaled decode: largest and mean difference. */
function againstBoxAverage(full: Raster, scaled: Raster, s: number): { max: number; mean: number } {
  let max = 0;
  let sum = 0;
  let n = 0;
  // Whole s x s blocks only: a partial block at the edge averages pixels beyond the image in the IDCT.
  for (let y = 0; y < Math.floor(full.height / s); y++) {
    for (let x = 0; x < Math.floor(full.width / s); x++) {
      let a = 0;
      for (let dy = 0; dy < s; dy++) for (let dx = 0; dx < s; dx++) a += full.data[(y * s + dy) * full.width + x * s + dx];
      const d = Math.abs(a / (s * s) - scaled.data[y * scaled.width + x]);
      max = Math.max(max, d);
      sum += d;
      n++;
    }
  }
  return { max, mean: sum / n };
}

function sameRaster(a: Raster, b: Raster): boolean {
  return a.width === b.width && a.height === b.height && a.data.every((v, i) => v === b.data[i]);
}

const writer = makeWriter(7);
/** Part of a busy form (print, rules, a stamp and a signature), at odd dimensions so edge blocks are partial. */
function formPart(): Raster {
  const box = signatureBoxes(2480, 3508, 1)[0];
  const form = renderForm({ signatures: [{ writer, variant: 12, box }], width: 2480, height: 3508, seed: 5, stamp: true });
  return cropRaster(form.raster, { x: 101, y: 2500, w: 1203, h: 901 });
}

describe("scaled JPEG decode", () => {
  const part = formPart();
  const baseline = encodeJpeg(part, 85);
  const progressive = encodeProgressiveJpeg(part);

  for (const [kind, jpg] of [
    ["baseline", baseline],
    ["progressive", progressive],
  ] as const) {
    it(`decodes a ${kind} JPEG at 1/2 to 1/8 as the full decode averaged over 2x2 to 8x8 squares`, () => {
      const full = decodeJpegLumaJob(jpg, { scale: 1 })!.raster;
      expect([full.width, full.height]).toEqual([1203, 901]);
      // 2, 4 and 8 divide the 8x8 block; 3, 5, 6 and 7 give squares that straddle block edges.
      for (const s of [2, 3, 4, 5, 6, 7, 8] as const) {
        const r = decodeJpegLumaJob(jpg, { scale: s })!;
        expect([r.raster.width, r.raster.height]).toEqual([Math.ceil(1203 / s), Math.ceil(901 / s)]);
        expect([r.width, r.height]).toEqual([1203, 901]);
        const { max, mean } = againstBoxAverage(full, r.raster, s);
        // The scaled bases average the full IDCT exactly; what remains is rounding, and clamping taking
        // place after the average instead of before it (ringing next to black ink).
        expect(mean).toBeLessThan(0.25);
        expect(max).toBeLessThanOrEqual(12);
      }
      // 1/8 is the DC term alone: every block is one flat pixel, its mean.
      const dc = decodeJpegLumaJob(jpg, { scale: 8 })!.raster;
      expect(againstBoxAverage(full, dc, 8).max).toBeLessThanOrEqual(8);
    });

    it(`decodes windows of a ${kind} JPEG at full resolution, pixel for pixel the crop of the full page`, () => {
      const full = decodeJpegLumaJob(jpg, { scale: 1 })!.raster;
      const page = decodeJpegScaled(jpg, DEFAULT_DECODE_LIMITS, 0, () => 3);
      expect(page.scale).toBe(3);
      expect([page.width, page.height]).toEqual([1203, 901]);
      const boxes: Box[] = [
        { x: 0, y: 0, w: 1203, h: 901 },
        { x: 3, y: 5, w: 100, h: 77 },
        { x: 517, y: 229, w: 333, h: 301 },
        { x: 1001.4, y: 399.6, w: 333.3, h: 17.5 },
        { x: 1193, y: 893, w: 50, h: 50 },
        { x: 0, y: 880, w: 1203, h: 21 },
      ];
      for (const b of boxes) expect(sameRaster(page.crop(b), cropRaster(full, b)), JSON.stringify(b)).toBe(true);
    });
  }

  it("chooses the scale from the locator's working copy: 1/3 for A4 at 300 dpi, 1/6 at 600, whole below", () => {
    expect(pageDecodeScale(2480, 3508)).toBe(3);
    expect(pageDecodeScale(4960, 7016)).toBe(6);
    expect(pageDecodeScale(9000, 12000)).toBe(8);
    expect(pageDecodeScale(1240, 1754)).toBe(2);
    expect(pageDecodeScale(1000, 1400)).toBe(1);
    expect(pageDecodeScale(640, 480)).toBe(1);
  });

  it("keeps the size checks before allocation and types a damaged file as corrupt_file", async () => {
    const limits = { ...DEFAULT_DECODE_LIMITS, maxPixelsPerPage: 1000 * 800 };
    const err = (() => {
      try {
        decodeJpegScaled(baseline, limits, 0, () => 2);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(VerifyError);
    expect((err as VerifyError).code).toBe("too_many_pixels");
    const cut = baseline.slice(0, Math.floor(baseline.length / 2));
    const damaged = await (await openDocument(cut)).decodePageScaled(0, () => 2).catch((e: unknown) => e);
    expect(damaged).toBeInstanceOf(VerifyError);
    expect((damaged as VerifyError).code).toBe("corrupt_file");
  });

  it("gives a working copy from a scaled page: same size, close to the full page's", () => {
    const full = decodeJpegLumaJob(baseline, { scale: 1 })!.raster;
    const half = decodeJpegLumaJob(baseline, { scale: 2 })!.raster;
    const region = { x: 0, y: 0, w: full.width, h: full.height };
    for (const factor of [2, 3, 5]) {
      const a = shrink(full, factor, region);
      const b = shrinkScaled(half, factor, region, 2);
      expect([b.width, b.height]).toEqual([a.width, a.height]);
      let sum = 0;
      for (let i = 0; i < a.data.length; i++) sum += Math.abs(a.data[i] - b.data[i]);
      // Factor 2 is exact up to rounding; 3 and 5 straddle half-size pixels, a slight extra blur.
      expect(sum / a.data.length).toBeLessThan(factor === 2 ? 0.6 : 1.5);
    }
    // Decoded at the locator's own factor, the scaled page is its working copy (up to rounding).
    const third = decodeJpegLumaJob(baseline, { scale: 3 })!.raster;
    for (const factor of [3, 6]) {
      const a = shrink(full, factor, region);
      const b = shrinkScaled(third, factor, region, 3);
      expect([b.width, b.height]).toEqual([a.width, a.height]);
      let sum = 0;
      for (let i = 0; i < a.data.length; i++) sum += Math.abs(a.data[i] - b.data[i]);
      expect(sum / a.data.length).toBeLessThan(0.6);
    }
  });
});

describe("the pipeline on a scaled A4 page", () => {
  const boxes = signatureBoxes(2480, 3508, 2);
  const form = renderForm({
    signatures: boxes.map((box, i) => ({ writer, variant: 12 + i, box })),
    width: 2480,
    height: 3508,
    seed: 9,
    stamp: true,
  });
  const a4 = encodeJpeg(form.raster, 85);

  it("locates on the 1/3 page and maps the boxes back to the full-resolution crops the whole page gives", async () => {
    const doc = await openDocument(a4);
    const scaled = await doc.decodePageScaled(0, pageDecodeScale);
    expect(scaled.scale).toBe(3);
    expect([scaled.raster.width, scaled.raster.height]).toEqual([827, 1170]);
    const full = await doc.decodePage(0);

    const onFull = locateSignatures([full], { inputType: "scan" });
    const onScaled = locateSignatures([scaled.raster], {
      inputType: "scan",
      scaled: { scale: scaled.scale, width: scaled.width, height: scaled.height },
    });
    expect(onFull).toHaveLength(2);
    expect(onScaled.map((s) => s.box)).toEqual(onFull.map((s) => s.box));
    for (const s of onScaled) expect(sameRaster(scaled.crop(s.box), cropRaster(full, s.box))).toBe(true);

    const whole = await analyseDocument(a4, { inputType: "scan", qualityFloor: 0.3, scaledDecode: false });
    const fast = await analyseDocument(a4, { inputType: "scan", qualityFloor: 0.3 });
    // The same boxes; the locator's confidence may move a little with the working copy's slight blur.
    expect(fast.signatures.map((s) => s.box)).toEqual(whole.signatures.map((s) => s.box));
    fast.signatures.forEach((s, i) => expect(Math.abs(s.confidence - whole.signatures[i].confidence)).toBeLessThan(0.02));
    expect(fast.crops.length).toBe(2);
    fast.crops.forEach((c, i) => {
      expect(sameRaster(c, whole.crops[i])).toBe(true);
      // The box cut from the full page, with the form's signing line painted out as the pipeline does.
      const box = fast.signatures[i].box;
      const around = ruleWindow(box, paddedBox(box, full), full);
      const expected = eraseRules(cropRaster(full, around), { x: box.x - around.x, y: box.y - around.y, w: box.w, h: box.h });
      expect(sameRaster(c, expected)).toBe(true);
      expect(sameRaster(c, cropRaster(full, box))).toBe(false);
    });
    expect(fast.cropPngs).toEqual(whole.cropPngs);
    expect(fast.perSignatureQuality).toEqual(whole.perSignatureQuality);
    // Page quality is measured on the 1/3 page, but dpi is the real page's.
    expect(fast.quality.score).toBe(whole.quality.score);
    expect(fast.quality.cues).toEqual(whole.quality.cues);
    expect(fast.quality.figures.resolution_dpi).toBe(whole.quality.figures.resolution_dpi);
    expect(fast.quality.figures.resolution_dpi).toBeCloseTo(2480 / 8.4, 0);
    expect(Math.abs(fast.quality.figures.blur_px - whole.quality.figures.blur_px)).toBeLessThan(0.05);
    const direct = assessQuality(scaled.raster, {
      inputType: "scan",
      kind: "page",
      source: { scale: 3, width: 2480, height: 3508 },
    });
    expect(direct.figures.resolution_dpi).toBe(whole.quality.figures.resolution_dpi);
  });
});
