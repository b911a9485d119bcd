import { VerifyError, type DecodeLimits, type Raster } from "../types";
import { ByteBudget } from "./budget";
import { decodeChain, type FilterStep } from "./filters";
import { decodeG4 } from "./g4";
import { decodeJpegGrey, jpegDimensions } from "./jpeg";
import { checkDimensions, checkPageIndex } from "./limits";
import { applyOrientation } from "./orientation";
import { RowDecoder, type SampleLayout } from "./rows";

/**
 * TIFF, one page per top-level IFD. Everything here is our own code: the IFDs (utif2's reader follows IFD
 * chains without a cycle check and trusts tag counts), and every compression we take. utif2's LZW,
 * PackBits and CCITT 1D loops run past the end of a strip and never stop on a lying byte count (a 14 KB
 * file held the isolate for minutes), so no page data reaches utif2 any more.
 *
 * Before any decoding, every strip or tile (offset + byte count) is checked to lie inside the file, for
 * every compression. Then each one is decoded by a bounded decoder that stops at the bytes the strip may
 * produce (its rows x row bytes): uncompressed (1), CCITT Group 4 (4), LZW (5), Deflate (8, 32946),
 * PackBits (32773) and JPEG (7, through our JPEG decoder, each strip's frame checked against the strip).
 *
 * CCITT 1D and Group 3 (2, 3) are refused as unsupported (415): they are fax encodings at 98 or 196 lines
 * per inch, too coarse for signature verification, and a decoder we cannot check against real fax files
 * would be new attack surface for no usable result. Other compressions (old JPEG, LogLuv, JBIG...) too.
 */

/** Raw decompressed bytes one compressed page may produce (bilevel pages are 1 bit per pixel). */
export const TIFF_RAW_BUDGET_BYTES = 48 * 1024 * 1024;
/** What a strip may decompress to beyond its full size before it counts as a bomb (encoder padding). */
const STRIP_SLACK_BYTES = 4096;

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
    : ((r.b[o + 1] << 16) | (r.b[o + 2] << 8) | r.b[o + 3]) + r.b[o] * 0x1000000;
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

const MAX_TABLE_ENTRIES = 1 << 20;
const WANTED = [
  254, 256, 257, 258, 259, 262, 266, 273, 274, 277, 278, 279, 284, 292, 317, 320, 322, 323, 324, 325, 338, 339, 347, 530, 531,
];
const TYPE_SIZE: Record<number, number> = { 1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8, 11: 4, 12: 8, 13: 4 };

/** Tags whose value is a byte string (JPEGTables), whatever type the file gives them; every other wanted tag holds numbers. */
const BYTE_TAGS = new Set([347]);

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
    if (BYTE_TAGS.has(tag)) {
      tags[`t${tag}`] = r.b.subarray(at, at + num);
    } else if (type === 2 || type === 7) {
      // Text or opaque bytes where the decoder needs numbers (offsets, sizes, codes): not a page we can read.
      throw new VerifyError("corrupt_file", `the TIFF tag ${tag} holds ${type === 2 ? "text" : "opaque bytes"} where numbers belong`);
    } else if (type === 1 || type === 6) {
      if (num > MAX_TABLE_ENTRIES) throw new VerifyError("corrupt_file", `the TIFF tag ${tag} holds ${num} values`);
      tags[`t${tag}`] = Array.from(r.b.subarray(at, at + num));
    } else {
      // A page needs at most one strip per row or one tile per 16x16 block: a longer table is not a page.
      if (num > MAX_TABLE_ENTRIES) throw new VerifyError("corrupt_file", `the TIFF tag ${tag} holds ${num} values`);
      const vals: number[] = new Array(num);
      for (let j = 0; j < num; j++) vals[j] = type === 3 || type === 8 ? u16(r, at + 2 * j) : u32(r, at + 4 * j);
      tags[`t${tag}`] = vals;
    }
  }
  return tags;
}

function first(tags: Tags, key: string, dflt: number): number {
  const v = tags[key];
  return v && v.length > 0 ? v[0] : dflt;
}

const COMPRESSION_NAMES: Record<number, string> = {
  2: "CCITT 1D",
  3: "CCITT Group 3",
  6: "old-style JPEG",
  32809: "ThunderScan",
  34676: "LogLuv",
  34712: "JPEG 2000",
};

/** One strip or tile of the page, already checked to lie inside the file. */
interface Segment {
  data: Uint8Array;
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
  if (![1, 4, 5, 7, 8, 32946, 32773].includes(compression)) {
    const name = COMPRESSION_NAMES[compression] ? ` (${COMPRESSION_NAMES[compression]})` : "";
    throw new VerifyError("unsupported_format", `TIFF compression ${compression}${name} is not supported`, pageIndex);
  }
  const tiled = tags.t322 !== undefined || tags.t324 !== undefined;
  const tileW = tiled ? first(tags, "t322", 0) : width;
  const tileH = tiled ? first(tags, "t323", 0) : Math.min(height, first(tags, "t278", height)) || height;
  if (tiled && (tileW < 1 || tileH < 1 || tileW * tileH > limits.maxPixelsPerPage)) {
    throw new VerifyError("corrupt_file", `TIFF page ${pageIndex + 1} declares tiles of ${tileW}x${tileH}`, pageIndex);
  }
  const across = Math.ceil(width / tileW);
  const down = Math.ceil(height / tileH);
  const segments = segmentsOf(
    bytes,
    tags,
    tiled,
    compression === 1 && !tiled ? Math.ceil((width * spp * bps) / 8) * tileH : undefined,
    pageIndex,
  );
  if (segments.length < across * down && (tiled || compression !== 1)) {
    throw new VerifyError(
      "corrupt_file",
      `TIFF page ${pageIndex + 1} has ${segments.length} ${tiled ? "tiles" : "strips"}; its size needs ${across * down}`,
      pageIndex,
    );
  }
  const orientation = first(tags, "t274", 1);
  if (compression === 4) {
    if (tiled) throw new VerifyError("unsupported_format", "tiled CCITT Group 4 TIFF pages are not supported", pageIndex);
    return applyOrientation(decodeG4Strips(segments, tags, width, height, tileH, photometric, pageIndex), orientation);
  }
  if (compression === 7)
    return applyOrientation(
      decodeJpegSegments(tags, segments, { width, height, tileW, tileH, across, tiled }, limits, pageIndex),
      orientation,
    );

  const layout = layoutFor({ width, height, spp, bps, photometric, tags }, pageIndex);
  if (!layout) {
    throw new VerifyError(
      "unsupported_format",
      `TIFF pages with photometric interpretation ${photometric}, ${spp} samples of ${bps} bits are not supported`,
      pageIndex,
    );
  }
  const predictor = first(tags, "t317", 1);
  if (predictor !== 1 && (predictor !== 2 || bps < 8)) {
    throw new VerifyError("unsupported_format", `TIFF predictor ${predictor} with ${bps}-bit samples is not supported`, pageIndex);
  }
  const rowBytes = Math.ceil((width * spp * bps) / 8);
  // Only uncompressed strips without a predictor are read in place; everything else is decoded a strip at
  // a time into a buffer of raw samples.
  const inPlace = compression === 1 && !tiled && predictor === 1 && !(bps === 16 && r.le);
  if (!inPlace && rowBytes * height > TIFF_RAW_BUDGET_BYTES) {
    throw new VerifyError(
      "too_many_pixels",
      `TIFF page ${pageIndex + 1} would take ${rowBytes * height} bytes to decompress; at most ${TIFF_RAW_BUDGET_BYTES} are allowed`,
      pageIndex,
    );
  }
  const steps: FilterStep[] =
    compression === 5
      ? [{ filter: "lzw" }]
      : compression === 32773
        ? [{ filter: "packbits" }]
        : compression === 1
          ? []
          : [{ filter: "flate" }];
  const samples = { spp, bps, le: r.le, predictor };
  const dec = new RowDecoder(layout);
  // Each strip stops at its own size plus slack; the page as a whole at the raw budget plus that slack.
  const budget = new ByteBudget(
    TIFF_RAW_BUDGET_BYTES + rowBytes * tileH + segments.length * STRIP_SLACK_BYTES,
    `TIFF page ${pageIndex + 1}`,
  );
  if (tiled) decodeTiles(segments, steps, samples, { width, height, tileW, tileH, across, rowBytes }, dec, budget, pageIndex);
  else if (inPlace) readRawStrips(segments, rowBytes, tileH, dec);
  else {
    for (let i = 0, y = 0; i < segments.length && y < height; i++, y += tileH) {
      const rows = Math.min(tileH, height - y);
      dec.push(segmentBytes(segments[i], steps, rowBytes * rows, rowBytes * tileH, rowBytes, samples, budget, pageIndex));
    }
  }
  return applyOrientation(dec.raster, orientation);
}

/**
 * The strips or tiles of a page, each checked against the file before anything is decoded. Uncompressed
 * strips may omit their byte counts (rawStripBytes is then what one strip needs).
 */
function segmentsOf(bytes: Uint8Array, tags: Tags, tiled: boolean, rawStripBytes: number | undefined, page: number): Segment[] {
  const offs = (tiled ? tags.t324 : tags.t273) as number[] | undefined;
  const lens = (tiled ? tags.t325 : tags.t279) as number[] | undefined;
  if (!offs || offs.length === 0) throw new VerifyError("corrupt_file", `TIFF page ${page + 1} has no image data`, page);
  if (lens ? lens.length !== offs.length : rawStripBytes === undefined)
    throw new VerifyError("corrupt_file", "the TIFF strip table is inconsistent", page);
  return offs.map((off, i) => {
    const len = lens ? lens[i] : Math.min(rawStripBytes as number, bytes.length - off);
    if (!(off >= 0 && len >= 0 && off + len <= bytes.length)) {
      throw new VerifyError(
        "corrupt_file",
        `TIFF ${tiled ? "tile" : "strip"} ${i + 1} (offset ${off}, ${len} bytes) lies past the end of the file`,
        page,
      );
    }
    return { data: bytes.subarray(off, off + len) };
  });
}

interface SampleInfo {
  spp: number;
  bps: number;
  le: boolean;
  predictor: number;
}

/**
 * One strip or tile decoded into exactly `want` bytes (a short one is padded with zeros). The decoder may
 * produce at most a full strip (`full` bytes, the last strip of a page is often coded whole) plus a little
 * slack; more is a decompression bomb and is refused the moment it appears. Then the horizontal predictor
 * is undone and 16-bit samples are put in the big-endian order RowDecoder reads.
 */
function segmentBytes(
  seg: Segment,
  steps: FilterStep[],
  want: number,
  full: number,
  rowBytes: number,
  s: SampleInfo,
  budget: ByteBudget,
  page: number,
): Uint8Array {
  const out = new Uint8Array(want);
  const cap = full + STRIP_SLACK_BYTES;
  let n = 0;
  const sink = {
    push(c: Uint8Array) {
      if (n < want) out.set(c.subarray(0, Math.min(c.length, want - n)), n);
      n += c.length;
      if (n > cap) {
        throw new VerifyError(
          "too_many_pixels",
          `a TIFF strip of page ${page + 1} decompresses to more than its ${full} bytes: refused as a decompression bomb`,
          page,
        );
      }
    },
    end() {},
  };
  // Uncompressed data is only ever read as far as it is needed.
  const data = steps.length === 0 ? seg.data.subarray(0, Math.min(seg.data.length, want)) : seg.data;
  decodeChain(data, steps, sink, { budget, what: "TIFF strip", page, lenient: true });
  if (s.bps === 16 && s.le) for (let i = 0; i + 1 < want; i += 2) [out[i], out[i + 1]] = [out[i + 1], out[i]];
  if (s.predictor === 2) undoHorizontalPredictor(out, rowBytes, s);
  return out;
}

/** TIFF predictor 2: each sample is stored as the difference from the same sample of the pixel before. */
function undoHorizontalPredictor(b: Uint8Array, rowBytes: number, s: SampleInfo): void {
  const rows = Math.floor(b.length / rowBytes);
  if (s.bps === 8) {
    for (let y = 0; y < rows; y++) {
      const o = y * rowBytes;
      for (let i = s.spp; i < rowBytes; i++) b[o + i] = (b[o + i] + b[o + i - s.spp]) & 255;
    }
    return;
  }
  // 16-bit samples, already big-endian.
  const step = 2 * s.spp;
  for (let y = 0; y < rows; y++) {
    const o = y * rowBytes;
    for (let i = step; i + 1 < rowBytes; i += 2) {
      const v = (((b[o + i] << 8) | b[o + i + 1]) + ((b[o + i - step] << 8) | b[o + i + 1 - step])) & 0xffff;
      b[o + i] = v >> 8;
      b[o + i + 1] = v & 255;
    }
  }
}

/** Tiles of one tile row are decoded into a band of whole page rows, which then goes to the row decoder. */
function decodeTiles(
  segments: Segment[],
  steps: FilterStep[],
  s: SampleInfo,
  g: { width: number; height: number; tileW: number; tileH: number; across: number; rowBytes: number },
  dec: RowDecoder,
  budget: ByteBudget,
  page: number,
): void {
  if ((s.spp * s.bps) % 8 !== 0)
    throw new VerifyError("unsupported_format", "tiled TIFF pages with less than a byte per pixel are not supported", page);
  const px = (s.spp * s.bps) / 8;
  const tileRow = g.tileW * px;
  if (g.tileH * Math.max(g.rowBytes, tileRow) > TIFF_RAW_BUDGET_BYTES)
    throw new VerifyError("too_many_pixels", "the TIFF tiles are too large", page);
  const band = new Uint8Array(g.tileH * g.rowBytes);
  for (let ty = 0, y = 0; y < g.height; ty++, y += g.tileH) {
    const rows = Math.min(g.tileH, g.height - y);
    band.fill(0);
    for (let tx = 0; tx < g.across; tx++) {
      const tile = segmentBytes(segments[ty * g.across + tx], steps, tileRow * g.tileH, tileRow * g.tileH, tileRow, s, budget, page);
      const x0 = tx * g.tileW * px;
      const copy = Math.min(tileRow, g.rowBytes - x0);
      for (let k = 0; k < rows; k++) band.set(tile.subarray(k * tileRow, k * tileRow + copy), k * g.rowBytes + x0);
    }
    dec.push(band.subarray(0, rows * g.rowBytes));
  }
}

/** JPEG (7): each strip or tile is a JPEG stream; the shared tables (JPEGTables) come before it. */
function decodeJpegSegments(
  tags: Tags,
  segments: Segment[],
  g: { width: number; height: number; tileW: number; tileH: number; across: number; tiled: boolean },
  limits: DecodeLimits,
  page: number,
): Raster {
  const out: Raster = { width: g.width, height: g.height, data: new Uint8Array(g.width * g.height).fill(255) };
  const tables = tags.t347 as Uint8Array | undefined;
  const down = Math.ceil(g.height / g.tileH);
  for (let ty = 0; ty < down; ty++) {
    for (let tx = 0; tx < g.across; tx++) {
      let jpeg = segments[ty * g.across + tx].data;
      if (tables && tables.length > 4 && jpeg.length > 2) {
        const merged = new Uint8Array(tables.length - 2 + jpeg.length - 2);
        merged.set(tables.subarray(0, tables.length - 2));
        merged.set(jpeg.subarray(2), tables.length - 2);
        jpeg = merged;
      }
      // A strip's frame header may not claim more than the strip (rounded up to whole 16-pixel blocks):
      // a lying header would otherwise buy a full page of decoding per strip.
      const d = jpegDimensions(jpeg);
      if (d.width > Math.ceil(g.tileW / 16) * 16 || d.height > Math.ceil(g.tileH / 16) * 16) {
        throw new VerifyError(
          "corrupt_file",
          `a JPEG strip of TIFF page ${page + 1} declares ${d.width}x${d.height}, larger than its ${g.tileW}x${g.tileH}`,
          page,
        );
      }
      const tile = decodeJpegGrey(jpeg, limits, page, "TIFF JPEG strip", false);
      const x0 = tx * g.tileW;
      const y0 = ty * g.tileH;
      const w = Math.min(tile.width, g.width - x0, g.tileW);
      const h = Math.min(tile.height, g.height - y0, g.tileH);
      for (let y = 0; y < h; y++) out.data.set(tile.data.subarray(y * tile.width, y * tile.width + w), (y0 + y) * g.width + x0);
    }
  }
  return out;
}

/** Group 4 pages: each strip is coded on its own (the reference line starts white in every strip). */
function decodeG4Strips(
  segments: Segment[],
  tags: Tags,
  width: number,
  height: number,
  rowsPerStrip: number,
  photometric: number,
  page: number,
): Raster {
  const out: Raster = { width, height, data: new Uint8Array(width * height) };
  const lsbFirst = first(tags, "t266", 1) === 2;
  for (let i = 0, y = 0; i < segments.length && y < height; i++, y += rowsPerStrip) {
    const rows = Math.min(rowsPerStrip, height - y);
    let strip: Raster;
    try {
      strip = decodeG4(segments[i].data, { width, height: rows, lsbFirst, invert: photometric === 1 });
    } catch (err) {
      if (err instanceof VerifyError) throw new VerifyError(err.code, err.message, page);
      throw err;
    }
    out.data.set(strip.data, y * width);
  }
  return out;
}

function layoutFor(
  p: { width: number; height: number; spp: number; bps: number; photometric: number; tags: Tags },
  page: number,
): SampleLayout | null {
  const { width, height, spp, bps, photometric, tags } = p;
  const base = { width, height, bitsPerComponent: bps, channels: spp, pngFilters: false };
  if ((photometric === 0 || photometric === 1) && (bps <= 8 || bps === 16))
    return { ...base, model: "grey", invert: photometric === 0, alpha: spp === 2 };
  if (photometric === 2 && (bps === 8 || bps === 16) && (spp === 3 || spp === 4))
    return { ...base, model: "rgb", alpha: spp === 4 && first(tags, "t338", 0) !== 0 };
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

/** Uncompressed strips are read in place: no copy of the raw samples. */
function readRawStrips(segments: Segment[], rowBytes: number, rowsPerStrip: number, dec: RowDecoder): void {
  const height = dec.raster.height;
  for (let i = 0, y = 0; i < segments.length && y < height; i++, y += rowsPerStrip) {
    const want = Math.min(rowsPerStrip, height - y) * rowBytes;
    const data = segments[i].data;
    dec.push(data.length > want ? data.subarray(0, want) : data);
    if (data.length < want) dec.push(new Uint8Array(want - data.length));
  }
}
