import { describe, expect, it } from "vitest";
import { DEFAULT_QUALITY_FLOOR } from "../../src/domain/policy-defaults";
import { assessQuality } from "../../src/verify/quality";
import type { Raster } from "../../src/verify/types";
import {
  blankPage,
  blurredPhoto,
  darkPhoto,
  makeWriter,
  photoOf,
  renderForm,
  renderSignature,
  signatureBoxes,
} from "../fixtures/generator";

const writer = makeWriter(5);
const form = renderForm({ signatures: [{ writer, box: signatureBoxes(1240, 1754, 1)[0] }], seed: 3, stamp: true });
const sharpFrame = photoOf(form.raster, { width: 640, blur: 0 });

function washedOut(r: Raster): Raster {
  // Over-exposed: the ink lifted to a pale grey on saturated paper.
  return { ...r, data: r.data.map((v) => (v > 150 ? 255 : 215 + (v * 40) / 255)) };
}

describe("quality", () => {
  it("rates clean scans and ordinary photos well above the floor, and says ready", () => {
    const scan = assessQuality(form.raster, { inputType: "scan" });
    expect(scan.score).toBeGreaterThan(0.9);
    expect(scan.cue).toBe("ready");
    expect(scan.figures.resolution_dpi).toBeGreaterThan(140);
    const photo = assessQuality(photoOf(form.raster, { width: 640, seed: 2 }), { inputType: "photo", kind: "frame" });
    expect(photo.score).toBeGreaterThan(0.7);
    expect(photo.cue).toBe("ready");
    const crop = assessQuality(form.raster, { region: form.signatures[0].box });
    expect(crop.score).toBeGreaterThan(0.9);
    expect(crop.figures.ink_share).toBeGreaterThan(0.02);
    expect(crop.figures.ink_share).toBeLessThan(0.9);
  });

  it("puts a strongly blurred photo below the floor and asks to hold steady", () => {
    const q = assessQuality(blurredPhoto(sharpFrame), { inputType: "photo", kind: "frame" });
    expect(q.score).toBeLessThan(DEFAULT_QUALITY_FLOOR);
    expect(q.cue).toBe("hold_steady");
    expect(q.figures.blur_px).toBeGreaterThan(3);
    const sig = assessQuality(blurredPhoto(renderSignature(writer)), { inputType: "photo" });
    expect(sig.score).toBeLessThan(DEFAULT_QUALITY_FLOOR);
  });

  it("is not fooled by sensor noise on a blurred photo, and falls steadily with blur", () => {
    const scores = [1, 3, 5, 6.5].map(
      (blur) => assessQuality(photoOf(form.raster, { width: 640, seed: 3, blur, noise: 6 }), { kind: "frame" }).score,
    );
    expect(scores[0]).toBeGreaterThan(0.9);
    expect(scores[1]).toBeGreaterThan(0.6);
    expect(scores[3]).toBeLessThan(DEFAULT_QUALITY_FLOOR);
    for (let i = 1; i < scores.length; i++) expect(scores[i]).toBeLessThanOrEqual(scores[i - 1]);
  });

  it("puts a dark photo below the floor and says too dark", () => {
    const q = assessQuality(darkPhoto(sharpFrame), { inputType: "photo", kind: "frame" });
    expect(q.score).toBeLessThan(DEFAULT_QUALITY_FLOOR);
    expect(q.cue).toBe("too_dark");
    expect(q.figures.exposure).toBeLessThan(0.08);
  });

  it("says too bright for a washed-out frame", () => {
    const q = assessQuality(washedOut(sharpFrame), { inputType: "photo", kind: "frame" });
    expect(q.cues).toContain("too_bright");
    expect(q.score).toBeLessThan(DEFAULT_QUALITY_FLOOR);
  });

  it("says no signature in view for an empty frame, without calling it unreadable", () => {
    const q = assessQuality(blankPage(640, 480, 230), { kind: "frame" });
    expect(q.cue).toBe("no_signature_in_view");
    expect(q.score).toBeGreaterThanOrEqual(DEFAULT_QUALITY_FLOOR);
  });

  it("asks to move closer when the signature is tiny in the frame", () => {
    const tiny = renderSignature(writer, { height: 24 });
    const q = assessQuality(tiny, { inputType: "photo" });
    expect(q.cues).toContain("move_closer");
    expect(q.figures.resolution_dpi).toBeLessThan(100);
  });

  it("judges blur the same whatever the ink's contrast", () => {
    const grey = { ...form.raster, data: form.raster.data.map((v) => 128 + (v * 127) / 255) };
    const a = assessQuality(form.raster, { region: form.signatures[0].box });
    const b = assessQuality(grey, { region: form.signatures[0].box });
    expect(Math.abs(a.figures.blur_px - b.figures.blur_px)).toBeLessThan(0.3);
  });
});
