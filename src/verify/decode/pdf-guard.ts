import { VerifyError } from "../types";
import { inflateBounded } from "./inflate";

/**
 * pdf-lib inflates a PDF's object streams and cross-reference streams while it loads the file, with no
 * bound: a few kilobytes of compressed zeros in an /ObjStm would fill memory before any page is seen.
 * This pass finds those streams first and measures what they inflate to, under a shared budget.
 */
export const PDF_STRUCTURE_BUDGET_BYTES = 64 * 1024 * 1024;

const enc = new TextEncoder();
const OBJSTM = enc.encode("/ObjStm");
const XREF = enc.encode("/XRef");
const STREAM = enc.encode("stream");
const ENDSTREAM = enc.encode("endstream");

function indexOf(hay: Uint8Array, needle: Uint8Array, from: number, to = hay.length): number {
  const first = needle[0];
  const last = Math.min(to, hay.length) - needle.length;
  outer: for (let i = hay.indexOf(first, from); i !== -1 && i <= last; i = hay.indexOf(first, i + 1)) {
    for (let k = 1; k < needle.length; k++) if (hay[i + k] !== needle[k]) continue outer;
    return i;
  }
  return -1;
}

export async function guardPdfStructure(bytes: Uint8Array, budget = PDF_STRUCTURE_BUDGET_BYTES): Promise<void> {
  let left = budget;
  for (const marker of [OBJSTM, XREF]) {
    for (let at = indexOf(bytes, marker, 0); at !== -1; at = indexOf(bytes, marker, at + marker.length)) {
      // The stream keyword closes the dictionary that names the type; dictionaries are short.
      const kw = indexOf(bytes, STREAM, at, at + 4096);
      if (kw === -1) continue;
      let start = kw + STREAM.length;
      if (bytes[start] === 0x0d) start++;
      if (bytes[start] === 0x0a) start++;
      let end = indexOf(bytes, ENDSTREAM, start);
      if (end === -1) end = bytes.length;
      const before = left;
      try {
        await inflateBounded(bytes.subarray(start, end), left, (c) => (left -= c.length), { what: "PDF object stream", allowTruncated: true });
      } catch (err) {
        if (err instanceof VerifyError && err.code === "too_many_pixels") {
          throw new VerifyError("too_large", `the PDF's compressed object streams expand beyond ${budget >> 20} MB`);
        }
        left = before; // not Flate data: pdf-lib will judge it
      }
      at = end;
    }
  }
}
