// `bench:accuracy -- <dataset> --page a4-jpeg`: every dataset image is signed onto a printed form scanned
// at 300 dpi, encoded as a JPEG, and goes through the pipeline the check route runs on such a page (JPEG
// decode, page quality, locating, the located box at full resolution) twice: with the page decoded whole
// (the path before issue 15) and with the scaled decode (the page at 1/3 through the scaled IDCT, the box
// decoded again at full resolution). The features are taken from the crops the pipeline located.
//
// The form is the signing band of an A4 page held landscape: 3508 x 1400 px. Its long side is what sets
// the locator's working copy and so the decode scale (1/3, as for A4 portrait at 300 dpi), at 40% of the
// pixels, which keeps the JPEG encoding of thousands of pages affordable.
import { openDocument } from "../../src/verify/decode";
import { analyseDocument, pageDecodeScale } from "../../src/verify/pipeline";
import { cropRaster } from "../../src/verify/render";
import type { Box, Raster } from "../../src/verify/types";
import { encodeJpeg, inkBounds, renderForm } from "../../test/fixtures/generator";

const WIDTH = 3508;
const HEIGHT = 1400;
const BOX: Box = { x: 300, y: 480, w: 1500, h: 820 };
/** The printed form (text, rules, the line to sign on), rendered once: every image is signed on it. */
let blank: Raster | undefined;

export interface A4Outcome {
  /** The pixels the features are taken from. */
  crop: Raster;
  /** The locator found a box over the signature (false: the crop is the known box, as a fallback). */
  located: boolean;
}

/**
 * Where the signature goes on the signing box: `centred` in it (the signing line, drawn at 0.8 of the
 * box, crosses only the tallest images), or `on-line`, as people sign: the line crosses the ink at 80%
 * of its height, so loops and descenders hang below it.
 */
export type Placement = "centred" | "on-line";

/** The signing line's row on the page (test/fixtures/form.ts draws it at 0.8 of the box). */
const LINE_Y = BOX.y + BOX.h * 0.8;

/** The image darkened onto the form (ink over print, as a pen does), placed on the signing box. */
export function signOnForm(sig: Raster, placement: Placement = "centred"): { page: Raster; box: Box } {
  blank ??= renderForm({ signatures: [], boxes: [BOX], width: WIDTH, height: HEIGHT, seed: 5, stamp: false }).raster;
  const page = { width: WIDTH, height: HEIGHT, data: blank.data.slice() };
  const x0 = Math.max(0, Math.round(BOX.x + BOX.w / 2 - sig.width / 2));
  let y0 = Math.max(0, Math.round(BOX.y + BOX.h / 2 - sig.height / 2));
  const ink = placement === "on-line" ? inkBounds(sig, 128) : null;
  if (ink) y0 = Math.max(0, Math.round(LINE_Y - (ink.y + 0.8 * (ink.h - 1))));
  const w = Math.min(sig.width, WIDTH - x0);
  const h = Math.min(sig.height, HEIGHT - y0);
  for (let y = 0; y < h; y++) {
    const p = (y0 + y) * WIDTH + x0;
    const s = y * sig.width;
    for (let x = 0; x < w; x++) if (sig.data[s + x] < page.data[p + x]) page.data[p + x] = sig.data[s + x];
  }
  return { page, box: { x: x0, y: y0, w, h } };
}

function overlap(a: Box, b: Box): number {
  const w = Math.min(a.x + a.w, b.x + b.w) - Math.max(a.x, b.x);
  const h = Math.min(a.y + a.h, b.y + b.h) - Math.max(a.y, b.y);
  return w > 0 && h > 0 ? w * h : 0;
}

export type DecodeMode = "scaled" | "whole";

/** The page as a 300 dpi JPEG, and the crops each decode mode locates on it. */
export async function throughA4Page(
  sig: Raster,
  modes: DecodeMode[],
  placement: Placement = "centred",
): Promise<Record<DecodeMode, A4Outcome | undefined>> {
  const { page, box } = signOnForm(sig, placement);
  const jpeg = encodeJpeg(page, 90);
  const out: Record<DecodeMode, A4Outcome | undefined> = { scaled: undefined, whole: undefined };
  for (const mode of modes) {
    const a = await analyseDocument(jpeg, { inputType: "scan", qualityFloor: 0, renderCrops: false, scaledDecode: mode === "scaled" });
    // The located box over the signature (the form's print may be located too): the largest overlap.
    let best = -1;
    let most = 0;
    a.signatures.forEach((s, i) => {
      const o = overlap(s.box, box);
      if (o > most) {
        most = o;
        best = i;
      }
    });
    if (best >= 0) {
      out[mode] = { crop: a.crops[best], located: true };
      continue;
    }
    // Not found: the known box, cut from the page as this mode decodes it (the full-resolution window of
    // the scaled decode, or the crop of the whole page), so the sample still has a score (counted).
    const doc = await openDocument(jpeg);
    const crop = mode === "scaled" ? (await doc.decodePageScaled(0, pageDecodeScale)).crop(box) : cropRaster(await doc.decodePage(0), box);
    out[mode] = { crop, located: false };
  }
  return out;
}
