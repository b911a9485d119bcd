/**
 * Hand-built files for the decoder tests: PNGs of every colour type (with all five row filters), zlib
 * bombs, and PDFs whose image streams we write ourselves.
 */
import { PDFDocument } from "pdf-lib";
import { pngChunk as chunk } from "../../src/verify/render";
import { concatBytes } from "../../src/util/bytes";
import { ADAM7 } from "../../src/verify/decode/rows";

export async function zlib(raw: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await new Response(new Blob([raw]).stream().pipeThrough(new CompressionStream("deflate"))).arrayBuffer());
}

export const concat = concatBytes;

export interface PngSpec {
  width: number;
  height: number;
  colourType: 0 | 2 | 3 | 4 | 6;
  bitDepth: 1 | 2 | 4 | 8 | 16;
  /** Sample values of pixel (x, y), one per channel, in the bit depth's range. */
  pixel: (x: number, y: number) => number[];
  palette?: [number, number, number][];
  trns?: Uint8Array;
  interlace?: boolean;
}

const CHANNELS = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 } as const;

/** Rows are filtered with types 0..4 in turn, so the decoder's unfiltering is exercised. */
export async function makePng(s: PngSpec, opts: { idat?: Uint8Array; ihdrSize?: [number, number] } = {}): Promise<Uint8Array> {
  const ch = CHANNELS[s.colourType];
  const bpp = Math.max(1, (ch * s.bitDepth) >> 3);
  const passes = s.interlace ? ADAM7 : [[0, 0, 1, 1]];
  const rows: Uint8Array[] = [];
  let filterType = 0;
  for (const [x0, y0, dx, dy] of passes) {
    const pw = Math.ceil((s.width - x0) / dx);
    const ph = Math.ceil((s.height - y0) / dy);
    if (pw <= 0 || ph <= 0) continue;
    const rowLen = Math.ceil((pw * ch * s.bitDepth) / 8);
    let prev = new Uint8Array(rowLen);
    for (let py = 0; py < ph; py++) {
      const row = new Uint8Array(rowLen);
      let bit = 0;
      for (let px = 0; px < pw; px++) {
        for (const v of s.pixel(x0 + px * dx, y0 + py * dy)) {
          if (s.bitDepth === 16) {
            row[bit >> 3] = v >> 8;
            row[(bit >> 3) + 1] = v & 255;
          } else if (s.bitDepth === 8) row[bit >> 3] = v;
          else row[bit >> 3] |= v << (8 - s.bitDepth - (bit & 7));
          bit += s.bitDepth;
        }
      }
      const t = filterType++ % 5;
      const out = new Uint8Array(rowLen + 1);
      out[0] = t;
      for (let i = 0; i < rowLen; i++) {
        const a = i >= bpp ? row[i - bpp] : 0;
        const b = prev[i];
        const c = i >= bpp ? prev[i - bpp] : 0;
        let pred = 0;
        if (t === 1) pred = a;
        else if (t === 2) pred = b;
        else if (t === 3) pred = (a + b) >> 1;
        else if (t === 4) {
          const p = a + b - c,
            pa = Math.abs(p - a),
            pb = Math.abs(p - b),
            pc = Math.abs(p - c);
          pred = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
        }
        out[i + 1] = (row[i] - pred) & 255;
      }
      rows.push(out);
      prev = row;
    }
  }
  const ihdr = new Uint8Array(13);
  const v = new DataView(ihdr.buffer);
  v.setUint32(0, opts.ihdrSize?.[0] ?? s.width);
  v.setUint32(4, opts.ihdrSize?.[1] ?? s.height);
  ihdr.set([s.bitDepth, s.colourType, 0, 0, s.interlace ? 1 : 0], 8);
  const parts = [new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", ihdr)];
  if (s.palette) parts.push(chunk("PLTE", new Uint8Array(s.palette.flat())));
  if (s.trns) parts.push(chunk("tRNS", s.trns));
  parts.push(chunk("IDAT", opts.idat ?? (await zlib(concat(rows)))));
  parts.push(chunk("IEND", new Uint8Array(0)));
  return concat(parts);
}

export interface PdfImageSpec {
  width: number;
  height: number;
  /** The stream's bytes as they stand in the file. */
  data: Uint8Array;
  dict: Record<string, unknown>;
}

/** A PDF whose pages each carry one image XObject built from raw dictionary entries (or none). */
export async function pdfWithImages(pages: (PdfImageSpec | null)[]): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  for (const spec of pages) {
    const page = doc.addPage([595, 842]);
    if (!spec) continue;
    const stream = doc.context.stream(spec.data, {
      Type: "XObject",
      Subtype: "Image",
      Width: spec.width,
      Height: spec.height,
      ...spec.dict,
    } as never);
    page.node.newXObject("Im", doc.context.register(stream));
  }
  return doc.save({ useObjectStreams: false });
}
