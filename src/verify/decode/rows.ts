import { VerifyError, type Raster } from "../types";

/** How the samples of one row become grey. */
export interface SampleLayout {
  width: number;
  height: number;
  bitsPerComponent: number; // 1, 2, 4, 8 or 16
  channels: number; // samples per pixel in the stream
  /** grey: channel 0; rgb: 0..2; cmyk: 0..3; with alpha the last channel is alpha (composited onto white). */
  model: "grey" | "rgb" | "cmyk" | "indexed";
  alpha?: boolean;
  /** Indexed colour: sample value -> grey (transparency already composited). */
  lut?: Uint8Array;
  /** PDF /Decode [1 0]: sample 0 is white. */
  invert?: boolean;
  /** Each row starts with a PNG filter byte (PNG, and PDF /Predictor >= 10). */
  pngFilters: boolean;
  /** PNG: the single transparent grey or RGB value (tRNS), in sample units. */
  transparent?: number[];
  /** Adam7 interlace (PNG only). */
  adam7?: boolean;
}

interface Pass {
  x0: number;
  y0: number;
  dx: number;
  dy: number;
  w: number;
  h: number;
}

/** Adam7 passes: x0, y0, dx, dy. */
export const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
];

/** Bytes of decompressed data the layout needs: the bound an inflater may not exceed. */
export function expectedBytes(l: SampleLayout): number {
  let total = 0;
  for (const p of passes(l)) {
    if (p.w === 0 || p.h === 0) continue;
    total += (rowBytes(l, p.w) + (l.pngFilters ? 1 : 0)) * p.h;
  }
  return total;
}

function rowBytes(l: SampleLayout, w: number): number {
  return Math.ceil((w * l.channels * l.bitsPerComponent) / 8);
}

function passes(l: SampleLayout): Pass[] {
  if (!l.adam7) return [{ x0: 0, y0: 0, dx: 1, dy: 1, w: l.width, h: l.height }];
  return ADAM7.map(([x0, y0, dx, dy]) => ({
    x0,
    y0,
    dx,
    dy,
    w: Math.max(0, Math.ceil((l.width - x0) / dx)),
    h: Math.max(0, Math.ceil((l.height - y0) / dy)),
  }));
}

/**
 * Consumes a decompressed sample stream in arbitrary chunks and writes grey pixels straight into the page
 * raster. Only two rows of samples are ever held besides the page itself.
 */
export class RowDecoder {
  readonly raster: Raster;
  #l: SampleLayout;
  #passes: Pass[];
  #pass = 0;
  #row = 0;
  #bpp: number;
  #cur: Uint8Array;
  #prev: Uint8Array;
  #fill = 0;
  #rowLen = 0;
  #done = false;
  #rowsDone = 0;

  constructor(layout: SampleLayout) {
    this.#l = layout;
    this.raster = { width: layout.width, height: layout.height, data: new Uint8Array(layout.width * layout.height).fill(255) };
    this.#passes = passes(layout).filter((p) => p.w > 0 && p.h > 0);
    this.#bpp = Math.max(1, (layout.channels * layout.bitsPerComponent) >> 3);
    const maxRow = rowBytes(layout, layout.width) + (layout.pngFilters ? 1 : 0);
    this.#cur = new Uint8Array(maxRow);
    this.#prev = new Uint8Array(maxRow);
    this.#startPass();
  }

  get complete(): boolean {
    return this.#done;
  }

  /** Rows written so far, over all passes. */
  get rowsDone(): number {
    return this.#rowsDone;
  }

  #startPass(): void {
    if (this.#pass >= this.#passes.length) {
      this.#done = true;
      return;
    }
    this.#rowLen = rowBytes(this.#l, this.#passes[this.#pass].w) + (this.#l.pngFilters ? 1 : 0);
    this.#prev.fill(0);
    this.#row = 0;
  }

  push(chunk: Uint8Array): void {
    let o = 0;
    while (o < chunk.length && !this.#done) {
      const take = Math.min(this.#rowLen - this.#fill, chunk.length - o);
      this.#cur.set(chunk.subarray(o, o + take), this.#fill);
      this.#fill += take;
      o += take;
      if (this.#fill === this.#rowLen) {
        this.#emitRow();
        this.#fill = 0;
      }
    }
  }

  #emitRow(): void {
    const l = this.#l;
    const p = this.#passes[this.#pass];
    let samples: Uint8Array;
    if (l.pngFilters) {
      unfilter(this.#cur, this.#prev, this.#rowLen, this.#bpp);
      samples = this.#cur.subarray(1, this.#rowLen);
    } else {
      samples = this.#cur.subarray(0, this.#rowLen);
    }
    writeGrey(l, samples, p.w, this.raster.data, (p.y0 + this.#row * p.dy) * l.width + p.x0, p.dx);
    const t = this.#prev;
    this.#prev = this.#cur;
    this.#cur = t;
    this.#row++;
    this.#rowsDone++;
    if (this.#row >= p.h) {
      this.#pass++;
      this.#startPass();
    }
  }
}

/** Undo one row's PNG filter in place (row[0] is the filter type). */
function unfilter(row: Uint8Array, prev: Uint8Array, len: number, bpp: number): void {
  const type = row[0];
  switch (type) {
    case 0:
      return;
    case 1:
      for (let i = 1 + bpp; i < len; i++) row[i] = (row[i] + row[i - bpp]) & 255;
      return;
    case 2:
      for (let i = 1; i < len; i++) row[i] = (row[i] + prev[i]) & 255;
      return;
    case 3:
      for (let i = 1; i < len; i++) row[i] = (row[i] + (((i > bpp ? row[i - bpp] : 0) + prev[i]) >> 1)) & 255;
      return;
    case 4:
      for (let i = 1; i < len; i++) {
        const a = i > bpp ? row[i - bpp] : 0;
        const b = prev[i];
        const c = i > bpp ? prev[i - bpp] : 0;
        const pa = Math.abs(b - c);
        const pb = Math.abs(a - c);
        const pc = Math.abs(a + b - 2 * c);
        row[i] = (row[i] + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c)) & 255;
      }
      return;
    default:
      throw new VerifyError("corrupt_file", `a row uses the unknown PNG filter type ${type}`);
  }
}

/** Samples of one row -> grey pixels at out[start + k*step]. */
function writeGrey(l: SampleLayout, s: Uint8Array, w: number, out: Uint8Array, start: number, step: number): void {
  const bits = l.bitsPerComponent;
  const ch = l.channels;
  const max = (1 << Math.min(bits, 8)) - 1;
  const scale = 255 / max;
  const tr = l.transparent;
  let o = start;
  if (bits < 8) {
    // Sub-byte samples only occur with one channel (grey or indexed).
    const perByte = 8 / bits;
    for (let x = 0; x < w; x++, o += step) {
      const byte = s[(x / perByte) | 0];
      const shift = 8 - bits * ((x % perByte) + 1);
      const v = (byte >> shift) & max;
      let g: number;
      if (l.model === "indexed") g = l.lut ? (l.lut[v] ?? 0) : 0;
      else if (tr && tr[0] === v) g = 255;
      else g = Math.round(v * scale);
      out[o] = l.invert ? 255 - g : g;
    }
    return;
  }
  const B = bits >> 3; // 1 or 2 bytes per sample; for 16 bits the high byte is enough for grey
  const px = ch * B;
  for (let x = 0, i = 0; x < w; x++, i += px, o += step) {
    let g: number;
    if (l.model === "indexed") {
      g = l.lut ? (l.lut[s[i]] ?? 0) : 0;
    } else if (l.model === "grey") {
      g = s[i];
      if (tr && (B === 1 ? s[i] : (s[i] << 8) | s[i + 1]) === tr[0]) g = 255;
    } else if (l.model === "rgb") {
      g = (s[i] * 77 + s[i + B] * 150 + s[i + 2 * B] * 29 + 128) >> 8;
      if (tr && B === 1 && s[i] === tr[0] && s[i + 1] === tr[1] && s[i + 2] === tr[2]) g = 255;
    } else {
      const k = s[i + 3 * B];
      g = 255 - Math.min(255, ((s[i] * 77 + s[i + B] * 150 + s[i + 2 * B] * 29) >> 8) + k);
    }
    if (l.invert) g = 255 - g;
    if (l.alpha) {
      const a = s[i + (ch - 1) * B];
      if (a !== 255) g = (g * a + 255 * (255 - a) + 127) / 255;
    }
    out[o] = g;
  }
}
