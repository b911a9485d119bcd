import pako from "pako";
import { VerifyError } from "../types";
import type { ByteBudget } from "./budget";

/**
 * Bounded, streaming decoders for the general-purpose compressions of PDF filter chains and TIFF strips:
 * Flate (zlib), LZW, RunLength/PackBits, ASCIIHex and ASCII85. Each stage hands its output downstream in
 * chunks as it produces it, so a chain never holds a whole intermediate result, and every chunk is charged
 * to a ByteBudget before it moves on: a chain of stages, or a stream that expands far beyond what it
 * declares, stops at the budget instead of after.
 *
 * The work of each stage is linear in what it reads plus what it writes: every loop step consumes input
 * (at least one byte, or one LZW code of at least 9 bits) or writes output that the budget bounds.
 *
 * These replace utif2's LZW and PackBits loops (which read past the end of a strip and never stop on a
 * lying byte count) and pdf-lib's decoders for anything we decode ourselves.
 */

/** Where a stage's output goes. `end` is called once after the last push. */
export interface Sink {
  push(chunk: Uint8Array): void;
  end(): void;
}

/** Thrown by a sink that has all it needs (a TIFF strip's declared size): the chain stops without error. */
export class OutputComplete extends Error {}

export interface StageOptions {
  budget: ByteBudget;
  what: string;
  page?: number;
  /** Flate only: accept a stream that ends before its final block, or fails its checksum. */
  lenient?: boolean;
}

const CHUNK = 64 * 1024;

/** Collects a stage's writes into CHUNK-sized pieces, charging each before passing it on. */
class Emitter {
  #buf = new Uint8Array(CHUNK);
  #n = 0;
  constructor(
    private readonly next: Sink,
    private readonly o: StageOptions,
  ) {}
  byte(v: number): void {
    this.#buf[this.#n++] = v;
    if (this.#n === CHUNK) this.flush();
  }
  bytes(src: Uint8Array, from: number, to: number): void {
    while (from < to) {
      const n = Math.min(to - from, CHUNK - this.#n);
      this.#buf.set(src.subarray(from, from + n), this.#n);
      this.#n += n;
      from += n;
      if (this.#n === CHUNK) this.flush();
    }
  }
  repeat(v: number, count: number): void {
    while (count > 0) {
      const n = Math.min(count, CHUNK - this.#n);
      this.#buf.fill(v, this.#n, this.#n + n);
      this.#n += n;
      count -= n;
      if (this.#n === CHUNK) this.flush();
    }
  }
  flush(): void {
    if (this.#n === 0) return;
    const out = this.#buf.slice(0, this.#n);
    this.#n = 0;
    this.o.budget.charge(out.length, this.o.page);
    this.next.push(out);
  }
}

function corrupt(o: StageOptions, why: string): VerifyError {
  return new VerifyError("corrupt_file", `the ${o.what} is damaged (${why})`, o.page);
}

class FlateStage implements Sink {
  #inf: InstanceType<typeof pako.Inflate>;
  constructor(
    private readonly next: Sink,
    private readonly o: StageOptions,
  ) {
    this.#inf = new pako.Inflate({ chunkSize: CHUNK });
    this.#inf.onData = (chunk: Uint8Array) => {
      o.budget.charge(chunk.length, o.page);
      next.push(chunk);
    };
  }
  #finished = false;
  push(chunk: Uint8Array): void {
    // Bytes after the final block are not read (PDF producers leave an EOL; a bomb may hide there):
    // upstream stages are told to stop.
    if (this.#finished) throw new OutputComplete();
    try {
      this.#inf.push(chunk, false);
    } catch (err) {
      if (err instanceof VerifyError || err instanceof OutputComplete) throw err;
      throw corrupt(this.o, err instanceof Error ? err.message.slice(0, 120) : String(err));
    }
    // A checksum failure comes after all the data: lenient callers keep what was decoded.
    if (this.#inf.err && !(this.o.lenient && /incorrect (data|length) check/.test(this.#inf.msg)))
      throw corrupt(this.o, this.#inf.msg || "invalid deflate data");
    if (this.#inf.ended) {
      this.#finished = true;
      this.next.end();
    }
  }
  end(): void {
    if (this.#finished) return;
    if (!this.#inf.ended && !this.#inf.err && !this.o.lenient)
      throw new VerifyError("corrupt_file", `the ${this.o.what} is truncated`, this.o.page);
    this.next.end();
  }
}

/**
 * LZW as TIFF (compression 5) and PDF (/LZWDecode) write it: MSB-first codes of 9 to 12 bits, 256 clear,
 * 257 end; with early change (the default in both) the code width grows one code early.
 */
class LzwStage implements Sink {
  readonly #out: Emitter;
  readonly #early: number;
  readonly #prefix = new Int16Array(4096);
  readonly #suffix = new Uint8Array(4096);
  readonly #first = new Uint8Array(4096);
  readonly #len = new Uint16Array(4096);
  readonly #str = new Uint8Array(4096);
  #acc = 0;
  #bits = 0;
  #width = 9;
  #next = 258;
  #prev = -1;
  #done = false;
  /** Codes read so far: with the bytes written, the whole work of the stage. */
  codes = 0;

  constructor(
    private readonly next: Sink,
    private readonly o: StageOptions,
    earlyChange = 1,
  ) {
    this.#out = new Emitter(next, o);
    this.#early = earlyChange;
    for (let i = 0; i < 256; i++) {
      this.#suffix[i] = i;
      this.#first[i] = i;
      this.#len[i] = 1;
      this.#prefix[i] = -1;
    }
  }

  push(chunk: Uint8Array): void {
    if (this.#done) throw new OutputComplete();
    for (let i = 0; i < chunk.length && !this.#done; i++) {
      this.#acc = ((this.#acc << 8) | chunk[i]) & 0xffffff;
      this.#bits += 8;
      while (this.#bits >= this.#width && !this.#done) {
        this.#bits -= this.#width;
        this.#code((this.#acc >>> this.#bits) & ((1 << this.#width) - 1));
      }
    }
  }

  #code(code: number): void {
    this.codes++;
    if (code === 256) {
      this.#width = 9;
      this.#next = 258;
      this.#prev = -1;
      return;
    }
    if (code === 257) {
      this.#done = true;
      this.#out.flush();
      this.next.end();
      return;
    }
    let entry = code;
    if (this.#prev < 0) {
      if (code > 255) throw corrupt(this.o, "an LZW code before any string");
      this.#out.byte(code);
      this.#prev = code;
      return;
    }
    if (code > this.#next || (code === this.#next && this.#next >= 4096)) throw corrupt(this.o, "an LZW code past the table");
    if (code === this.#next) entry = this.#prev; // the KwKwK case: previous string plus its own first byte
    // Write the string of `entry` (walked backwards through the prefix table; at most 4096 bytes).
    const n = this.#len[entry];
    let c = entry;
    for (let k = n - 1; k >= 0; k--) {
      this.#str[k] = this.#suffix[c];
      c = this.#prefix[c];
    }
    this.#out.bytes(this.#str, 0, n);
    const firstByte = this.#first[entry];
    if (code === this.#next) this.#out.byte(firstByte);
    if (this.#next < 4096) {
      const e = this.#next++;
      this.#prefix[e] = this.#prev;
      this.#suffix[e] = code === e ? firstByte : this.#first[code];
      this.#first[e] = this.#first[this.#prev];
      this.#len[e] = Math.min(4095, this.#len[this.#prev] + 1);
      if (this.#next + this.#early >= 1 << this.#width && this.#width < 12) this.#width++;
    }
    this.#prev = code;
  }

  end(): void {
    if (this.#done) return;
    this.#out.flush();
    this.next.end();
  }
}

/**
 * PackBits (TIFF 32773) and PDF /RunLengthDecode: a header byte n, then n + 1 literal bytes (n < 128) or
 * one byte repeated 257 - n times (n > 128). 128 is a no-op in PackBits and the end in RunLength.
 */
class RunLengthStage implements Sink {
  readonly #out: Emitter;
  #literal = 0; // literal bytes still to copy
  #repeat = 0; // > 0: the next byte is repeated this many times
  #done = false;
  constructor(
    private readonly next: Sink,
    o: StageOptions,
    private readonly endAt128: boolean,
  ) {
    this.#out = new Emitter(next, o);
  }
  push(chunk: Uint8Array): void {
    if (this.#done) throw new OutputComplete();
    let i = 0;
    while (i < chunk.length && !this.#done) {
      if (this.#literal > 0) {
        const n = Math.min(this.#literal, chunk.length - i);
        this.#out.bytes(chunk, i, i + n);
        this.#literal -= n;
        i += n;
      } else if (this.#repeat > 0) {
        this.#out.repeat(chunk[i++], this.#repeat);
        this.#repeat = 0;
      } else {
        const h = chunk[i++];
        if (h < 128) this.#literal = h + 1;
        else if (h > 128) this.#repeat = 257 - h;
        else if (this.endAt128) {
          this.#done = true;
          this.#out.flush();
          this.next.end();
        }
      }
    }
  }
  end(): void {
    if (this.#done) return;
    this.#out.flush();
    this.next.end();
  }
}

const HEX = new Int8Array(256).fill(-1);
for (let i = 0; i < 10; i++) HEX[48 + i] = i;
for (let i = 0; i < 6; i++) HEX[65 + i] = HEX[97 + i] = 10 + i;
const isSpace = (c: number) => c === 0 || c === 9 || c === 10 || c === 12 || c === 13 || c === 32;

class AsciiHexStage implements Sink {
  readonly #out: Emitter;
  #high = -1;
  #done = false;
  constructor(
    private readonly next: Sink,
    private readonly o: StageOptions,
  ) {
    this.#out = new Emitter(next, o);
  }
  push(chunk: Uint8Array): void {
    if (this.#done) throw new OutputComplete();
    for (let i = 0; i < chunk.length && !this.#done; i++) {
      const c = chunk[i];
      if (c === 0x3e) {
        this.end();
        this.#done = true;
      } else if (!isSpace(c)) {
        const v = HEX[c];
        if (v < 0) throw corrupt(this.o, "a character that is not hexadecimal");
        if (this.#high < 0) this.#high = v;
        else {
          this.#out.byte((this.#high << 4) | v);
          this.#high = -1;
        }
      }
    }
  }
  end(): void {
    if (this.#done) return;
    if (this.#high >= 0) this.#out.byte(this.#high << 4); // an odd final digit is followed by an implied 0
    this.#out.flush();
    this.next.end();
  }
}

class Ascii85Stage implements Sink {
  readonly #out: Emitter;
  #group = 0;
  #n = 0;
  #done = false;
  constructor(
    private readonly next: Sink,
    private readonly o: StageOptions,
  ) {
    this.#out = new Emitter(next, o);
  }
  push(chunk: Uint8Array): void {
    if (this.#done) throw new OutputComplete();
    for (let i = 0; i < chunk.length && !this.#done; i++) {
      const c = chunk[i];
      if (isSpace(c)) continue;
      if (c === 0x7e) {
        this.end(); // "~>"
        this.#done = true;
      } else if (c === 0x7a && this.#n === 0) {
        this.#out.repeat(0, 4);
      } else if (c >= 0x21 && c <= 0x75) {
        this.#group = this.#group * 85 + (c - 0x21);
        if (++this.#n === 5) {
          this.#word(4);
          this.#group = 0;
          this.#n = 0;
        }
      } else {
        throw corrupt(this.o, "a character outside ASCII85");
      }
    }
  }
  #word(bytes: number): void {
    const g = this.#group >>> 0;
    if (this.#group > 0xffffffff) throw corrupt(this.o, "an ASCII85 group over 2^32");
    for (let k = 0; k < bytes; k++) this.#out.byte((g >>> (24 - 8 * k)) & 0xff);
  }
  end(): void {
    if (this.#done) return;
    if (this.#n === 1) throw corrupt(this.o, "a final ASCII85 group of one character");
    if (this.#n > 1) {
      const n = this.#n;
      for (let k = n; k < 5; k++) this.#group = this.#group * 85 + 84;
      this.#word(n - 1);
    }
    this.#out.flush();
    this.next.end();
  }
}

/** The filters a chain may hold before its last, image-specific stage (PDF names and abbreviations). */
export type GeneralFilter = "flate" | "lzw" | "runlength" | "packbits" | "asciihex" | "ascii85";

const PDF_NAMES: Record<string, GeneralFilter> = {
  FlateDecode: "flate",
  Fl: "flate",
  LZWDecode: "lzw",
  LZW: "lzw",
  RunLengthDecode: "runlength",
  RL: "runlength",
  ASCIIHexDecode: "asciihex",
  AHx: "asciihex",
  ASCII85Decode: "ascii85",
  A85: "ascii85",
};

/** The general filter a PDF filter name stands for, or undefined for image codecs and unknown names. */
export function pdfFilter(name: string): GeneralFilter | undefined {
  return Object.hasOwn(PDF_NAMES, name) ? PDF_NAMES[name] : undefined;
}

export interface FilterStep {
  filter: GeneralFilter;
  /** LZW: /EarlyChange (default 1). */
  earlyChange?: number;
}

function stage(step: FilterStep, next: Sink, o: StageOptions): Sink {
  switch (step.filter) {
    case "flate":
      return new FlateStage(next, o);
    case "lzw":
      return new LzwStage(next, o, step.earlyChange ?? 1);
    case "runlength":
      return new RunLengthStage(next, o, true);
    case "packbits":
      return new RunLengthStage(next, o, false);
    case "asciihex":
      return new AsciiHexStage(next, o);
    case "ascii85":
      return new Ascii85Stage(next, o);
  }
}

/**
 * Run `data` through the chain into `sink`, every stage's output charged to `o.budget`. A sink that
 * throws OutputComplete ends the run early and quietly. Returns the bytes that reached the sink.
 */
export function decodeChain(data: Uint8Array, steps: readonly FilterStep[], sink: Sink, o: StageOptions): number {
  let delivered = 0;
  const counting: Sink = {
    push(c) {
      delivered += c.length;
      sink.push(c);
    },
    end: () => sink.end(),
  };
  let head: Sink = counting;
  for (let i = steps.length - 1; i >= 0; i--) head = stage(steps[i], head, o);
  try {
    // Fed in slices so a stage's state machine sees realistic chunk boundaries and the budget is checked
    // between them even for stages that write little per byte read.
    for (let at = 0; at < data.length; at += CHUNK) head.push(data.subarray(at, Math.min(data.length, at + CHUNK)));
    head.end();
  } catch (err) {
    if (!(err instanceof OutputComplete)) throw err;
  }
  return delivered;
}

/** Decode into one buffer of at most `maxOut` bytes; more is refused as a bomb before it is kept. */
export function decodeToBytes(data: Uint8Array, steps: readonly FilterStep[], maxOut: number, o: StageOptions): Uint8Array {
  const parts: Uint8Array[] = [];
  let n = 0;
  const push = (c: Uint8Array) => {
    n += c.length;
    if (n > maxOut) {
      throw new VerifyError(
        "too_many_pixels",
        `the ${o.what} decompresses to more than ${maxOut} bytes: refused as a decompression bomb`,
        o.page,
      );
    }
    parts.push(c);
  };
  decodeChain(data, steps, { push, end: () => undefined }, o);
  if (parts.length === 1) return parts[0];
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
