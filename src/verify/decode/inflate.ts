import pako from "pako";
import { VerifyError } from "../types";

/**
 * Inflates zlib (or raw deflate) data synchronously, handing each 64 KiB output chunk to `sink`. Output
 * beyond `maxOut` bytes stops at once: a stream that expands past what its header declares is a
 * decompression bomb, refused before the excess is ever held in memory. Bytes after the end of the
 * compressed stream are ignored (PDF producers often leave an end-of-line inside the stream).
 *
 * pako rather than DecompressionStream: the platform stream may inflate ahead of the reader and, in
 * workerd, errors the whole stream (losing queued output) on trailing bytes.
 */
export async function inflateBounded(
  data: Uint8Array,
  maxOut: number,
  sink: (chunk: Uint8Array) => void,
  opts: { raw?: boolean; what?: string; page?: number; allowTruncated?: boolean } = {},
): Promise<number> {
  const what = opts.what ?? "compressed data";
  let total = 0;
  const inf = new pako.Inflate({ raw: opts.raw, chunkSize: 64 * 1024 });
  inf.onData = (chunk) => {
    total += chunk.length;
    if (total > maxOut) {
      throw new VerifyError(
        "too_many_pixels",
        `the ${what} expands beyond its declared size (${maxOut} bytes): refused as a decompression bomb`,
        opts.page,
      );
    }
    sink(chunk);
  };
  try {
    inf.push(data, false);
  } catch (err) {
    if (err instanceof VerifyError) throw err;
    const why = err instanceof Error ? err.message : String(err);
    throw new VerifyError("corrupt_file", `the ${what} could not be inflated (${why.slice(0, 120)})`, opts.page);
  }
  if (inf.err && !opts.allowTruncated) {
    throw new VerifyError("corrupt_file", `the ${what} is damaged (${inf.msg || "invalid deflate data"})`, opts.page);
  }
  if (!inf.ended && !inf.err && !opts.allowTruncated) {
    throw new VerifyError("corrupt_file", `the ${what} is truncated`, opts.page);
  }
  return total;
}
