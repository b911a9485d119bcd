/**
 * Just enough PDF syntax for the structure guard (pdf-guard.ts): objects as pdf-lib's parser reads them
 * (names with their #xx escapes decoded, literal strings with nested parentheses and escapes, hex strings,
 * arrays, dictionaries, numbers, references, comments), and the extent of a stream's data decided the
 * way pdf-lib decides it (its /Length when `endstream` follows, else a scan for `endstream`).
 *
 * Every read is bounded: nesting depth is capped, and the caller's `work` counter charges each byte read,
 * so a hostile file cannot make the guard itself the slow part.
 */

export type PdfObj =
  | { k: "name"; v: string }
  | { k: "num"; v: number }
  | { k: "ref"; n: number; g: number }
  | { k: "str" }
  | { k: "kw"; v: string }
  | { k: "arr"; v: PdfObj[] }
  | { k: "dict"; v: Map<string, PdfObj>; start: number; end: number };

/** A syntax error (internal: the guard decides what a parse failure means). */
export class PdfSyntaxError extends Error {}

const MAX_DEPTH = 64;

const WS = new Uint8Array(256);
for (const c of [0, 9, 10, 12, 13, 32]) WS[c] = 1;
const DELIM = new Uint8Array(256);
for (const c of "()<>[]{}/%") DELIM[c.charCodeAt(0)] = 1;

export const isSpace = (c: number): boolean => WS[c] === 1;
const isRegular = (c: number): boolean => WS[c] === 0 && DELIM[c] === 0;
const hexValue = (c: number): number => (c >= 48 && c <= 57 ? c - 48 : c >= 65 && c <= 70 ? c - 55 : c >= 97 && c <= 102 ? c - 87 : -1);

/**
 * The name token starting after the "/" at `at` - 1, with #xx escapes decoded (upper or lower case hex;
 * pdf-lib decodes only upper case, so this is the wider reading). Returns the name and where it ends.
 */
export function readName(b: Uint8Array, at: number, maxLength = 256): { name: string; end: number } {
  let name = "";
  let i = at;
  while (i < b.length && isRegular(b[i])) {
    let c = b[i];
    if (c === 0x23 && i + 2 < b.length && hexValue(b[i + 1]) >= 0 && hexValue(b[i + 2]) >= 0) {
      c = (hexValue(b[i + 1]) << 4) | hexValue(b[i + 2]);
      i += 2;
    }
    if (name.length < maxLength) name += String.fromCharCode(c);
    i++;
  }
  return { name, end: i };
}

export class PdfCursor {
  pos: number;
  /** Set when a name token is read that starts at `watch` (the "/" of a name the guard is tracing). */
  watch = -1;
  sawWatched = false;
  /** Bytes read so far, across every parse with this cursor's counter. */
  readonly work: { bytes: number; limit: number };

  constructor(
    readonly b: Uint8Array,
    pos: number,
    work: { bytes: number; limit: number },
  ) {
    this.pos = pos;
    this.work = work;
  }

  #advance(n: number): void {
    this.pos += n;
    this.work.bytes += n;
    if (this.work.bytes > this.work.limit) throw new PdfWorkExceeded();
  }

  /** Step over one byte. */
  skip(): void {
    this.#advance(1);
  }

  skipSpace(): void {
    const b = this.b;
    while (this.pos < b.length) {
      const c = b[this.pos];
      if (WS[c]) this.#advance(1);
      else if (c === 0x25) {
        while (this.pos < b.length && b[this.pos] !== 10 && b[this.pos] !== 13) this.#advance(1);
      } else break;
    }
  }

  /** Match a keyword at the cursor (bytes only, as pdf-lib's matchKeyword does); advance past it if so. */
  match(kw: Uint8Array): boolean {
    if (this.pos + kw.length > this.b.length) return false;
    for (let i = 0; i < kw.length; i++) if (this.b[this.pos + i] !== kw[i]) return false;
    this.#advance(kw.length);
    return true;
  }

  value(depth = 0): PdfObj {
    if (depth > MAX_DEPTH) throw new PdfSyntaxError("nested too deeply");
    this.skipSpace();
    const b = this.b;
    if (this.pos >= b.length) throw new PdfSyntaxError("end of file");
    const c = b[this.pos];
    if (c === 0x2f) {
      if (this.pos === this.watch) this.sawWatched = true;
      this.#advance(1);
      const { name, end } = readName(b, this.pos);
      this.#advance(end - this.pos);
      return { k: "name", v: name };
    }
    if (c === 0x3c && b[this.pos + 1] === 0x3c) return this.#dict(depth);
    if (c === 0x3c) {
      // Hex string: pdf-lib takes any byte up to ">".
      this.#advance(1);
      while (this.pos < b.length && b[this.pos] !== 0x3e) this.#advance(1);
      if (this.pos >= b.length) throw new PdfSyntaxError("unterminated hex string");
      this.#advance(1);
      return { k: "str" };
    }
    if (c === 0x28) return this.#string();
    if (c === 0x5b) {
      this.#advance(1);
      const v: PdfObj[] = [];
      for (;;) {
        this.skipSpace();
        if (this.pos >= b.length) throw new PdfSyntaxError("unterminated array");
        if (b[this.pos] === 0x5d) {
          this.#advance(1);
          return { k: "arr", v };
        }
        v.push(this.value(depth + 1));
      }
    }
    if ((c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2d || c === 0x2e) return this.#numberOrRef();
    if (isRegular(c)) {
      const start = this.pos;
      while (this.pos < b.length && isRegular(b[this.pos])) this.#advance(1);
      const word = String.fromCharCode(...b.subarray(start, Math.min(this.pos, start + 16)));
      if (word === "true" || word === "false" || word === "null") return { k: "kw", v: word };
      throw new PdfSyntaxError(`unexpected keyword ${word}`);
    }
    throw new PdfSyntaxError(`unexpected byte ${c}`);
  }

  #dict(depth: number): PdfObj {
    const start = this.pos;
    this.#advance(2);
    const v = new Map<string, PdfObj>();
    for (;;) {
      this.skipSpace();
      const b = this.b;
      if (this.pos >= b.length) throw new PdfSyntaxError("unterminated dictionary");
      if (b[this.pos] === 0x3e && b[this.pos + 1] === 0x3e) {
        this.#advance(2);
        return { k: "dict", v, start, end: this.pos };
      }
      const key = this.value(depth + 1);
      if (key.k !== "name") throw new PdfSyntaxError("a dictionary key is not a name");
      v.set(key.v, this.value(depth + 1));
    }
  }

  #string(): PdfObj {
    const b = this.b;
    this.#advance(1);
    let nest = 1;
    while (this.pos < b.length) {
      const c = b[this.pos];
      if (c === 0x5c) this.#advance(Math.min(2, b.length - this.pos));
      else {
        this.#advance(1);
        if (c === 0x28) nest++;
        else if (c === 0x29 && --nest === 0) return { k: "str" };
      }
    }
    throw new PdfSyntaxError("unterminated string");
  }

  #int(): number | undefined {
    const b = this.b;
    const start = this.pos;
    while (this.pos < b.length && b[this.pos] >= 0x30 && b[this.pos] <= 0x39) this.#advance(1);
    return this.pos > start ? Number(String.fromCharCode(...b.subarray(start, Math.min(this.pos, start + 20)))) : undefined;
  }

  #numberOrRef(): PdfObj {
    const b = this.b;
    const start = this.pos;
    while (
      this.pos < b.length &&
      ((b[this.pos] >= 0x30 && b[this.pos] <= 0x39) || b[this.pos] === 0x2b || b[this.pos] === 0x2d || b[this.pos] === 0x2e)
    ) {
      this.#advance(1);
    }
    const text = String.fromCharCode(...b.subarray(start, Math.min(this.pos, start + 40)));
    const n = Number(text);
    if (!/^\d+$/.test(text)) return { k: "num", v: Number.isFinite(n) ? n : 0 };
    // "n g R" is a reference; anything else leaves the cursor after the first number.
    const after = this.pos;
    this.skipSpace();
    const g = this.#int();
    if (g !== undefined) {
      this.skipSpace();
      if (b[this.pos] === 0x52) {
        this.#advance(1);
        return { k: "ref", n, g };
      }
    }
    this.pos = after;
    return { k: "num", v: n };
  }
}

/** The guard's own parse work went over its bound: the structure is refused rather than read on. */
export class PdfWorkExceeded extends Error {}

const enc = new TextEncoder();
const KW = {
  stream: enc.encode("stream"),
  streamEOL: [enc.encode("stream \r\n"), enc.encode("stream\r\n"), enc.encode("stream\r"), enc.encode("stream\n")],
  endstream: enc.encode("endstream"),
  endstreamEOL: [enc.encode("\r\nendstream"), enc.encode("\rendstream"), enc.encode("\nendstream")],
};

/**
 * After a dictionary: the stream's data, as pdf-lib's PDFObjectParser.parseDictOrStream finds it, or
 * undefined when no `stream` keyword follows (or pdf-lib would fail to find its end: then pdf-lib keeps
 * the object as invalid and decodes nothing).
 */
export function streamAfter(
  cur: PdfCursor,
  dict: Extract<PdfObj, { k: "dict" }>,
): { start: number; end: number } | "no-stream" | "unterminated" {
  cur.skipSpace();
  let matched = false;
  for (const kw of KW.streamEOL) if (!matched && cur.match(kw)) matched = true;
  if (!matched && !cur.match(KW.stream)) return "no-stream";
  const start = cur.pos;
  const len = dict.v.get("Length");
  if (len && len.k === "num" && Number.isInteger(len.v) && len.v >= 0) {
    const end = start + len.v;
    if (end <= cur.b.length) {
      cur.pos = end;
      cur.skipSpace();
      if (cur.match(KW.endstream)) return { start, end };
    }
    cur.pos = start;
  }
  // pdf-lib's fallback: scan for endstream, counting any nested `stream` keyword on the way.
  let nest = 1;
  let end = cur.pos;
  while (cur.pos < cur.b.length) {
    end = cur.pos;
    if (cur.match(KW.stream)) nest++;
    else if (KW.endstreamEOL.some((kw) => cur.match(kw)) || cur.match(KW.endstream)) nest--;
    else cur.skip();
    if (nest === 0) return { start, end };
  }
  return "unterminated";
}
