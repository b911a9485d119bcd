import { concatBytes } from "../../util/bytes";
import { VerifyError, type DecodeLimits } from "../types";
import { ByteBudget } from "./budget";
import { decodeChain, pdfFilter, type FilterStep } from "./filters";
import { PdfCursor, PdfSyntaxError, PdfWorkExceeded, readName, streamAfter, type PdfObj } from "./pdf-syntax";

/**
 * pdf-lib inflates a PDF's object streams (/Type /ObjStm) and cross-reference streams (/Type /XRef) while
 * it loads the file, through its whole filter chain and with no bound. This guard runs first and proves
 * that everything pdf-lib will inflate fits a budget, by inflating it itself with bounded decoders that
 * stop at the budget (not after): only then is pdf-lib given the file.
 *
 * Finding those streams must not depend on spelling: every name in the file is read with its #xx escapes
 * decoded (`/Obj#53tm` is `/ObjStm`), and each name that reads ObjStm or XRef must be traced to the
 * dictionary holding it. The trace walks back over the `obj` keywords before the name, parsing each
 * candidate object forward as pdf-lib would, until one whose dictionary holds that name token and is
 * followed by `stream` (that stream is decoded; candidates hidden inside strings of the real dictionary are
 * decoded too, which costs budget, never safety) and then one that ends before the name (an earlier object:
 * the walk is over). A name that no readable dictionary holds is refused: pdf-lib might read it.
 *
 * Everything is charged to the document's one ByteBudget: structure streams against an 8 MiB share of it
 * (pdf-lib holds them in memory, several times over), then image streams as pages are decoded (pdf.ts).
 */

/**
 * What pdf-lib may inflate while loading one document: object and cross-reference streams together. A
 * 200-page scan has a few hundred KiB of them; 8 MiB leaves room for far richer files while a bomb stops
 * after about 50 ms of inflating.
 */
export const PDF_STRUCTURE_BUDGET_BYTES = 8 * 1024 * 1024;
/** Decompressed bytes one PDF document may cost in all, per pixel of the page bound (two pages in RGB). */
export const PDF_BUDGET_BYTES_PER_PIXEL = 8;
/** More object or cross-reference streams than this is not a document, it is a workload. */
export const PDF_MAX_STRUCTURE_STREAMS = 4096;
/** Candidate `obj` keywords tried, walking back from one name, before the name is refused. */
const MAX_CANDIDATES = 32;

/** The one byte budget of a PDF document (guard, pdf-lib's loading, and every image stream). */
export function pdfDocumentBudget(limits: DecodeLimits): ByteBudget {
  return new ByteBudget(PDF_BUDGET_BYTES_PER_PIXEL * limits.maxPixelsPerPage + PDF_STRUCTURE_BUDGET_BYTES, "the PDF");
}

const OBJ = new TextEncoder().encode("obj");
const TYPES = new Set(["ObjStm", "XRef"]);

function refuse(why: string): VerifyError {
  return new VerifyError("corrupt_file", `the PDF's structure cannot be checked safely: ${why}`);
}

function lastIndexOf(b: Uint8Array, needle: Uint8Array, before: number): number {
  for (let i = Math.min(before, b.length - needle.length); i >= 0; i--) {
    let k = 0;
    while (k < needle.length && b[i + k] === needle[k]) k++;
    if (k === needle.length) return i;
  }
  return -1;
}

export interface GuardReport {
  /** Object and cross-reference streams decoded. */
  streams: number;
  /** Bytes of syntax the guard read (its own work). */
  parsed: number;
}

export function guardPdfStructure(bytes: Uint8Array, budget: ByteBudget): GuardReport {
  const structure = budget.child(PDF_STRUCTURE_BUDGET_BYTES, "the PDF's object and cross-reference streams");
  const work = { bytes: 0, limit: 4 * bytes.length + (1 << 20) };
  const decoded = new Set<number>();
  // First every name: the markers to trace, and whether the file is encrypted (its object streams are
  // then ciphertext, and the honest answer is "encrypted PDFs are not supported", not "damaged").
  const markers: { at: number; name: string }[] = [];
  let encrypted = false;
  for (let at = bytes.indexOf(0x2f); at !== -1; ) {
    const { name, end } = readName(bytes, at + 1);
    work.bytes += end - at;
    if (TYPES.has(name)) markers.push({ at, name });
    else if (name === "Encrypt") encrypted = true;
    at = bytes.indexOf(0x2f, Math.max(end, at + 1));
  }
  try {
    for (const { at, name } of markers) {
      trace(bytes, at, name, work, (dict, data) => {
        if (decoded.has(data.start)) return;
        decoded.add(data.start);
        if (decoded.size > PDF_MAX_STRUCTURE_STREAMS)
          throw refuse(`more than ${PDF_MAX_STRUCTURE_STREAMS} object or cross-reference streams`);
        decodeStructureStream(bytes.subarray(data.start, data.end), dict, name, structure);
      });
    }
  } catch (err) {
    if (encrypted && err instanceof VerifyError && err.code === "corrupt_file") {
      throw new VerifyError("unsupported_format", "encrypted PDFs are not supported");
    }
    if (err instanceof PdfWorkExceeded) throw refuse("its syntax takes too much work to read");
    throw err;
  }
  return { streams: decoded.size, parsed: work.bytes };
}

type Dict = Extract<PdfObj, { k: "dict" }>;

/** Find the dictionaries that hold the name token at `marker` (see the module comment). */
function trace(
  bytes: Uint8Array,
  marker: number,
  name: string,
  work: { bytes: number; limit: number },
  onStream: (dict: Dict, data: { start: number; end: number }) => void,
): void {
  let found = false;
  let p = marker;
  for (let tries = 0; ; tries++) {
    const from = p;
    p = lastIndexOf(bytes, OBJ, p - 1);
    // The walk back is the guard's work too: a file of nothing but names cannot make it quadratic.
    work.bytes += from - Math.max(0, p);
    if (work.bytes > work.limit) throw new PdfWorkExceeded();
    if (p < 0) break;
    if (tries >= MAX_CANDIDATES) throw refuse(`the /${name} at byte ${marker} is preceded by too many object headers to find its own`);
    const cur = new PdfCursor(bytes, p + OBJ.length, work);
    cur.watch = marker;
    let v: PdfObj;
    try {
      v = cur.value();
    } catch (err) {
      if (err instanceof PdfSyntaxError) continue;
      throw err;
    }
    if (cur.pos <= marker) break; // an earlier, complete object: the walk is over
    if (v.k !== "dict" || !cur.sawWatched) continue; // the name is inside a string, or this is not its object
    found = true;
    const data = streamAfter(cur, v);
    if (typeof data === "object") onStream(v, data);
    // "no-stream" or "unterminated": pdf-lib decodes nothing there either.
  }
  if (!found) throw refuse(`no readable object dictionary holds the /${name} at byte ${marker}`);
}

/** The filter chain of a structure stream as pdf-lib will apply it; anything it cannot mirror is refused. */
function chainOf(dict: Dict): FilterStep[] {
  const f = dict.v.get("Filter");
  const p = dict.v.get("DecodeParms");
  const names: string[] = [];
  if (f === undefined || (f.k === "kw" && f.v === "null")) return [];
  if (f.k === "name") names.push(f.v);
  else if (f.k === "arr" && f.v.every((x) => x.k === "name")) names.push(...f.v.map((x) => (x as { v: string }).v));
  else throw refuse("an object stream's /Filter is not a name or an array of names");
  return names.map((n, i) => {
    const filter = pdfFilter(n);
    if (!filter || n.length <= 3) throw refuse(`an object stream uses the filter /${n}`); // pdf-lib knows only the full names
    if (filter !== "lzw") return { filter };
    // pdf-lib reads /EarlyChange from the matching /DecodeParms dictionary; an indirect one it would
    // resolve and we cannot, so it is refused rather than guessed.
    const parm = f.k === "name" ? p : p?.k === "arr" ? p.v[i] : undefined;
    if (parm?.k === "ref" || p?.k === "ref") throw refuse("an LZW object stream's /DecodeParms is indirect");
    const early = parm?.k === "dict" ? parm.v.get("EarlyChange") : undefined;
    if (early?.k === "ref") throw refuse("an LZW object stream's /EarlyChange is indirect");
    return { filter, earlyChange: early?.k === "num" ? early.v : 1 };
  });
}

function decodeStructureStream(data: Uint8Array, dict: Dict, type: string, budget: ByteBudget): void {
  const steps = chainOf(dict);
  if (type !== "ObjStm") {
    let n = 0;
    decodeChain(
      data,
      steps,
      { push: (c) => (n += c.length), end: () => undefined },
      { budget, what: "PDF cross-reference stream", lenient: true },
    );
    checkXrefEntries(dict, n);
    return;
  }
  const parts: Uint8Array[] = [];
  decodeChain(data, steps, { push: (c) => parts.push(c), end: () => undefined }, { budget, what: "PDF object stream", lenient: true });
  const content = parts.length === 1 ? parts[0] : concatBytes(parts);
  // The objects inside may not name another object or cross-reference stream: pdf-lib could reach such a
  // stream through a reference (/Type 12 0 R) that this guard, reading only the raw file, would not see.
  for (let at = content.indexOf(0x2f); at !== -1; at = content.indexOf(0x2f, at + 1)) {
    const n = readName(content, at + 1).name;
    if (TYPES.has(n)) throw refuse(`an object stream holds the name /${n}`);
  }
  checkObjectTable(dict, content);
}

/** A direct, non-negative integer entry of a structure stream's dictionary (pdf-lib would resolve a reference). */
function directInt(dict: Dict, key: string): number | undefined {
  const v = dict.v.get(key);
  if (v === undefined) return undefined;
  if (v.k !== "num" || !Number.isInteger(v.v) || v.v < 0) throw refuse(`a structure stream's /${key} is not a direct whole number`);
  return v.v;
}

/**
 * pdf-lib reads as many cross-reference entries as /Size or /Index declare, whatever the stream holds
 * (a 2 KB file declaring /Size 1000000 cost it 4 s and 136 MB): the declared entries must fit the data.
 */
function checkXrefEntries(dict: Dict, decoded: number): void {
  const w = dict.v.get("W");
  if (w?.k !== "arr" || w.v.some((x) => x.k !== "num" || !Number.isInteger(x.v) || x.v < 0 || x.v > 8)) {
    throw refuse("a cross-reference stream's /W is not a direct array of field widths");
  }
  const width = w.v.reduce((n, x) => n + (x as { v: number }).v, 0);
  let entries = 0;
  const index = dict.v.get("Index");
  if (index !== undefined) {
    if (index.k !== "arr" || index.v.some((x) => x.k !== "num" || !Number.isInteger(x.v) || x.v < 0)) {
      throw refuse("a cross-reference stream's /Index is not a direct array of whole numbers");
    }
    for (let i = 1; i < index.v.length; i += 2) entries += (index.v[i] as { v: number }).v;
  } else {
    entries = directInt(dict, "Size") ?? 0;
  }
  if (width === 0 ? entries > 0 : entries * width > decoded + width) {
    throw refuse(`a cross-reference stream declares ${entries} entries of ${width} bytes but holds ${decoded} bytes`);
  }
}

/**
 * pdf-lib parses each object of an object stream from the offset its table gives, to the object's end:
 * a table of many entries pointing into one long object would make it parse that object again and again.
 * So the table must be readable, with distinct offsets, and each object must end before the next begins.
 */
function checkObjectTable(dict: Dict, content: Uint8Array): void {
  const count = directInt(dict, "N") ?? 0;
  const first = directInt(dict, "First") ?? 0;
  if (count > content.length / 4 + 1) throw refuse(`an object stream declares ${count} objects in ${content.length} bytes`);
  const work = { bytes: 0, limit: 2 * content.length + 1024 };
  const table = new PdfCursor(content, 0, work);
  const offsets: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const num = table.value();
      const off = table.value();
      // pdf-lib reads digits only: on anything else it fails on this table too, and parses no object.
      if (num.k !== "num" || off.k !== "num" || !Number.isInteger(off.v) || off.v < 0) return;
      offsets.push(off.v);
    }
  } catch (err) {
    if (err instanceof PdfSyntaxError) return;
    throw err;
  }
  offsets.sort((a, b) => a - b);
  for (let i = 0; i < offsets.length; i++) {
    if (i > 0 && offsets[i] === offsets[i - 1]) throw refuse("an object stream lists one offset twice");
    const start = first + offsets[i];
    const end = Math.min(content.length, i + 1 < offsets.length ? first + offsets[i + 1] : content.length);
    if (start >= content.length) throw refuse("an object stream's offset lies past its data");
    try {
      new PdfCursor(content.subarray(start, end), 0, work).value();
    } catch (err) {
      if (err instanceof PdfSyntaxError || err instanceof PdfWorkExceeded)
        throw refuse("an object in an object stream runs into the next one");
      throw err;
    }
  }
}
