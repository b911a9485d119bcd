import { VerifyError } from "../types";
import type { Box, DecodeLimits, Raster } from "../types";
import { cropRaster } from "../render";
import type { IdctScale } from "./jpeg-entropy";
import { decodeJpegLuma, decodeJpegLumaJob, newTarget, type LumaResult, type RowCheckpoint } from "./jpeg-luma";
import { finishProgressive } from "./jpeg-progressive";
import { checkDimensions, truncated, u16be, wrapDecoder } from "./limits";
import { applyOrientation, jpegOrientation } from "./orientation";
import { photonDecodeGrey } from "./photon";

/** Width and height from the first SOFn segment, read without decoding anything. */
export function jpegDimensions(b: Uint8Array): { width: number; height: number; components: number } {
  let o = 2;
  while (o < b.length) {
    if (b[o] !== 0xff) throw new VerifyError("corrupt_file", "the JPEG has a malformed marker");
    while (b[o] === 0xff && o < b.length) o++; // fill bytes
    if (o >= b.length) break;
    const marker = b[o++];
    if (marker === 0xd8 || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) continue; // no length
    if (marker === 0xd9 || marker === 0xda) break; // EOI or scan start before any frame header
    const len = u16be(b, o);
    if (len < 2) throw new VerifyError("corrupt_file", "the JPEG has a malformed segment length");
    const isSof = marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
    if (isSof) {
      if (o + 8 > b.length) throw truncated("JPEG");
      const height = u16be(b, o + 3);
      const width = u16be(b, o + 5);
      const components = b[o + 7];
      if (height === 0)
        throw new VerifyError("unsupported_format", "JPEGs that declare their height after the scan (DNL) are not supported");
      if (marker !== 0xc0 && marker !== 0xc1 && marker !== 0xc2) {
        throw new VerifyError(
          "unsupported_format",
          "only baseline and progressive Huffman JPEGs are supported (not lossless or arithmetic-coded)",
        );
      }
      return { width, height, components };
    }
    o += len;
  }
  throw new VerifyError("corrupt_file", "the JPEG has no frame header");
}

/**
 * A JPEG file (or a PDF /DCTDecode stream) to grey. Baseline and progressive Huffman JPEGs in YCbCr or
 * grey (what scanners, phones and web tools write) go through the luma-only decoder; the rest (RGB, CMYK,
 * 12-bit, arithmetic) through photon, under JPEG_MAX_PIXELS.
 */
export function decodeJpegGrey(bytes: Uint8Array, limits: DecodeLimits, page?: number, what = "JPEG", honourExif = true): Raster {
  const d = jpegDimensions(bytes);
  checkDimensions(d.width, d.height, limits, page);
  const own = wrapDecoder(what, page, () => decodeJpegLuma(bytes));
  let r = own;
  if (!r) {
    checkJpegPixels(d.width, d.height, page);
    r = photonDecodeGrey(bytes, what, page);
  }
  // Inside a PDF the page's own transform places the image; viewers ignore the JPEG's Exif there.
  return honourExif ? applyOrientation(r, jpegOrientation(bytes)) : r;
}

/**
 * photon decodes a JPEG to RGB and then RGBA inside its WASM memory (about 8 bytes per pixel at the peak,
 * memory the instance keeps), so the JPEGs photon decodes (RGB or CMYK colour, 12-bit, arithmetic coding) get a tighter bound than the general
 * pixel bound: 10.5 MP covers an A4 page at 300 dpi (8.7 MP) while keeping photon under about 85 MB.
 */
export const JPEG_MAX_PIXELS = 10_500_000;

export function checkJpegPixels(width: number, height: number, page?: number): void {
  if (width * height > JPEG_MAX_PIXELS) {
    throw new VerifyError(
      "too_many_pixels",
      `the JPEG image is ${width}x${height}; JPEG pages are decoded up to ${JPEG_MAX_PIXELS} pixels (about A4 at 300 dpi)`,
      page,
    );
  }
}

/**
 * A page decoded at 1/scale for the page-wide stages (quality, locating), with the means to decode any
 * window of it at full resolution (the located signatures). `crop(box)` gives exactly the pixels
 * cropRaster(full page, box) would.
 */
export interface ScaledPage {
  raster: Raster;
  scale: IdctScale;
  /** Size of the full-resolution page. */
  width: number;
  height: number;
  crop(box: Box): Raster;
}

/** A page that was decoded whole: scale 1, windows are copies. */
export function wholePage(raster: Raster): ScaledPage {
  return { raster, scale: 1, width: raster.width, height: raster.height, crop: (box) => cropRaster(raster, box) };
}

/**
 * A JPEG at the scale `scaleFor` picks from its size, through the luma decoder's scaled IDCT. Windows of a
 * baseline JPEG are decoded again from the MCU row checkpoints the first pass recorded (only the rows the
 * window covers are entropy-decoded, only its blocks transformed); a progressive JPEG keeps its
 * coefficients for them. A turned (Exif) or photon-decoded JPEG is decoded whole, as before.
 * The size checks run on the declared size before anything is allocated, as in decodeJpegGrey.
 */
export function decodeJpegScaled(
  bytes: Uint8Array,
  limits: DecodeLimits,
  page: number | undefined,
  scaleFor: (width: number, height: number) => IdctScale,
  what = "JPEG",
): ScaledPage {
  const d = jpegDimensions(bytes);
  checkDimensions(d.width, d.height, limits, page);
  const scale = scaleFor(d.width, d.height);
  const orientation = jpegOrientation(bytes);
  if (scale > 1 && !(orientation >= 2 && orientation <= 8)) {
    const checkpoints: RowCheckpoint[] = [];
    const r = wrapDecoder(what, page, () => decodeJpegLumaJob(bytes, { scale, checkpoints }, true));
    if (r)
      return {
        raster: r.raster,
        scale,
        width: r.width,
        height: r.height,
        crop: (box) => jpegWindow(bytes, r, checkpoints, box, what, page),
      };
  }
  return wholePage(decodeJpegGrey(bytes, limits, page, what));
}

/** One full-resolution window of a JPEG already decoded at a reduced scale. */
function jpegWindow(bytes: Uint8Array, r: LumaResult, checkpoints: RowCheckpoint[], box: Box, what: string, page?: number): Raster {
  // The same clamping as cropRaster, so the window is the crop of the full page.
  const x = Math.max(0, Math.min(r.width - 1, Math.floor(box.x)));
  const y = Math.max(0, Math.min(r.height - 1, Math.floor(box.y)));
  const crop = {
    x,
    y,
    w: Math.max(1, Math.min(r.width - x, Math.round(box.w))),
    h: Math.max(1, Math.min(r.height - y, Math.round(box.h))),
  };
  if (r.coefficients) {
    const t = newTarget(r.width, r.height, { scale: 1, crop });
    finishProgressive(r.coefficients.data, r.coefficients.q, r.coefficients.frame, t);
    return { width: t.width, height: t.height, data: t.out };
  }
  const firstBlockRow = Math.floor(y / 8);
  let resume: RowCheckpoint | undefined;
  for (const c of checkpoints) if (c.blockRow <= firstBlockRow) resume = c;
  const w = wrapDecoder(what, page, () => decodeJpegLumaJob(bytes, { scale: 1, crop, resume }));
  if (!w) throw new VerifyError("corrupt_file", `the ${what} could not be decoded again for a crop`, page);
  return w.raster;
}
