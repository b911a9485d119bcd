/**
 * CCITT Group 4 (T.6) decoding straight to grey, for TIFF compression 4 and PDF /CCITTFaxDecode (K < 0).
 *
 * utif2 has a G4 decoder, but it grows its line buffer with every run it reads, however long: a stream of
 * make-up codes is a memory bomb. This one clamps every run to the line, stops at the declared height, and
 * writes one byte per pixel. The run-length code tables (ITU-T T.4, the same for G3 and G4) are taken from
 * utif2's, so there is one copy of them in the bundle.
 */
import UTIF from "utif2";
import { VerifyError, type Raster } from "../types";

type CodeTable = Map<number, number>; // (length << 16 | code) -> run length

interface Tables {
  white: CodeTable;
  black: CodeTable;
  /** run length -> code string, for encoders (tests) */
  whiteCodes: Map<number, string>;
  blackCodes: Map<number, string>;
}

let tables: Tables | undefined;

export function g4Tables(): Tables {
  if (tables) return tables;
  const lens = (UTIF as unknown as { decode: { _lens: [Record<string, number>, Record<string, number>] } }).decode._lens;
  const build = (src: Record<string, number>) => {
    const t: CodeTable = new Map();
    const codes = new Map<number, string>();
    for (const [bits, run] of Object.entries(src)) {
      t.set((bits.length << 16) | parseInt(bits, 2), run);
      codes.set(run, bits);
    }
    return { t, codes };
  };
  const w = build(lens[0]);
  const b = build(lens[1]);
  tables = { white: w.t, black: b.t, whiteCodes: w.codes, blackCodes: b.codes };
  return tables;
}

class Bits {
  #b: Uint8Array;
  #pos = 0;
  #end: number;
  #reverse: boolean;
  constructor(b: Uint8Array, reverse: boolean) {
    this.#b = b;
    this.#end = b.length * 8;
    this.#reverse = reverse;
  }
  get left(): number {
    return this.#end - this.#pos;
  }
  bit(): number {
    if (this.#pos >= this.#end) throw new EndOfData();
    const byte = this.#b[this.#pos >> 3];
    const k = this.#pos & 7;
    this.#pos++;
    return this.#reverse ? (byte >> k) & 1 : (byte >> (7 - k)) & 1;
  }
  peek(n: number): number {
    let v = 0;
    for (let i = 0; i < n; i++) {
      const p = this.#pos + i;
      if (p >= this.#end) return -1;
      const byte = this.#b[p >> 3];
      v = (v << 1) | (this.#reverse ? (byte >> (p & 7)) & 1 : (byte >> (7 - (p & 7))) & 1);
    }
    return v;
  }
  skip(n: number): void {
    this.#pos += n;
  }
  align(): void {
    this.#pos = (this.#pos + 7) & ~7;
  }
}

class EndOfData extends Error {}

enum Mode {
  Pass,
  Horizontal,
  Vertical,
  EOL,
}

/** Mode codes: 1 V0, 011 VR1, 010 VL1, 001 H, 0001 P, 000011 VR2, 000010 VL2, 0000011 VR3, 0000010 VL3. */
function readMode(bits: Bits): { mode: Mode; delta: number } {
  if (bits.bit()) return { mode: Mode.Vertical, delta: 0 };
  if (bits.bit()) return { mode: Mode.Vertical, delta: bits.bit() ? 1 : -1 };
  if (bits.bit()) return { mode: Mode.Horizontal, delta: 0 };
  if (bits.bit()) return { mode: Mode.Pass, delta: 0 };
  if (bits.bit()) return { mode: Mode.Vertical, delta: bits.bit() ? 2 : -2 };
  if (bits.bit()) return { mode: Mode.Vertical, delta: bits.bit() ? 3 : -3 };
  // Six zeros: an EOL (000000000001) or end-of-block, or garbage.
  return { mode: Mode.EOL, delta: 0 };
}

function readRun(bits: Bits, table: CodeTable, width: number): number {
  let total = 0;
  for (;;) {
    let code = 0;
    let len = 0;
    let run: number | undefined;
    while (len < 14) {
      code = (code << 1) | bits.bit();
      len++;
      run = table.get((len << 16) | code);
      if (run !== undefined) break;
    }
    if (run === undefined) throw new VerifyError("corrupt_file", "the CCITT Group 4 data holds an invalid run code");
    total += run;
    if (total > width) throw new VerifyError("corrupt_file", "a CCITT Group 4 run is longer than the line");
    if (run < 64) return total;
  }
}

export interface G4Options {
  width: number;
  height: number;
  /** TIFF FillOrder 2: bits run from the least significant. */
  lsbFirst?: boolean;
  /** PDF EncodedByteAlign: every line starts on a byte boundary. */
  byteAlign?: boolean;
  /** true: pixels coded as white come out black (TIFF BlackIsZero, PDF BlackIs1 without a Decode swap). */
  invert?: boolean;
}

/**
 * Decode rows until the declared height or the end of the data. Rows the data never reaches stay white;
 * a stream that ends before half the page is refused as truncated.
 */
export function decodeG4(data: Uint8Array, o: G4Options): Raster {
  const { width, height } = o;
  const t = g4Tables();
  const out = new Uint8Array(width * height).fill(o.invert ? 0 : 255);
  const ink = o.invert ? 255 : 0;
  const bits = new Bits(data, o.lsbFirst ?? false);
  // Changing elements of the reference and the coding line, each closed by two sentinels at `width`.
  let ref = new Int32Array(width + 4);
  let cur = new Int32Array(width + 4);
  ref[0] = width;
  ref[1] = width;
  let refLen = 0;
  let row = 0;
  try {
    for (; row < height; row++) {
      if (o.byteAlign) bits.align();
      let curLen = 0;
      let a0 = -1;
      let white = true;
      let r = 0; // index into ref, kept monotone
      while (a0 < width) {
        // b1: the first change on the reference line right of a0 whose new colour is the opposite of a0's:
        // changes at even indices turn to black, at odd indices back to white.
        while (r < refLen && (ref[r] <= a0 || (r & 1) !== (white ? 0 : 1))) r++;
        const b1 = r < refLen ? ref[r] : width;
        const b2 = r + 1 < refLen ? ref[r + 1] : width;
        const { mode, delta } = readMode(bits);
        const start = a0 < 0 ? 0 : a0;
        if (mode === Mode.Pass) {
          if (!white) fill(out, row * width + start, b2 - start, ink);
          a0 = b2;
        } else if (mode === Mode.Horizontal) {
          const run1 = readRun(bits, white ? t.white : t.black, width);
          const run2 = readRun(bits, white ? t.black : t.white, width);
          const a1 = Math.min(width, start + run1);
          const a2 = Math.min(width, a1 + run2);
          if (white) fill(out, row * width + a1, a2 - a1, ink);
          else fill(out, row * width + start, a1 - start, ink);
          cur[curLen++] = a1;
          cur[curLen++] = a2;
          a0 = a2;
        } else if (mode === Mode.Vertical) {
          const a1 = b1 + delta;
          if (a1 < start || a1 > width) throw new VerifyError("corrupt_file", "the CCITT Group 4 data is inconsistent");
          if (!white) fill(out, row * width + start, a1 - start, ink);
          cur[curLen++] = a1;
          a0 = a1;
          white = !white;
        } else {
          // End of block: the remaining rows were not coded.
          throw new EndOfData();
        }
        if (r > 0) r--; // b1 of the next step may sit just before the current one
        if (curLen > width + 1) throw new VerifyError("corrupt_file", "the CCITT Group 4 line has too many changes");
      }
      const swap = ref;
      ref = cur;
      cur = swap;
      refLen = curLen;
      ref[refLen] = width;
      ref[refLen + 1] = width;
    }
  } catch (err) {
    if (!(err instanceof EndOfData)) throw err;
    if (row < height / 2) throw new VerifyError("corrupt_file", `the CCITT Group 4 data ends after ${row} of ${height} rows`);
  }
  return { width, height, data: out };
}

function fill(out: Uint8Array, from: number, n: number, v: number): void {
  if (n > 0) out.fill(v, from, from + n);
}
