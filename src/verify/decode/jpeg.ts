import { VerifyError } from "../types";
import { truncated, u16be } from "./limits";

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
      if (height === 0) throw new VerifyError("unsupported_format", "JPEGs that declare their height after the scan (DNL) are not supported");
      if (marker !== 0xc0 && marker !== 0xc1 && marker !== 0xc2) {
        throw new VerifyError("unsupported_format", "only baseline and progressive Huffman JPEGs are supported (not lossless or arithmetic-coded)");
      }
      return { width, height, components };
    }
    o += len;
  }
  throw new VerifyError("corrupt_file", "the JPEG has no frame header");
}

/**
 * photon decodes a JPEG to RGB and then RGBA inside its WASM memory (about 8 bytes per pixel at the peak,
 * memory the instance keeps), so JPEG pages get a tighter bound than the general pixel bound: 10 MP covers
 * an A4 page at 300 dpi (8.7 MP) and a 10 MP phone photo while keeping photon under about 80 MB.
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
