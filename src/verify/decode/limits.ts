import { DEFAULT_DECODE_LIMITS, VerifyError, type DecodeLimits } from "../types";

/** Fill in any bound the caller left out with the default. */
export function resolveLimits(limits?: Partial<DecodeLimits>): DecodeLimits {
  return { ...DEFAULT_DECODE_LIMITS, ...(limits ?? {}) };
}

export function checkBytes(bytes: Uint8Array, limits: DecodeLimits): void {
  if (bytes.byteLength > limits.maxBytes) {
    throw new VerifyError("too_large", `the file has ${bytes.byteLength} bytes; at most ${limits.maxBytes} are accepted`);
  }
}

/** Called with the dimensions a header declares, before any pixel memory exists. */
export function checkDimensions(width: number, height: number, limits: DecodeLimits, page?: number): void {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width <= 0 || height <= 0) {
    throw new VerifyError("corrupt_file", `the image declares invalid dimensions ${width}x${height}`, page);
  }
  const pixels = width * height;
  if (pixels > limits.maxPixelsPerPage) {
    throw new VerifyError(
      "too_many_pixels",
      `page ${(page ?? 0) + 1} declares ${width}x${height} pixels; at most ${limits.maxPixelsPerPage} pixels per page are accepted`,
      page,
    );
  }
}

export function checkPageCount(count: number, limits: DecodeLimits): void {
  if (count > limits.maxPages) {
    throw new VerifyError("too_many_pages", `the document has ${count} pages; at most ${limits.maxPages} are accepted`);
  }
}

export function checkPageIndex(pageIndex: number, count: number): void {
  if (!Number.isInteger(pageIndex) || pageIndex < 0 || pageIndex >= count) {
    throw new VerifyError("page_out_of_range", `page ${pageIndex + 1} was asked for, but the document has ${count} page(s)`, pageIndex);
  }
}

/** Big-endian reads that fail as corrupt_file rather than returning undefined past the end. */
export function u16be(b: Uint8Array, o: number): number {
  if (o + 2 > b.length) throw truncated();
  return (b[o] << 8) | b[o + 1];
}
export function u32be(b: Uint8Array, o: number): number {
  if (o + 4 > b.length) throw truncated();
  return ((b[o] << 24) >>> 0) + ((b[o + 1] << 16) | (b[o + 2] << 8) | b[o + 3]);
}
export function truncated(what = "file"): VerifyError {
  return new VerifyError("corrupt_file", `the ${what} is truncated`);
}

/** Wrap a third-party decoder: anything it throws (including a WASM trap) becomes a typed corrupt_file. */
export function wrapDecoder<T>(format: string, page: number | undefined, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof VerifyError) throw err;
    const why = err instanceof Error ? err.message : String(err);
    throw new VerifyError("corrupt_file", `the ${format} could not be decoded (${why.slice(0, 160)})`, page);
  }
}
