/**
 * Request bodies of the S3 endpoint: read whole (bounded), checked against the payload hash the client
 * signed, and `aws-chunked` bodies (what the AWS SDKs and CLI send for streamed uploads and trailing
 * checksums) decoded, with each chunk's signature verified when the chunks are signed.
 */
import { concatBytes } from "../util/bytes";
import { chunkSignature, constantTimeEqualHex, sha256Hex, UNSIGNED_PAYLOAD } from "./sigv4";
import { S3Error } from "./errors";

/** Largest body of one request (an object, or one part of a multipart upload). */
export const MAX_S3_BODY_BYTES = 50 * 1024 * 1024;

/** Reads a body, refusing more than `max` bytes (by Content-Length up front, and while it streams). */
export async function readBody(req: Request, max = MAX_S3_BODY_BYTES): Promise<Uint8Array> {
  const declared = Number(req.headers.get("content-length") ?? "");
  if (Number.isFinite(declared) && declared > max + 64 * 1024)
    throw new S3Error("EntityTooLarge", `The body exceeds ${max} bytes; use a multipart upload with smaller parts.`);
  if (!req.body) return new Uint8Array(0);
  const parts: Uint8Array[] = [];
  let total = 0;
  const reader = req.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    // aws-chunked framing adds a little on top of the data: allow for it here, bound the data below.
    if (total > max + 64 * 1024) {
      await reader.cancel().catch(() => undefined);
      throw new S3Error("EntityTooLarge", `The body exceeds ${max} bytes; use a multipart upload with smaller parts.`);
    }
    parts.push(value);
  }
  return concatBytes(parts, total);
}

export interface ChunkSigning {
  key: Uint8Array;
  amzDate: string;
  scope: string;
  seedSignature: string;
}

/**
 * The object bytes of a request body: as sent for a hex or UNSIGNED-PAYLOAD hash (a hex hash must
 * match), or decoded from aws-chunked for the STREAMING-* markers.
 */
export async function payloadOf(
  raw: Uint8Array,
  payloadHash: string,
  signing: ChunkSigning | null,
  max = MAX_S3_BODY_BYTES,
): Promise<Uint8Array> {
  if (payloadHash === UNSIGNED_PAYLOAD) return checkSize(raw, max);
  if (/^[0-9a-f]{64}$/.test(payloadHash)) {
    if ((await sha256Hex(raw)) !== payloadHash)
      throw new S3Error("XAmzContentSHA256Mismatch", "The body does not match the x-amz-content-sha256 it was signed with.");
    return checkSize(raw, max);
  }
  if (payloadHash.startsWith("STREAMING-")) {
    const signed = payloadHash.startsWith("STREAMING-AWS4-HMAC-SHA256-PAYLOAD");
    return decodeChunked(raw, signed ? signing : null, max);
  }
  throw new S3Error("InvalidArgument", `x-amz-content-sha256 ${payloadHash} is not supported.`);
}

function checkSize(b: Uint8Array, max: number): Uint8Array {
  if (b.byteLength > max) throw new S3Error("EntityTooLarge", `The body exceeds ${max} bytes.`);
  return b;
}

const CRLF = [13, 10];

function lineEnd(b: Uint8Array, from: number): number {
  for (let i = from; i + 1 < b.length; i++) if (b[i] === CRLF[0] && b[i + 1] === CRLF[1]) return i;
  return -1;
}

/** `size[;chunk-signature=sig]\r\n data \r\n` ... `0[;chunk-signature=sig]\r\n` [trailers] `\r\n`. */
async function decodeChunked(b: Uint8Array, signing: ChunkSigning | null, max: number): Promise<Uint8Array> {
  const out: Uint8Array[] = [];
  let at = 0,
    total = 0;
  let previous = signing?.seedSignature ?? "";
  for (;;) {
    const end = lineEnd(b, at);
    if (end < 0) throw new S3Error("IncompleteBody", "The aws-chunked body ends inside a chunk header.");
    const header = new TextDecoder().decode(b.subarray(at, end));
    const [sizeHex, ...ext] = header.split(";");
    const size = Number.parseInt(sizeHex, 16);
    if (!/^[0-9a-fA-F]{1,8}$/.test(sizeHex) || !Number.isFinite(size))
      throw new S3Error("InvalidArgument", "The aws-chunked body has a malformed chunk size.");
    const start = end + 2;
    if (start + size > b.length) throw new S3Error("IncompleteBody", "The aws-chunked body is shorter than its chunks declare.");
    const data = b.subarray(start, start + size);
    if (signing) {
      const sig =
        ext
          .map((e) => e.trim())
          .find((e) => e.startsWith("chunk-signature="))
          ?.slice("chunk-signature=".length) ?? "";
      const want = await chunkSignature(signing.key, signing.amzDate, signing.scope, previous, data);
      if (!constantTimeEqualHex(sig.toLowerCase(), want))
        throw new S3Error("SignatureDoesNotMatch", "A chunk signature of the aws-chunked body does not match.");
      previous = want;
    }
    if (size === 0) break;
    total += size;
    if (total > max) throw new S3Error("EntityTooLarge", `The body exceeds ${max} bytes.`);
    out.push(data);
    at = start + size;
    if (b[at] !== CRLF[0] || b[at + 1] !== CRLF[1]) throw new S3Error("InvalidArgument", "An aws-chunked chunk is not followed by CRLF.");
    at += 2;
  }
  // Trailing headers (x-amz-checksum-*) follow the last chunk; the stored object is what counts here.
  return concatBytes(out, total);
}
