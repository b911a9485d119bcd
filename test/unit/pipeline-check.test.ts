import { beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_QUALITY_FLOOR, DEFAULT_THRESHOLDS } from "../../src/domain/policy-defaults";
import { getCore } from "../../src/verify/core-module";
import { buildReferenceModel, type ReferenceModel } from "../../src/verify/model";
import {
  InsufficientReferencesError,
  analyseDocument,
  checkDocument,
  enrolReference,
  type CheckEvent,
  type EnrolledReference,
} from "../../src/verify/pipeline";
import { decodePage } from "../../src/verify/decode";
import { locateSignatures } from "../../src/verify/locate";
import { lineRuns } from "../../src/verify/name-parts";
import { cropRaster, signatureCropPng } from "../../src/verify/render";
import type { Box } from "../../src/verify/types";
import {
  blankPage as blankRaster,
  blurredPhoto,
  boxIoU,
  darkenOnto,
  inkBounds,
  darkPhoto,
  encodeJpeg,
  encodePng,
  lettersApart,
  makeWriter,
  photoOf,
  printedLine,
  renderForm,
  renderSignature,
  signatureBoxes,
  toPdf,
} from "../fixtures/generator";

const policy = { thresholds: DEFAULT_THRESHOLDS, quality_floor: DEFAULT_QUALITY_FLOOR };
const within = (b: Box, outer: Box) => b.x >= outer.x && b.y >= outer.y && b.x + b.w <= outer.x + outer.w && b.y + b.h <= outer.y + outer.h;
const writer = makeWriter(3);
const W = 1240;
const H = 1754;
const box = signatureBoxes(W, H, 1)[0];
const signedForm = (seed: number) => renderForm({ signatures: [{ writer, variant: 11, box }], width: W, height: H, seed, stamp: true });

let model: ReferenceModel;

beforeAll(async () => {
  const core = getCore();
  const refs = [];
  for (let v = 1; v <= 4; v++) {
    const e = await enrolReference(core, encodePng(renderSignature(writer, { variant: v })), { qualityFloor: DEFAULT_QUALITY_FLOOR });
    if ("rejected" in e) throw new Error(`reference ${v} rejected: ${e.detail}`);
    refs.push({ refId: `ref-${v}`, features: e.features });
  }
  model = buildReferenceModel(core, refs);
});

describe("enrolReference", () => {
  it("takes a bare signature image: features, the box, and a thumbnail within 512 px", async () => {
    const sig = renderSignature(writer, { variant: 2, height: 700 });
    const e = (await enrolReference(getCore(), encodePng(sig), { qualityFloor: DEFAULT_QUALITY_FLOOR })) as EnrolledReference;
    expect("rejected" in e).toBe(false);
    expect(e.features.inkFound).toBe(true);
    expect(e.page).toBe(1);
    expect(e.quality.score).toBeGreaterThanOrEqual(DEFAULT_QUALITY_FLOOR);
    const thumb = await decodePage(e.thumbnailPng, 0);
    expect(Math.max(thumb.width, thumb.height)).toBe(512);
    expect(thumb.width / thumb.height).toBeCloseTo(sig.width / sig.height, 1);
  });

  it("rejects a blank image, a dark photo and a corrupt file without throwing", async () => {
    const core = getCore();
    const blank = await enrolReference(core, encodePng({ width: 400, height: 150, data: new Uint8Array(400 * 150).fill(255) }), {
      qualityFloor: DEFAULT_QUALITY_FLOOR,
    });
    expect(blank).toMatchObject({ rejected: "no_signature" });
    const dark = await enrolReference(core, encodeJpeg(darkPhoto(renderSignature(writer, { variant: 1 }))), {
      qualityFloor: DEFAULT_QUALITY_FLOOR,
      inputType: "photo",
    });
    expect(dark).toMatchObject({ rejected: "unreadable" });
    const corrupt = await enrolReference(core, encodePng(renderSignature(writer)).slice(0, 60), { qualityFloor: DEFAULT_QUALITY_FLOOR });
    expect(corrupt).toMatchObject({ rejected: "corrupt_file" });
  });
});

describe("checkDocument", () => {
  it("finds the signature on a busy form, scores it, and streams quality, located, comparing in that order", async () => {
    const form = signedForm(2);
    const events: CheckEvent[] = [];
    const out = await checkDocument(getCore(), encodeJpeg(form.raster, 90), model, policy, { inputType: "form" }, (e) => {
      events.push(e);
    });
    expect(events.map((e) => e.type)).toEqual(["quality", "located", "comparing"]);
    expect(events[2]).toEqual({ type: "comparing", data: { reference_count: 4 } });
    expect(["AUTO_APPROVE", "APPROVE", "FLAG", "FAILED"]).toContain(out.decision);
    expect(out.signatures.length).toBeGreaterThanOrEqual(1);
    const best = out.signatures.find((s) => s.index === out.bestSignature)!;
    expect(best.page).toBe(1);
    expect(boxIoU(best.box, form.signatures[0].inkBox)).toBeGreaterThan(0.3);
    expect(out.score).toBe(best.score);
    expect(out.bestReferenceId).toMatch(/^ref-\d$/);
    expect(out.regions.length).toBeGreaterThan(0);
    for (const r of out.regions) {
      // Deviating regions are in page pixels, inside the signature's box.
      expect(r.box.x).toBeGreaterThanOrEqual(best.box.x - 1);
      expect(r.box.x + r.box.w).toBeLessThanOrEqual(best.box.x + best.box.w + 1);
    }
    expect(out.cropPngs).toHaveLength(out.signatures.length);
    const crop = await decodePage(out.cropPngs[out.bestSignature!], 0);
    expect(Math.max(crop.width, crop.height)).toBeLessThanOrEqual(640);
  });

  it("scores the subject's own signature above another writer's", async () => {
    const mine = await checkDocument(getCore(), encodePng(renderSignature(writer, { variant: 9 })), model, policy, {
      inputType: "signature_image",
    });
    const theirs = await checkDocument(getCore(), encodePng(renderSignature(makeWriter(41), { variant: 9 })), model, policy, {
      inputType: "signature_image",
    });
    expect(mine.score!).toBeGreaterThan(theirs.score!);
  });

  describe("a name the locator boxed in two words", () => {
    // Two writers' signatures side by side, `gap` of the taller one's height apart, on 40 px of paper: a
    // name written in two words (both writers enrolled together as one subject), or two signers.
    const word = (w: ReturnType<typeof makeWriter>, variant: number) => {
      const r = renderSignature(w, { variant });
      return cropRaster(r, inkBounds(r)!);
    };
    const sideBySide = (variant: number, gap = 1.2) => {
      const a = word(writer, variant);
      const b = word(other, variant);
      const h = Math.max(a.height, b.height);
      const page = blankRaster(a.width + Math.round(gap * h) + b.width + 80, h + 80);
      darkenOnto(page, a, 40, 40 + h - a.height);
      darkenOnto(page, b, 40 + a.width + Math.round(gap * h), 40 + h - b.height);
      return page;
    };
    const other = makeWriter(8);
    let nameModel: ReferenceModel;
    beforeAll(async () => {
      const refs = [];
      for (let v = 1; v <= 4; v++) {
        const e = await enrolReference(getCore(), encodePng(sideBySide(v)), { qualityFloor: DEFAULT_QUALITY_FLOOR });
        if ("rejected" in e) throw new Error(`reference ${v} rejected: ${e.detail}`);
        refs.push({ refId: `name-${v}`, features: e.features });
      }
      nameModel = buildReferenceModel(getCore(), refs);
    });

    it("compares the whole name, lists it as one signature, and streams that list", async () => {
      const photo = photoOf(sideBySide(11), { seed: 11 });
      expect(locateSignatures([photo], { inputType: "photo" })).toHaveLength(2);
      const events: CheckEvent[] = [];
      const out = await checkDocument(getCore(), encodePng(photo), nameModel, policy, { inputType: "photo" }, (e) => {
        events.push(e);
      });
      const apart = await checkDocument(getCore(), encodePng(photo), nameModel, policy, { inputType: "photo", joinRuns: false });
      expect(apart.signatures).toHaveLength(2);
      expect(apart.score!).toBeLessThan(policy.thresholds.flag);
      expect(out.signatures).toHaveLength(1);
      expect(out.signatures[0].index).toBe(0);
      expect(out.bestSignature).toBe(0);
      expect(out.score!).toBeGreaterThanOrEqual(policy.thresholds.approve);
      // The box is the union of the two words' boxes.
      const [a, b] = apart.signatures.map((s) => s.box);
      expect(out.signatures[0].box).toEqual({
        x: a.x,
        y: Math.min(a.y, b.y),
        w: b.x + b.w - a.x,
        h: Math.max(a.y + a.h, b.y + b.h) - Math.min(a.y, b.y),
      });
      // The reviewer's crop is the union's, not a word's.
      expect(out.cropPngs).toEqual([await signatureCropPng(photo, out.signatures[0].box)]);
      expect(events.map((e) => e.type)).toEqual(["quality", "located", "comparing"]);
      const located = events[1] as Extract<CheckEvent, { type: "located" }>;
      expect(located.data.signatures.map((s) => [s.index, s.box])).toEqual([[0, out.signatures[0].box]]);
    });

    it("keeps two signers apart: the subject's own signature is compared alone", async () => {
      const page = sideBySide(12);
      const out = await checkDocument(getCore(), encodePng(page), model, policy, { inputType: "photo" });
      const apart = await checkDocument(getCore(), encodePng(page), model, policy, { inputType: "photo", joinRuns: false });
      // Their union was a candidate, compared and turned down.
      expect(lineRuns(apart.signatures)).toHaveLength(1);
      expect(out.signatures).toHaveLength(2);
      expect(out.signatures.map((s) => [s.box, s.score])).toEqual(apart.signatures.map((s) => [s.box, s.score]));
      expect(out.score!).toBeGreaterThanOrEqual(policy.thresholds.approve);
      expect(out.cropPngs).toEqual(apart.cropPngs);
    });

    it("numbers a joined name on page 2 after page 1's signature, with or without crops", async () => {
      const first = renderSignature(other, { variant: 13 });
      const photo = photoOf(sideBySide(14), { seed: 14 });
      const pdf = await toPdf([{ png: encodePng(first) }, { png: encodePng(photo) }]);
      for (const renderCrops of [true, false]) {
        const out = await checkDocument(getCore(), pdf, nameModel, policy, { inputType: "photo", renderCrops });
        expect(out.pages).toBe(2);
        expect(out.signatures.map((s) => [s.index, s.page])).toEqual([
          [0, 1],
          [1, 2],
        ]);
        expect(out.bestSignature).toBe(1);
        expect(out.score!).toBeGreaterThanOrEqual(policy.thresholds.approve);
        expect(out.cropPngs).toHaveLength(renderCrops ? 2 : 0);
        const words = locateSignatures([photo], { inputType: "photo" }).map((f) => f.box);
        expect(words).toHaveLength(2);
        const union = out.signatures[1].box;
        for (const w of words) expect(within(w, union), JSON.stringify({ w, union })).toBe(true);
      }
    });
  });

  describe("a photo whose page search finds nothing", () => {
    // A name in separate letters whose headlines keep one line: the page search takes it for a line of
    // type. Its writer's references are the same letters, their headlines straying as a hand's do.
    let lettersModel: ReferenceModel;
    beforeAll(async () => {
      const refs = [];
      for (const wander of [2, 3, 4, 5]) {
        const e = await enrolReference(getCore(), encodePng(lettersApart(1, wander)), { qualityFloor: DEFAULT_QUALITY_FLOOR });
        if ("rejected" in e) throw new Error(`reference ${wander} rejected: ${e.detail}`);
        refs.push({ refId: `letters-${wander}`, features: e.features });
      }
      lettersModel = buildReferenceModel(getCore(), refs);
    });

    it("compares its whole ink, and keeps it as a signature when it is the subject's", async () => {
      const level = lettersApart(1, 0);
      expect(locateSignatures([level], { inputType: "photo" })).toEqual([]);
      const events: CheckEvent[] = [];
      const out = await checkDocument(getCore(), encodePng(level), lettersModel, policy, { inputType: "photo" }, (e) => {
        events.push(e);
      });
      expect(out.score!).toBeGreaterThanOrEqual(policy.thresholds.approve);
      expect(out.signatures).toHaveLength(1);
      expect(out.signatures[0].box).toEqual(locateSignatures([level], { inputType: "signature_image" })[0].box);
      expect(out.cropPngs).toEqual([await signatureCropPng(level, out.signatures[0].box)]);
      expect(events.map((e) => e.type)).toEqual(["quality", "located", "comparing"]);
      const without = await checkDocument(getCore(), encodePng(level), lettersModel, policy, { inputType: "photo", wholeInkIfNone: false });
      expect(without.decision).toBe("NO_SIGNATURE");
    });

    it("keeps the whole ink from the policy's flag up, never below the default flag, and without crops too", async () => {
      // Another name of the same letters scores 0.849 against this subject.
      const image = encodePng(lettersApart(4, 0));
      const first = await checkDocument(getCore(), image, lettersModel, policy, { inputType: "photo" });
      const score = first.score!;
      expect(score).toBeGreaterThan(0.5);
      expect(score).toBeLessThan(0.95);
      const at = (flag: number) => ({ ...policy, thresholds: { auto_approve: 0.99, approve: 0.98, flag } });
      const kept = await checkDocument(getCore(), image, lettersModel, at(score), { inputType: "photo", renderCrops: false });
      expect(kept).toMatchObject({ decision: "FLAG", score, bestSignature: 0, cropPngs: [] });
      expect(kept.signatures.map((s) => s.index)).toEqual([0]);
      expect((await checkDocument(getCore(), image, lettersModel, at(score + 0.0001), { inputType: "photo" })).decision).toBe(
        "NO_SIGNATURE",
      );
      // A policy that flags everything does not make a signature of a line of type.
      const type = encodePng(printedLine(900, 200, 5, 1));
      expect((await checkDocument(getCore(), type, lettersModel, at(0), { inputType: "photo" })).decision).toBe("NO_SIGNATURE");
    });

    it("looks only at one page of at most 2000 px, a JPEG decoded scaled included", async () => {
      const letters = lettersApart(1, 0);
      const on = (width: number) => {
        const page = blankRaster(width, 400);
        darkenOnto(page, letters, 100, 50);
        return page;
      };
      const big = await checkDocument(getCore(), encodePng(on(2100)), lettersModel, policy, { inputType: "photo" });
      expect(big.decision).toBe("NO_SIGNATURE");
      // 1900 px: the search sees the JPEG at half size; the whole ink is taken at full size.
      const jpeg = encodeJpeg(on(1900), 92);
      const scaled = await checkDocument(getCore(), jpeg, lettersModel, policy, { inputType: "photo" });
      expect(scaled.score!).toBeGreaterThanOrEqual(policy.thresholds.approve);
      expect((await checkDocument(getCore(), jpeg, lettersModel, policy, { inputType: "photo", wholeInkIfNone: false })).decision).toBe(
        "NO_SIGNATURE",
      );
      expect(scaled.signatures[0].box.x).toBeGreaterThanOrEqual(95);
      const twoPages = await toPdf([{ png: encodePng(letters) }, { png: encodePng(letters) }]);
      expect((await checkDocument(getCore(), twoPages, lettersModel, policy, { inputType: "photo" })).decision).toBe("NO_SIGNATURE");
    });

    it("stays NO_SIGNATURE (not billed) when the whole ink is not the subject's: a name in letters, lines of type", async () => {
      for (const [subject, image] of [
        [model, lettersApart(1, 0)],
        [lettersModel, printedLine(900, 200, 5, 1)],
        [lettersModel, printedLine(1100, 300, 6, 2)],
        [model, printedLine(900, 200, 5, 3)],
      ] as const) {
        expect(locateSignatures([image], { inputType: "photo" })).toEqual([]);
        const events: CheckEvent[] = [];
        const out = await checkDocument(getCore(), encodePng(image), subject, policy, { inputType: "photo" }, (e) => {
          events.push(e);
        });
        expect(out.decision, `${image.width} x ${image.height}`).toBe("NO_SIGNATURE");
        expect(out.signatures).toEqual([]);
        expect(out.cropPngs).toEqual([]);
        expect(events).toEqual([expect.objectContaining({ type: "quality" }), { type: "located", data: { signatures: [] } }]);
      }
    });
  });

  it("returns NO_SIGNATURE for a blank page and for a blank form", async () => {
    const blankPage = { width: W, height: H, data: new Uint8Array(W * H).fill(255) };
    const a = await checkDocument(getCore(), encodePng(blankPage), model, policy, { inputType: "scan" });
    expect(a.decision).toBe("NO_SIGNATURE");
    expect(a.score).toBeNull();
    const blankForm = renderForm({ signatures: [], width: W, height: H, seed: 7 });
    const b = await checkDocument(getCore(), encodeJpeg(blankForm.raster, 90), model, policy, { inputType: "form" });
    expect(b.decision).toBe("NO_SIGNATURE");
  });

  it("returns UNREADABLE for a strongly blurred photo and for a dark photo, before comparing", async () => {
    const form = signedForm(4);
    for (const photo of [
      blurredPhoto(photoOf(form.raster, { width: 640, blur: 0 })),
      darkPhoto(photoOf(form.raster, { width: 640, blur: 0 })),
    ]) {
      const events: string[] = [];
      const out = await checkDocument(getCore(), encodeJpeg(photo, 90), model, policy, { inputType: "photo" }, (e) => {
        events.push(e.type);
      });
      expect(out.decision).toBe("UNREADABLE");
      expect(out.quality.score).toBeLessThan(DEFAULT_QUALITY_FLOOR);
      expect(events).not.toContain("comparing");
    }
    // The same page photographed normally is readable.
    const fine = await analyseDocument(encodeJpeg(photoOf(form.raster, { width: 640, seed: 3 }), 90), {
      inputType: "photo",
      qualityFloor: DEFAULT_QUALITY_FLOOR,
    });
    expect(fine.unreadable).toBeFalsy();
    expect(fine.quality.score).toBeGreaterThan(0.7);
  });

  it("searches only target.page, passes over text-only pages, and numbers pages from 1", async () => {
    const form = signedForm(5);
    const pdf = await toPdf([{}, { jpeg: encodeJpeg(form.raster, 85) }]);
    const all = await analyseDocument(pdf, { inputType: "form", qualityFloor: DEFAULT_QUALITY_FLOOR });
    expect(all.pages).toBe(2);
    expect(all.signatures.length).toBeGreaterThanOrEqual(1);
    expect(all.signatures.every((s) => s.page === 2)).toBe(true);
    expect(all.signatures.map((s) => s.index)).toEqual(all.signatures.map((_, i) => i));
    await expect(
      analyseDocument(pdf, { inputType: "form", target: { page: 1 }, qualityFloor: DEFAULT_QUALITY_FLOOR }),
    ).rejects.toMatchObject({ code: "no_raster_content" });
    await expect(
      analyseDocument(pdf, { inputType: "form", target: { page: 3 }, qualityFloor: DEFAULT_QUALITY_FLOOR }),
    ).rejects.toMatchObject({ code: "page_out_of_range" });
  });

  it("refuses a model whose every reference is an outlier: nothing is left to compare with", async () => {
    const form = signedForm(6);
    const allOutliers: ReferenceModel = { ...model, refs: model.refs.map((r) => ({ ...r, outlier: true })) };
    await expect(checkDocument(getCore(), encodeJpeg(form.raster), allOutliers, policy, { inputType: "form" })).rejects.toBeInstanceOf(
      InsufficientReferencesError,
    );
  });
});
