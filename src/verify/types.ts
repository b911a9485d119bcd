/**
 * Shared types of the verification pipeline. No HTTP and no bindings here: the check and enrolment
 * routes call into src/verify with bytes and get plain data back.
 */

/** An 8-bit grey image, row-major, 0 = black ink, 255 = white paper. */
export interface Raster {
  width: number;
  height: number;
  data: Uint8Array;
}

/** A rectangle in page pixels (origin top-left). */
export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

export type VerifyErrorCode =
  | "unsupported_format" // not PNG, JPEG, TIFF or PDF
  | "corrupt_file" // a supported format, but malformed or truncated
  | "too_large" // more bytes than allowed
  | "too_many_pixels" // a page over the pixel bound (decompression bombs land here)
  | "too_many_pages" // more pages than allowed
  | "no_raster_content" // a PDF page without an image to verify
  | "page_out_of_range"; // target.page beyond the document

/** A typed, expected failure of the pipeline: the routes map it to a problem document, never a 500. */
export class VerifyError extends Error {
  readonly code: VerifyErrorCode;
  readonly page?: number;
  constructor(code: VerifyErrorCode, message: string, page?: number) {
    super(message);
    this.name = "VerifyError";
    this.code = code;
    this.page = page;
  }
}

export function isVerifyError(err: unknown): err is VerifyError {
  return err instanceof VerifyError;
}

/** Bounds checked before any pixel memory is allocated. */
export interface DecodeLimits {
  maxBytes: number;
  maxPages: number;
  /** Pixels of one page (width * height). */
  maxPixelsPerPage: number;
}

export const DEFAULT_DECODE_LIMITS: DecodeLimits = {
  maxBytes: 50 * 1024 * 1024,
  maxPages: 200,
  // A4 at 600 dpi is about 35 MP; grey at 1 byte per pixel stays well inside 128 MB.
  maxPixelsPerPage: 40_000_000,
};
