/**
 * Document decoding: bytes in, one 8-bit grey raster per page out (0 = ink, 255 = paper).
 *
 * Every bound (bytes, pages, pixels per page) is checked against what the headers declare before any
 * pixel memory is allocated, and every failure is a typed VerifyError: unsupported_format, corrupt_file,
 * too_large, too_many_pages, too_many_pixels, no_raster_content or page_out_of_range.
 */
import { VerifyError, type DecodeLimits, type Raster } from "../types";
import { jpegDimensions } from "./jpeg";
import { checkBytes, checkDimensions, checkPageCount, checkPageIndex, resolveLimits } from "./limits";
import { photonDecodeGrey } from "./photon";
import { pngHeader } from "./png";

export type DocumentFormat = "png" | "jpeg" | "tiff" | "pdf";

/** The format from the magic bytes alone (never from a file name or a declared media type). */
export function sniffFormat(bytes: Uint8Array): DocumentFormat | null {
  const b = bytes;
  if (b.length >= 8 && b[0] === 0x89 && b[1] === 0x50 && b[2] === 0x4e && b[3] === 0x47) return "png";
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return "jpeg";
  if (b.length >= 4 && ((b[0] === 0x49 && b[1] === 0x49 && b[2] === 0x2a && b[3] === 0) || (b[0] === 0x4d && b[1] === 0x4d && b[2] === 0 && b[3] === 0x2a))) {
    return "tiff";
  }
  // PDF readers accept the header anywhere in the first KiB.
  const head = Math.min(b.length, 1024);
  for (let i = 0; i + 5 <= head; i++) {
    if (b[i] === 0x25 && b[i + 1] === 0x50 && b[i + 2] === 0x44 && b[i + 3] === 0x46 && b[i + 4] === 0x2d) return "pdf";
  }
  return null;
}

function requireFormat(bytes: Uint8Array): DocumentFormat {
  const f = sniffFormat(bytes);
  if (!f) throw new VerifyError("unsupported_format", "the file is not a PNG, JPEG, TIFF or PDF");
  return f;
}

/** The number of pages, from the structure alone (no page is decoded). */
export async function pageCount(bytes: Uint8Array, limits?: Partial<DecodeLimits>): Promise<number> {
  const lim = resolveLimits(limits);
  checkBytes(bytes, lim);
  const format = requireFormat(bytes);
  switch (format) {
    case "png":
    case "jpeg":
      return 1;
    default:
      throw new VerifyError("unsupported_format", `${format.toUpperCase()} documents are not supported yet`);
  }
}

/** Decode one page (0-based). */
export async function decodePage(bytes: Uint8Array, pageIndex: number, limits?: Partial<DecodeLimits>): Promise<Raster> {
  const lim = resolveLimits(limits);
  checkBytes(bytes, lim);
  const format = requireFormat(bytes);
  switch (format) {
    case "png": {
      checkPageIndex(pageIndex, 1);
      const h = pngHeader(bytes);
      checkDimensions(h.width, h.height, lim, 0);
      return photonDecodeGrey(bytes, "PNG", 0);
    }
    case "jpeg": {
      checkPageIndex(pageIndex, 1);
      const d = jpegDimensions(bytes);
      checkDimensions(d.width, d.height, lim, 0);
      return photonDecodeGrey(bytes, "JPEG", 0);
    }
    default:
      throw new VerifyError("unsupported_format", `${format.toUpperCase()} documents are not supported yet`);
  }
}

/** Decode every page, in order. The page count is checked before the first page is decoded. */
export async function decodeDocument(bytes: Uint8Array, limits?: Partial<DecodeLimits>): Promise<Raster[]> {
  const lim = resolveLimits(limits);
  const n = await pageCount(bytes, lim);
  checkPageCount(n, lim);
  const pages: Raster[] = [];
  for (let i = 0; i < n; i++) pages.push(await decodePage(bytes, i, lim));
  return pages;
}
