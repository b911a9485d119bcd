import UTIF from "utif2";
import { VerifyError, type DecodeLimits, type Raster } from "../types";
import { rgbaToGrey } from "./grey";
import { decodeG4 } from "./g4";
import { inflateBounded } from "./inflate";
import { checkDimensions, checkPageIndex, wrapDecoder } from "./limits";
import { applyOrientation } from "./orientation";
import { RowDecoder, type SampleLayout } from "./rows";

/**
 * TIFF, one page per top-level IFD. The IFDs are read here, not by utif2: its own reader follows IFD chains
 * without a cycle check and trusts tag counts, so a hostile header could loop forever or allocate
 * gigabytes. utif2 only decompresses the strips of one page whose dimensions have already been checked.
 */

/** Raw decompressed strip data utif2 may hold for one page (bilevel pages are 1 bit per pixel). */
export const TIFF_RAW_BUDGET_BYTES = 48 * 1024 * 1024;

type Tags = Record<string, number[] | Uint8Array>;

interface Reader {
  b: Uint8Array;
  le: boolean;
}

function u16(r: Reader, o: number): number {
  if (o < 0 || o + 2 > r.b.length) throw new VerifyError("corrupt_file", "the TIFF is truncated");
  return r.le ? r.b[o] | (r.b[o + 1] << 8) : (r.b[o] << 8) | r.b[o + 1];
}
function u32(r: Reader, o: number): number {
  if (o < 0 || o + 4 > r.b.length) throw new VerifyError("corrupt_file", "the TIFF is truncated");
  return r.le
    ? (r.b[o] | (r.b[o + 1] << 8) | (r.b[o + 2] << 16)) + r.b[o + 3] * 0x1000000
    : (r.b[o + 1] << 16 | r.b[o + 2] << 8 | r.b[o + 3]) + r.b[o] * 0x1000000;
}

/** Offsets of the page IFDs along the main chain (reduced-resolution images are skipped). */
export function tiffPageOffsets(b: Uint8Array, maxPages: number): number[] {
  const r: Reader = { b, le: b[0] === 0x49 };
  let off = u32(r, 4);
  const seen = new Set<number>();
  const pages: number[] = [];
  while (off !== 0) {
    if (seen.has(off)) throw new VerifyError("corrupt_file", "the TIFF's directory chain loops");
    seen.add(off);
    if (seen.size > maxPages * 4 + 16) break; // pages beyond the bound are never read
    const count = u16(r, off);
    const tags = readTags(r, off, [254]);
    const subfile = (tags.t254 as number[] | undefined)?.[0] ?? 0;
    if ((subfile & 1) === 0) pages.push(off);
    if (pages.length > maxPages) break;
    off = u32(r, off + 2 + count * 12);
  }
  if (pages.length === 0) throw new VerifyError("corrupt_file", "the TIFF has no image directory");
  return pages;
}

const WANTED = [254, 256, 257, 258, 259, 262, 266, 273, 274, 277, 278, 279, 284, 292, 317, 320, 322, 323, 324, 325, 338, 339, 347, 530, 531];
const TYPE_SIZE: Record<number, number> = { 1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8, 13: 4 };

function readTags(r: Reader, off: number, wanted = WANTED): Tags {
  const count = u16(r, off);
  if (off + 2 + count * 12 + 4 > r.b.length) throw new VerifyError("corrupt_file", "the TIFF directory is truncated");
  const tags: Tags = {};
  for (let i = 0; i < count; i++) {
    const e = off + 2 + i * 12;
    const tag = u16(r, e);
    if (!wanted.includes(tag)) continue;
    const type = u16(r, e + 2);
    const num = u32(r, e + 4);
    const size = TYPE_SIZE[type];
    if (!size) continue;
    const total = size * num;
    const at = total <= 4 ? e + 8 : u32(r, e + 8);
    // A count is only believed if its values lie inside the file.
    if (at + total > r.b.length) throw new VerifyError("corrupt_file", `the TIFF tag ${tag} points past the end of the file`);
    if (type === 1 || type === 7 || type === 6 || type === 2) {
      tags["t" + tag] = r.b.subarray(at, at + num);
    } else {
      const vals: number[] = new Array(num);
      for (let j = 0; j < num; j++) vals[j] = type === 3 || type === 8 ? u16(r, at + 2 * j) : u32(r, at + 4 * j);
      tags["t" + tag] = vals;
    }
  }
  return tags;
}

function first(tags: Tags, key: string, dflt: number): number {
  const v = tags[key];
  return v && v.length > 0 ? v[0] : dflt;
}

export async function decodeTiffPage(bytes: Uint8Array, pageIndex: number, limits: DecodeLimits): Promise<Raster> {
  const offsets = tiffPageOffsets(bytes, limits.maxPages);
  checkPageIndex(pageIndex, offsets.length);
  const r: Reader = { b: bytes, le: bytes[0] === 0x49 };
  const tags = readTags(r, offsets[pageIndex]);
  const width = first(tags, "t256", 0);
  const height = first(tags, "t257", 0);
  checkDimensions(width, height, limits, pageIndex);
  const spp = first(tags, "t277", 1);
  const bps = first(tags, "t258", 1);
  const compression = first(tags, "t259", 1);
  const photometric = first(tags, "t262", bps === 1 ? 0 : 1);
  if (![1, 2, 4, 8, 16].includes(bps) || spp < 1 || spp > 5) {
    throw new VerifyError("unsupported_format", `TIFF pages with ${spp} samples of ${bps} bits are not supported`, pageIndex);
  }
  if (first(tags, "t284", 1) === 2 && spp > 1) {
    throw new VerifyError("unsupported_format", "planar TIFF pages are not supported", pageIndex);
  }
  if (!(tags.t273 || tags.t324)) throw new VerifyError("corrupt_file", `TIFF page ${pageIndex + 1} has no image data`, pageIndex);
  const orientation = first(tags, "t274", 1);
  if (compression === 4) return applyOrientation(decodeG4Strips(bytes, tags, width, height, photometric, pageIndex), orientation);
  const layout = layoutFor({ width, height, spp, bps, photometric, tags }, pageIndex);
  // Uncompressed strips are read in place: no copy of the raw samples.
  if (compression === 1 && layout && !tags.t322) return applyOrientation(readRawStrips(bytes, tags, layout, pageIndex), orientation);
  const raw = Math.ceil((width * spp * bps) / 8) * height;
  if (raw > TIFF_RAW_BUDGET_BYTES) {
    throw new VerifyError("too_many_pixels", `TIFF page ${pageIndex + 1} would take ${raw} bytes to decompress; at most ${TIFF_RAW_BUDGET_BYTES} are allowed`, pageIndex);
  }
  if (compression === 8 || compression === 32946) await checkDeflateStrips(bytes, tags, raw, pageIndex);

  const ifd = { ...tags } as unknown as UTIF.IFD;
  const buffer = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? (bytes.buffer as ArrayBuffer) : bytes.slice().buffer;
  wrapDecoder("TIFF", pageIndex, () => UTIF.decodeImage(buffer, ifd));
  const data = ifd.data as Uint8Array | undefined;
  if (!data || data.length === 0) throw new VerifyError("corrupt_file", `TIFF page ${pageIndex + 1} could not be decompressed (compression ${compression})`, pageIndex);
  // utif2 rewrites YCbCr to RGB when it decodes JPEG-compressed pages.
  const decodedPhotometric = first(tags, "t262", photometric);
  const decodedSpp = compression === 7 && decodedPhotometric === 2 ? 3 : spp;
  return applyOrientation(toGrey(ifd, data, { width, height, spp: decodedSpp, bps, photometric: decodedPhotometric, tags }, pageIndex), orientation);
}

/** Group 4 pages: each strip is coded on its own (the reference line starts white in every strip). */
function decodeG4Strips(bytes: Uint8Array, tags: Tags, width: number, height: number, photometric: number, page: number): Raster {
  const offs = (tags.t273 ?? tags.t324) as number[];
  const lens = (tags.t279 ?? tags.t325) as number[] | undefined;
  if (!lens || lens.length !== offs.length) throw new VerifyError("corrupt_file", "the TIFF strip table is inconsistent", page);
  const rowsPerStrip = Math.min(height, first(tags, "t278", height)) || height;
  const out: Raster = { width, height, data: new Uint8Array(width * height) };
  const lsbFirst = first(tags, "t266", 1) === 2;
  for (let i = 0, y = 0; i < offs.length && y < height; i++, y += rowsPerStrip) {
    if (offs[i] + lens[i] > bytes.length) throw new VerifyError("corrupt_file", "a TIFF strip lies past the end of the file", page);
    const rows = Math.min(rowsPerStrip, height - y);
    const strip = decodeG4(bytes.subarray(offs[i], offs[i] + lens[i]), { width, height: rows, lsbFirst, invert: photometric === 1 });
    out.data.set(strip.data, y * width);
  }
  return out;
}

/** utif2 inflates Deflate strips without any bound; measure each strip against its share first. */
async function checkDeflateStrips(bytes: Uint8Array, tags: Tags, raw: number, page: number): Promise<void> {
  const offs = (tags.t273 ?? tags.t324) as number[];
  const lens = (tags.t279 ?? tags.t325) as number[] | undefined;
  if (!lens || lens.length !== offs.length) throw new VerifyError("corrupt_file", "the TIFF strip table is inconsistent", page);
  for (let i = 0; i < offs.length; i++) {
    if (offs[i] + lens[i] > bytes.length) throw new VerifyError("corrupt_file", "a TIFF strip lies past the end of the file", page);
    await inflateBounded(bytes.subarray(offs[i], offs[i] + lens[i]), raw, () => undefined, { what: "TIFF strip", page, allowTruncated: true });
  }
}

function layoutFor(p: { width: number; height: number; spp: number; bps: number; photometric: number; tags: Tags }, page: number): SampleLayout | null {
  const { width, height, spp, bps, photometric, tags } = p;
  const base = { width, height, bitsPerComponent: bps, channels: spp, pngFilters: false };
  if ((photometric === 0 || photometric === 1) && bps <= 8) return { ...base, model: "grey", invert: photometric === 0, alpha: spp === 2 };
  if (photometric === 2 && bps === 8 && (spp === 3 || spp === 4)) return { ...base, model: "rgb", alpha: spp === 4 && first(tags, "t338", 0) !== 0 };
  if (photometric === 5 && bps === 8 && spp === 4) return { ...base, model: "cmyk" };
  if (photometric === 3 && bps <= 8 && tags.t320) {
    const map = tags.t320 as number[];
    const n = 1 << bps;
    if (map.length < 3 * n) throw new VerifyError("corrupt_file", "the TIFF colour map is too short", page);
    const lut = new Uint8Array(256);
    for (let i = 0; i < n; i++) lut[i] = ((map[i] >> 8) * 77 + (map[n + i] >> 8) * 150 + (map[2 * n + i] >> 8) * 29 + 128) >> 8;
    return { ...base, model: "indexed", lut };
  }
  return null;
}

function readRawStrips(bytes: Uint8Array, tags: Tags, layout: SampleLayout, page: number): Raster {
  const offs = tags.t273 as number[];
  const lens = tags.t279 as number[] | undefined;
  const rowBytes = Math.ceil((layout.width * layout.channels * layout.bitsPerComponent) / 8);
  const rowsPerStrip = Math.min(layout.height, first(tags, "t278", layout.height)) || layout.height;
  const dec = new RowDecoder(layout);
  for (let i = 0, y = 0; i < offs.length && y < layout.height; i++, y += rowsPerStrip) {
    const want = Math.min(rowsPerStrip, layout.height - y) * rowBytes;
    const len = Math.min(want, lens?.[i] ?? want);
    if (offs[i] + len > bytes.length) throw new VerifyError("corrupt_file", "a TIFF strip lies past the end of the file", page);
    dec.push(bytes.subarray(offs[i], offs[i] + len));
    if (len < want) dec.push(new Uint8Array(want - len));
  }
  return dec.raster;
}

function toGrey(
  ifd: UTIF.IFD,
  data: Uint8Array,
  p: { width: number; height: number; spp: number; bps: number; photometric: number; tags: Tags },
  page: number,
): Raster {
  const layout = layoutFor(p, page);
  if (layout) {
    const dec = new RowDecoder(layout);
    dec.push(data);
    return dec.raster;
  }
  // Anything rarer (16-bit, YCbCr leftovers, LogLuv...) goes through utif2's own RGBA conversion.
  const rgba = wrapDecoder("TIFF", page, () => UTIF.toRGBA8(ifd));
  return rgbaToGrey(rgba, p.width, p.height);
}
