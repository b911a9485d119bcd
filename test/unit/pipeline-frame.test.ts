import { describe, expect, it } from "vitest";
import { DEFAULT_QUALITY_FLOOR } from "../../src/domain/policy-defaults";
import { analyseFrame } from "../../src/verify/pipeline-frame";
import { blankPage, blurredPhoto, darkPhoto, encodeJpeg, encodePng, makeWriter, photoOf, renderSignature } from "../fixtures/generator";

const opts = { qualityFloor: DEFAULT_QUALITY_FLOOR };
// A signing sheet filling most of the frame, as the capture guide asks for.
const sheet = (() => {
  const sig = renderSignature(makeWriter(8), { width: 560, height: 220 });
  const page = blankPage(640, 480);
  for (let y = 0; y < sig.height; y++) page.data.set(sig.data.subarray(y * sig.width, (y + 1) * sig.width), (y + 130) * 640 + 40);
  return page;
})();

describe("analyseFrame (live capture guide)", () => {
  it("says ready for a sharp, well-lit signature filling the frame", async () => {
    const a = await analyseFrame(encodeJpeg(photoOf(sheet, { seed: 1, illumination: 0.15 }), 85), opts);
    expect(a.cue).toBe("ready");
    expect(a.ready).toBe(true);
    expect(a.signature).not.toBeNull();
  });

  it("asks to hold steady when blurred, and says too dark when dark", async () => {
    const blurred = await analyseFrame(encodeJpeg(blurredPhoto(photoOf(sheet, { blur: 0 })), 85), opts);
    expect(blurred.cue).toBe("hold_steady");
    expect(blurred.ready).toBe(false);
    const dark = await analyseFrame(encodeJpeg(darkPhoto(sheet), 85), opts);
    expect(dark.cue).toBe("too_dark");
  });

  it("says no signature in view for an empty sheet, and move closer for a distant signature", async () => {
    const empty = await analyseFrame(encodeJpeg(photoOf(blankPage(640, 480), { seed: 2 }), 85), opts);
    expect(empty.cue).toBe("no_signature_in_view");
    const far = blankPage(640, 480);
    const small = renderSignature(makeWriter(8), { width: 140, height: 55 });
    for (let y = 0; y < small.height; y++) far.data.set(small.data.subarray(y * small.width, (y + 1) * small.width), (y + 200) * 640 + 250);
    const a = await analyseFrame(encodePng(far), opts);
    expect(a.cues).toContain("move_closer");
    expect(a.ready).toBe(false);
  });

  it("says the signature is cut off when it runs out of the frame, and not while it has a margin", async () => {
    const sig = renderSignature(makeWriter(8), { width: 560, height: 220 });
    // The same signature three ways: 40 px from each side, its last 120 px past the right edge, its top
    // 60 px above the frame.
    const place = (left: number, top: number) => {
      const page = blankPage(640, 480);
      for (let y = 0; y < sig.height; y++) {
        const py = y + top;
        if (py < 0 || py >= page.height) continue;
        for (let x = 0; x < sig.width; x++) {
          const px = x + left;
          if (px >= 0 && px < page.width) page.data[py * page.width + px] = sig.data[y * sig.width + x];
        }
      }
      return encodeJpeg(photoOf(page, { seed: 1, illumination: 0.15 }), 85);
    };
    const centred = await analyseFrame(place(40, 130), opts);
    expect(centred.cues).not.toContain("signature_cut_off");
    expect(centred.cue).toBe("ready");
    for (const frame of [place(200, 130), place(40, -60)]) {
      const a = await analyseFrame(frame, opts);
      expect(a.cue).toBe("signature_cut_off");
      expect(a.ready).toBe(false);
      expect(a.signature).not.toBeNull();
      // Moving closer would cut off more, so that is not asked for as well.
      expect(a.cues).not.toContain("move_closer");
    }
  });

  it("refuses frames over 640 px on the long side, over 512 KB, or not PNG/JPEG", async () => {
    await expect(analyseFrame(encodePng(blankPage(800, 400)), opts)).rejects.toMatchObject({ code: "too_many_pixels" });
    await expect(analyseFrame(new Uint8Array(600 * 1024), opts)).rejects.toMatchObject({ code: "too_large" });
    await expect(analyseFrame(new TextEncoder().encode("%PDF-1.7 nothing"), opts)).rejects.toMatchObject({ code: "unsupported_format" });
  });
});
