/** Preview frames for live capture tests: a signing sheet photographed well, and frames that are not. */
import { blankPage, darkPhoto, encodeJpeg, makeWriter, photoOf, renderSignature } from "../fixtures/generator";
import type { Raster } from "../../src/verify/types";

/** A signature filling most of a `width` x `height` sheet of paper, as the capture page asks for. */
export function signingSheet(width = 640, height = 480, writer = 8): Raster {
  const sigW = Math.round(width * 0.875);
  const sigH = Math.round(sigW * 0.39);
  const sig = renderSignature(makeWriter(writer), { width: sigW, height: sigH });
  const page = blankPage(width, height);
  const top = Math.round((height - sig.height) / 2);
  const left = Math.round((width - sig.width) / 2);
  for (let y = 0; y < sig.height; y++) page.data.set(sig.data.subarray(y * sig.width, (y + 1) * sig.width), (y + top) * width + left);
  return page;
}

export function readyFrame(width = 640, height = 480, seed = 1): Uint8Array {
  return encodeJpeg(photoOf(signingSheet(width, height), { seed, illumination: 0.15 }), 85);
}

export function emptyFrame(width = 640, height = 480, seed = 2): Uint8Array {
  return encodeJpeg(photoOf(blankPage(width, height), { seed }), 85);
}

export function darkFrame(width = 640, height = 480): Uint8Array {
  return encodeJpeg(darkPhoto(signingSheet(width, height)), 85);
}
