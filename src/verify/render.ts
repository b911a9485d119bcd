/**
 * Images for people: the crop of a located signature a reviewer looks at, and a reference's thumbnail.
 * Both are 8-bit greyscale PNGs (colour type 0): the pipeline only ever holds grey pixels, and a grey PNG
 * is a quarter of the RGBA one photon would write.
 *
 * Resampling is area averaging in plain JavaScript (resample.ts). It used to be photon's Lanczos3, but
 * photon's WebAssembly memory keeps its high-water mark for the isolate's life, so every thumbnail of a
 * large page left tens of MB held after the request.
 */
import { areaResample } from "./resample";
import type { Box, Raster } from "./types";
import { concatBytes } from "../util/bytes";

/** Padding around a located signature, per side, as a share of the box's width and height. */
export const CROP_PADDING = 0.08;
/** Long side of a signature crop at most. */
export const CROP_MAX_SIDE = 640;
/** Long side of a reference thumbnail at most. */
export const THUMBNAIL_MAX_SIDE = 512;

/** The box grown by 8% of its width (left and right) and height (top and bottom), clamped to the page. */
export function paddedBox(box: Box, page: { width: number; height: number }, padding = CROP_PADDING): Box {
  const px = box.w * padding;
  const py = box.h * padding;
  const x0 = Math.max(0, Math.floor(box.x - px));
  const y0 = Math.max(0, Math.floor(box.y - py));
  const x1 = Math.min(page.width, Math.ceil(box.x + box.w + px));
  const y1 = Math.min(page.height, Math.ceil(box.y + box.h + py));
  return { x: x0, y: y0, w: Math.max(1, x1 - x0), h: Math.max(1, y1 - y0) };
}

/** Copy a rectangle out of a raster (clamped to it). */
export function cropRaster(r: Raster, box: Box): Raster {
  const x0 = Math.max(0, Math.min(r.width - 1, Math.floor(box.x)));
  const y0 = Math.max(0, Math.min(r.height - 1, Math.floor(box.y)));
  const w = Math.max(1, Math.min(r.width - x0, Math.round(box.w)));
  const h = Math.max(1, Math.min(r.height - y0, Math.round(box.h)));
  const out = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) out.set(r.data.subarray((y0 + y) * r.width + x0, (y0 + y) * r.width + x0 + w), y * w);
  return { width: w, height: h, data: out };
}

/** Scale down (never up) so the long side is at most maxSide. */
export function fitWithin(r: Raster, maxSide: number): Raster {
  const long = Math.max(r.width, r.height);
  if (long <= maxSide) return r;
  const scale = maxSide / long;
  return areaResample(r, Math.max(1, Math.round(r.width * scale)), Math.max(1, Math.round(r.height * scale)));
}

/** The grey PNG of a located signature: padded box, at most 640 px on the long side. */
export async function signatureCropPng(page: Raster, box: Box): Promise<Uint8Array> {
  return encodeGreyPng(fitWithin(cropRaster(page, paddedBox(box, page)), CROP_MAX_SIDE));
}

/** The grey PNG of a reference's first page, at most 512 px on the long side. */
export async function referenceThumbnailPng(page: Raster): Promise<Uint8Array> {
  return encodeGreyPng(fitWithin(page, THUMBNAIL_MAX_SIDE));
}

/** An 8-bit greyscale PNG: rows with filter "up" (cheap and good on scans), zlib through CompressionStream. */
export async function encodeGreyPng(r: Raster): Promise<Uint8Array> {
  const { width: w, height: h, data } = r;
  const raw = new Uint8Array((w + 1) * h);
  for (let y = 0; y < h; y++) {
    const o = y * (w + 1);
    raw[o] = y === 0 ? 0 : 2;
    const row = y * w;
    if (y === 0) raw.set(data.subarray(0, w), 1);
    else for (let x = 0; x < w; x++) raw[o + 1 + x] = (data[row + x] - data[row - w + x]) & 255;
  }
  const idat = new Uint8Array(await new Response(new Blob([raw]).stream().pipeThrough(new CompressionStream("deflate"))).arrayBuffer());
  const ihdr = new Uint8Array(13);
  const v = new DataView(ihdr.buffer);
  v.setUint32(0, w);
  v.setUint32(4, h);
  ihdr.set([8, 0, 0, 0, 0], 8);
  const parts = [
    new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk("IHDR", ihdr),
    pngChunk("IDAT", idat),
    pngChunk("IEND", new Uint8Array(0)),
  ];
  return concatBytes(parts);
}

/** One PNG chunk: length, type, body and CRC. */
export function pngChunk(type: string, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(12 + body.length);
  const v = new DataView(out.buffer);
  v.setUint32(0, body.length);
  for (let i = 0; i < 4; i++) out[4 + i] = type.charCodeAt(i);
  out.set(body, 8);
  v.setUint32(8 + body.length, crc32(out.subarray(4, 8 + body.length)));
  return out;
}

let CRC_TABLE: Uint32Array | undefined;
/** CRC-32 of PNG chunks (ISO 3309). */
function crc32(b: Uint8Array): number {
  if (!CRC_TABLE) {
    CRC_TABLE = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      CRC_TABLE[n] = c >>> 0;
    }
  }
  let c = 0xffffffff;
  for (let i = 0; i < b.length; i++) c = CRC_TABLE[(c ^ b[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}
