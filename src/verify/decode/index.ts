/**
 * Document decoding: bytes in, one 8-bit grey raster per page out (0 = ink, 255 = paper).
 *
 * Every bound (bytes, pages, pixels per page) is checked against what the structure declares before any
 * pixel memory is allocated, and every failure is a typed VerifyError: unsupported_format, corrupt_file,
 * too_large, too_many_pages, too_many_pixels, no_raster_content or page_out_of_range.
 *
 * Memory per page: PNG, baseline JPEG, TIFF and PDF pages are decoded straight to grey, one byte per pixel
 * (40 MB at the default 40 MP bound), plus one strip or tile of raw samples for compressed TIFFs (at most
 * TIFF_RAW_BUDGET_BYTES per page). Progressive JPEGs also hold their luma coefficients (two bytes per
 * pixel, up to PROGRESSIVE_MAX_PIXELS = 20 MP). RGB, CMYK, 12-bit or arithmetic JPEGs go through photon,
 * about 8 bytes per pixel, so those are bounded by JPEG_MAX_PIXELS (10.5 MP, see jpeg.ts).
 *
 * Work: every decompressor is ours and bounded by what it may write and what it may read (filters.ts,
 * g4.ts, the JPEG decoders); a PDF's decompressions share one ByteBudget (pdf-guard.ts). docs/decoder-bounds.md
 * lists the bounds.
 */
import { VerifyError, type DecodeLimits, type Raster } from "../types";
import type { IdctScale } from "./jpeg-entropy";
import { decodeJpegGrey, decodeJpegScaled, wholePage, type ScaledPage } from "./jpeg";
import { checkBytes, checkDimensions, checkPageCount, checkPageIndex, resolveLimits } from "./limits";
import { PdfReader } from "./pdf";
import { decodePngGrey, pngHeader } from "./png";
import { decodeTiffPage, tiffPageOffsets } from "./tiff";

export { wholePage, type ScaledPage } from "./jpeg";
export type { IdctScale } from "./jpeg-entropy";

export type DocumentFormat = "png" | "jpeg" | "tiff" | "pdf";

/** The format from the magic bytes alone (never from a file name or a declared media type). */
export function sniffFormat(bytes: Uint8Array): DocumentFormat | null {
  const b = bytes;
  if (b.length >= 8 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47) return "png";
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return "jpeg";
  if (
    b.length >= 4 &&
    ((b[0] === 0x49 && b[1] === 0x49 && b[2] === 0x2a && b[3] === 0) || (b[0] === 0x4d && b[1] === 0x4d && b[2] === 0 && b[3] === 0x2a))
  ) {
    return "tiff";
  }
  // PDF readers accept the header anywhere in the first KiB.
  const head = Math.min(b.length, 1024);
  for (let i = 0; i + 5 <= head; i++) {
    if (b[i] === 0x25 && b[i + 1] === 0x50 && b[i + 2] === 0x44 && b[i + 3] === 0x46 && b[i + 4] === 0x2d) return "pdf";
  }
  return null;
}

/** An opened document: its page count is known, pages are decoded one at a time on demand. */
export interface DocumentReader {
  format: DocumentFormat;
  pageCount: number;
  decodePage(pageIndex: number): Promise<Raster>;
  /**
   * The page at a reduced scale when the format can decode one cheaply (JPEG, through the scaled IDCT),
   * with full-resolution windows on demand; other formats decode the page whole (scale 1).
   */
  decodePageScaled(pageIndex: number, scaleFor: (width: number, height: number) => IdctScale): Promise<ScaledPage>;
}

/**
 * Parse the document's structure (no pixels): format, page count, and the bounds on bytes and pages.
 * The routes call this first for the 10-page rule, then decode only the pages they need.
 */
export async function openDocument(bytes: Uint8Array, limits?: Partial<DecodeLimits>): Promise<DocumentReader> {
  const lim = resolveLimits(limits);
  checkBytes(bytes, lim);
  const format = sniffFormat(bytes);
  if (!format) throw new VerifyError("unsupported_format", "the file is not a PNG, JPEG, TIFF or PDF");
  let reader: Omit<DocumentReader, "decodePageScaled"> & Partial<Pick<DocumentReader, "decodePageScaled">>;
  switch (format) {
    case "png":
      reader = {
        format,
        pageCount: 1,
        async decodePage(i) {
          checkPageIndex(i, 1);
          const h = pngHeader(bytes);
          checkDimensions(h.width, h.height, lim, 0);
          return decodePngGrey(bytes, h);
        },
      };
      break;
    case "jpeg":
      reader = {
        format,
        pageCount: 1,
        async decodePage(i) {
          checkPageIndex(i, 1);
          return decodeJpegGrey(bytes, lim, 0);
        },
        async decodePageScaled(i, scaleFor) {
          checkPageIndex(i, 1);
          return decodeJpegScaled(bytes, lim, 0, scaleFor);
        },
      };
      break;
    case "tiff": {
      const n = tiffPageOffsets(bytes, lim.maxPages).length;
      reader = { format, pageCount: n, decodePage: (i) => decodeTiffPage(bytes, i, lim) };
      break;
    }
    case "pdf": {
      const pdf = await PdfReader.open(bytes, lim);
      reader = { format, pageCount: pdf.pageCount, decodePage: (i) => pdf.decodePage(i) };
      break;
    }
  }
  checkPageCount(reader.pageCount, lim);
  const decode = reader.decodePage;
  return { ...reader, decodePageScaled: reader.decodePageScaled ?? (async (i) => wholePage(await decode(i))) };
}

/** The number of pages, from the structure alone (no page is decoded). */
export async function pageCount(bytes: Uint8Array, limits?: Partial<DecodeLimits>): Promise<number> {
  return (await openDocument(bytes, limits)).pageCount;
}

/** Decode one page (0-based). */
export async function decodePage(bytes: Uint8Array, pageIndex: number, limits?: Partial<DecodeLimits>): Promise<Raster> {
  return (await openDocument(bytes, limits)).decodePage(pageIndex);
}

/** Decode every page, in order. The page count is checked before the first page is decoded. */
export async function decodeDocument(bytes: Uint8Array, limits?: Partial<DecodeLimits>): Promise<Raster[]> {
  const doc = await openDocument(bytes, limits);
  const pages: Raster[] = [];
  for (let i = 0; i < doc.pageCount; i++) pages.push(await doc.decodePage(i));
  return pages;
}
