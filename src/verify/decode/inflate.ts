import { VerifyError } from "../types";

/**
 * Streams zlib (or raw deflate) data through the platform's DecompressionStream, handing each output chunk
 * to `sink` as it appears. Output beyond `maxOut` bytes stops the stream at once: a stream that expands past
 * what its header declares is a decompression bomb, refused before the excess is ever held in memory.
 */
export async function inflateBounded(
  data: Uint8Array,
  maxOut: number,
  sink: (chunk: Uint8Array) => void,
  opts: { raw?: boolean; what?: string; page?: number; allowTruncated?: boolean } = {},
): Promise<number> {
  const what = opts.what ?? "compressed data";
  const ds = new DecompressionStream(opts.raw ? "deflate-raw" : "deflate");
  const writer = ds.writable.getWriter();
  const reader = ds.readable.getReader();
  // The write side is fed in slices so a bomb is noticed after one slice's worth of output, not after all of it.
  const feed = (async () => {
    const SLICE = 64 * 1024;
    for (let o = 0; o < data.length; o += SLICE) {
      await writer.write(data.subarray(o, Math.min(data.length, o + SLICE)));
    }
    await writer.close();
  })();
  feed.catch(() => undefined);
  let total = 0;
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxOut) {
        throw new VerifyError("too_many_pixels", `the ${what} expands beyond its declared size (${maxOut} bytes): refused as a decompression bomb`, opts.page);
      }
      sink(value);
    }
    await feed;
  } catch (err) {
    reader.cancel().catch(() => undefined);
    writer.abort().catch(() => undefined);
    if (err instanceof VerifyError) throw err;
    if (opts.allowTruncated) return total;
    const why = err instanceof Error ? err.message : String(err);
    throw new VerifyError("corrupt_file", `the ${what} is damaged or truncated (${why.slice(0, 120)})`, opts.page);
  }
  return total;
}
