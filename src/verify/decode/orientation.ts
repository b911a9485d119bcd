import type { Raster } from "../types";

/**
 * EXIF / TIFF orientation (tag 274): phones store the sensor's pixels and record how to turn them. Pages are
 * turned upright here, so boxes and crops are in the orientation a person sees.
 *   1 as stored, 2 mirrored, 3 turned 180, 4 flipped, 5 transposed, 6 turned 90 clockwise,
 *   7 transversed, 8 turned 90 anticlockwise.
 */
export function applyOrientation(r: Raster, orientation: number): Raster {
  if (!Number.isInteger(orientation) || orientation < 2 || orientation > 8) return r;
  const { width: w, height: h, data: src } = r;
  const swap = orientation >= 5;
  const ow = swap ? h : w;
  const oh = swap ? w : h;
  const out = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) {
    const row = y * w;
    for (let x = 0; x < w; x++) {
      let nx: number;
      let ny: number;
      switch (orientation) {
        case 2:
          nx = w - 1 - x;
          ny = y;
          break;
        case 3:
          nx = w - 1 - x;
          ny = h - 1 - y;
          break;
        case 4:
          nx = x;
          ny = h - 1 - y;
          break;
        case 5:
          nx = y;
          ny = x;
          break;
        case 6:
          nx = h - 1 - y;
          ny = x;
          break;
        case 7:
          nx = h - 1 - y;
          ny = w - 1 - x;
          break;
        default:
          nx = y;
          ny = w - 1 - x;
          break; // 8
      }
      out[ny * ow + nx] = src[row + x];
    }
  }
  return { width: ow, height: oh, data: out };
}

/** The orientation recorded in a JPEG's APP1 Exif segment (1 when absent or unreadable). */
export function jpegOrientation(b: Uint8Array): number {
  let o = 2;
  while (o + 4 <= b.length && b[o] === 0xff) {
    const marker = b[o + 1];
    if (marker === 0xda || marker === 0xd9) break;
    const len = (b[o + 2] << 8) | b[o + 3];
    if (marker === 0xe1 && len >= 16 && b[o + 4] === 0x45 && b[o + 5] === 0x78 && b[o + 6] === 0x69 && b[o + 7] === 0x66) {
      return tiffOrientation(b.subarray(o + 10, Math.min(b.length, o + 2 + len)));
    }
    o += 2 + len;
  }
  return 1;
}

/** Tag 274 of the first IFD of a TIFF structure (an Exif block is one). */
export function tiffOrientation(t: Uint8Array, ifdOffset?: number): number {
  if (t.length < 8) return 1;
  const le = t[0] === 0x49;
  const u16 = (p: number) => (p + 2 > t.length ? 0 : le ? t[p] | (t[p + 1] << 8) : (t[p] << 8) | t[p + 1]);
  const u32 = (p: number) =>
    p + 4 > t.length
      ? 0
      : le
        ? (t[p] | (t[p + 1] << 8) | (t[p + 2] << 16)) + t[p + 3] * 0x1000000
        : ((t[p + 1] << 16) | (t[p + 2] << 8) | t[p + 3]) + t[p] * 0x1000000;
  const ifd = ifdOffset ?? u32(4);
  const count = u16(ifd);
  for (let i = 0; i < count && i < 512; i++) {
    const e = ifd + 2 + i * 12;
    if (e + 12 > t.length) break;
    if (u16(e) === 274) return u16(e + 8) || 1;
  }
  return 1;
}
