/**
 * A small TIFF writer for seeds: strips or tiles, either byte order, and the compressions the decoder
 * meets in the wild (none, LZW, PackBits, Deflate, Group 4). The encoders are the simplest correct ones.
 */
import { deflate } from "../core/zlib";
import type { Raster } from "../../src/verify/types";
import { concat, wr16, wr32 } from "../core/bytes";
import { encodeG4 } from "../../test/unit/g4-encode";
import { lzwEncode, packBits } from "../../test/fixtures/filters";

type Entry = [tag: number, type: 3 | 4, values: number[]];

export interface TiffPage {
  tags: Entry[];
  /** Strip (or tile) data as stored; the writer fills StripOffsets/StripByteCounts (or the tile ones). */
  blocks: Uint8Array[];
  tiled?: boolean;
}

export function writeTiff(pages: TiffPage[], le = true): Uint8Array {
  const parts: Uint8Array[] = [];
  let at = 8;
  const head = new Uint8Array(8);
  head.set(le ? [0x49, 0x49, 0x2a, 0] : [0x4d, 0x4d, 0, 0x2a]);
  parts.push(head);
  let prevNext = 4;
  const patches: [number, number][] = [];
  for (const page of pages) {
    const offsets: number[] = [];
    for (const blk of page.blocks) {
      offsets.push(at);
      parts.push(blk);
      at += blk.length;
      if (at & 1) {
        parts.push(new Uint8Array(1)); // word alignment
        at++;
      }
    }
    const entries: Entry[] = [
      ...page.tags,
      [page.tiled ? 324 : 273, 4, offsets],
      [page.tiled ? 325 : 279, 4, page.blocks.map((b) => b.length)],
    ];
    entries.sort((a, b) => a[0] - b[0]);
    const ifdAt = at;
    patches.push([prevNext, ifdAt]);
    const ifdLen = 2 + entries.length * 12 + 4;
    const ifd = new Uint8Array(ifdLen);
    const extra: Uint8Array[] = [];
    let extraAt = ifdAt + ifdLen;
    wr16(ifd, 0, entries.length, le);
    entries.forEach(([tag, type, values], i) => {
      const e = 2 + i * 12;
      const size = type === 3 ? 2 : 4;
      wr16(ifd, e, tag, le);
      wr16(ifd, e + 2, type, le);
      wr32(ifd, e + 4, values.length, le);
      const data = new Uint8Array(Math.max(4, size * values.length));
      values.forEach((v, j) => {
        if (size === 2) wr16(data, j * 2, v, le);
        else wr32(data, j * 4, v, le);
      });
      if (size * values.length <= 4) ifd.set(data.subarray(0, 4), e + 8);
      else {
        wr32(ifd, e + 8, extraAt, le);
        extra.push(data);
        extraAt += data.length;
      }
    });
    prevNext = ifdAt + ifdLen - 4;
    parts.push(ifd, ...extra);
    at = extraAt;
    if (at & 1) {
      parts.push(new Uint8Array(1));
      at++;
    }
  }
  const out = concat(parts);
  for (const [where, value] of patches) wr32(out, where, value, le);
  return out;
}

function rows(r: Raster, y0: number, n: number): Uint8Array {
  return r.data.subarray(y0 * r.width, Math.min(r.height, y0 + n) * r.width);
}

function stripsOf(r: Raster, rowsPerStrip: number, compress: (d: Uint8Array) => Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let y = 0; y < r.height; y += rowsPerStrip) out.push(compress(rows(r, y, rowsPerStrip)));
  return out;
}

function greyTags(r: Raster, compression: number, rowsPerStrip: number, bps = 8, photometric = 1): Entry[] {
  return [
    [256, 4, [r.width]],
    [257, 4, [r.height]],
    [258, 3, [bps]],
    [259, 3, [compression]],
    [262, 3, [photometric]],
    [277, 3, [1]],
    [278, 4, [rowsPerStrip]],
  ];
}

/** A grey page in strips, with the given compression code and encoder. */
export function stripTiff(r: Raster, compression: 1 | 5 | 8 | 32773, rowsPerStrip = 16, le = true): Uint8Array {
  const enc = { 1: (d: Uint8Array) => d.slice(), 5: lzwEncode, 8: (d: Uint8Array) => deflate(d), 32773: packBits }[compression];
  return writeTiff([{ tags: greyTags(r, compression, rowsPerStrip), blocks: stripsOf(r, rowsPerStrip, enc) }], le);
}

/** A grey page in 16x16 tiles (uncompressed or LZW); edge tiles are padded as the format requires. */
export function tiledTiff(r: Raster, compression: 1 | 5 = 1, tile = 16): Uint8Array {
  const blocks: Uint8Array[] = [];
  for (let ty = 0; ty < r.height; ty += tile) {
    for (let tx = 0; tx < r.width; tx += tile) {
      const t = new Uint8Array(tile * tile).fill(255);
      for (let y = 0; y < tile && ty + y < r.height; y++) {
        for (let x = 0; x < tile && tx + x < r.width; x++) t[y * tile + x] = r.data[(ty + y) * r.width + tx + x];
      }
      blocks.push(compression === 5 ? lzwEncode(t) : t);
    }
  }
  const tags: Entry[] = [
    [256, 4, [r.width]],
    [257, 4, [r.height]],
    [258, 3, [8]],
    [259, 3, [compression]],
    [262, 3, [1]],
    [277, 3, [1]],
    [322, 3, [tile]],
    [323, 3, [tile]],
  ];
  return writeTiff([{ tags, blocks, tiled: true }]);
}

/** A bilevel Group 4 page, each strip coded on its own. */
export function g4StripTiff(r: Raster, rowsPerStrip: number, pages = 1): Uint8Array {
  const blocks: Uint8Array[] = [];
  for (let y = 0; y < r.height; y += rowsPerStrip) {
    const n = Math.min(rowsPerStrip, r.height - y);
    blocks.push(encodeG4((x, yy) => r.data[(y + yy) * r.width + x] < 128, r.width, n));
  }
  const page = { tags: greyTags(r, 4, rowsPerStrip, 1, 0), blocks };
  return writeTiff(Array.from({ length: pages }, () => page));
}

/** A bilevel uncompressed page (1 bit per pixel, WhiteIsZero). */
export function bilevelTiff(r: Raster): Uint8Array {
  const rowBytes = Math.ceil(r.width / 8);
  const data = new Uint8Array(rowBytes * r.height);
  for (let y = 0; y < r.height; y++)
    for (let x = 0; x < r.width; x++) if (r.data[y * r.width + x] < 128) data[y * rowBytes + (x >> 3)] |= 0x80 >> (x & 7);
  return writeTiff([{ tags: greyTags(r, 1, r.height, 1, 0), blocks: [data] }]);
}
