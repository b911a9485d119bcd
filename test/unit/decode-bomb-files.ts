/**
 * Hostile and ordinary files for the decompression-bomb tests (the filter encoders are in
 * test/fixtures/filters.ts): a TIFF writer that takes any compression and strip table (lies included), and a
 * way to put a raw object into a PDF pdf-lib wrote.
 */
import { concatBytes } from "../../src/util/bytes";

export { ascii85, asciiHex, lzwEncode, packBits } from "../fixtures/filters";

export interface TiffSpec {
  width: number;
  height: number;
  compression: number;
  /** The strips as stored (already compressed). */
  strips: Uint8Array[];
  rowsPerStrip?: number;
  bitsPerSample?: number;
  samplesPerPixel?: number;
  photometric?: number;
  predictor?: number;
  /** Declared StripByteCounts (default: the real lengths). A lie is the point of some tests. */
  byteCounts?: number[];
  /** Store the segments as tiles of this size instead of strips. */
  tile?: [number, number];
  /** JPEGTables (347): tables shared by every JPEG strip. */
  jpegTables?: Uint8Array;
}

/** A one-page little-endian TIFF. */
export function tiffWith(s: TiffSpec): Uint8Array {
  const n = s.strips.length;
  const tags: [number, number, number[]][] = [
    [256, 4, [s.width]],
    [257, 4, [s.height]],
    [258, 3, [s.bitsPerSample ?? 8]],
    [259, 3, [s.compression]],
    [262, 3, [s.photometric ?? 1]],
    [277, 3, [s.samplesPerPixel ?? 1]],
  ];
  if (s.predictor) tags.push([317, 3, [s.predictor]]);
  if (s.tile) tags.push([322, 4, [s.tile[0]]], [323, 4, [s.tile[1]]]);
  else tags.push([278, 4, [s.rowsPerStrip ?? s.height]]);
  const offsetsTag = s.tile ? 324 : 273;
  const countsTag = s.tile ? 325 : 279;
  tags.push([offsetsTag, 4, new Array(n).fill(0)], [countsTag, 4, s.byteCounts ?? s.strips.map((x) => x.length)]);
  // JPEGTables is bytes (type 7): stored after the arrays, its entry patched below.
  if (s.jpegTables) tags.push([347, 7, [0]]);
  tags.sort((a, b) => a[0] - b[0]);
  const ifdSize = 2 + tags.length * 12 + 4;
  const arrays = tags.filter(([tag, , v]) => v.length > 1 && tag !== 347).reduce((k, [, , v]) => k + v.length * 4, 0);
  const tablesAt = 8 + ifdSize + arrays;
  const dataStart = tablesAt + (s.jpegTables?.length ?? 0);
  const offsets: number[] = [];
  let at = dataStart;
  for (const strip of s.strips) {
    offsets.push(at);
    at += strip.length;
  }
  const out = new Uint8Array(at);
  const v = new DataView(out.buffer);
  out.set([0x49, 0x49, 0x2a, 0]);
  v.setUint32(4, 8, true);
  v.setUint16(8, tags.length, true);
  let extra = 8 + ifdSize;
  tags.forEach(([tag, type, values], i) => {
    const vals = tag === offsetsTag ? offsets : values;
    const e = 10 + i * 12;
    v.setUint16(e, tag, true);
    v.setUint16(e + 2, type, true);
    v.setUint32(e + 4, vals.length, true);
    if (tag === 347 && s.jpegTables) {
      v.setUint32(e + 4, s.jpegTables.length, true);
      v.setUint32(e + 8, tablesAt, true);
      out.set(s.jpegTables, tablesAt);
    } else if (vals.length === 1) {
      if (type === 3) v.setUint16(e + 8, vals[0], true);
      else v.setUint32(e + 8, vals[0] >>> 0, true);
    } else {
      v.setUint32(e + 8, extra, true);
      for (const x of vals) {
        v.setUint32(extra, x >>> 0, true);
        extra += 4;
      }
    }
  });
  v.setUint32(10 + tags.length * 12, 0, true);
  for (let i = 0; i < s.strips.length; i++) out.set(s.strips[i], offsets[i]);
  return out;
}

/** Rows of a grey test card: a gradient with a dark diagonal band (easy to check after decoding). */
export function greyCard(width: number, height: number): Uint8Array {
  const px = new Uint8Array(width * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) px[y * width + x] = Math.abs(x - y) < 4 ? 10 : 80 + ((x * 3 + y) % 170);
  }
  return px;
}

const enc = new TextEncoder();

/** Put raw objects into a PDF that pdf-lib wrote, before its first object (pdf-lib parses them in order). */
export function withObjects(pdf: Uint8Array, ...objects: (string | Uint8Array)[]): Uint8Array {
  const text = new TextDecoder("latin1").decode(pdf.subarray(0, 200));
  const at = text.search(/\d+ 0 obj/);
  const parts = objects.map((o) => (typeof o === "string" ? enc.encode(o) : o));
  return concatBytes([pdf.subarray(0, at), ...parts, pdf.subarray(at)]);
}

/** `n 0 obj <<dict /Length L>> stream ... endstream endobj`, with the stream bytes as given. */
export function streamObject(n: number, dict: string, data: Uint8Array): Uint8Array {
  return concatBytes([enc.encode(`${n} 0 obj\n<< ${dict} /Length ${data.length} >>\nstream\n`), data, enc.encode("\nendstream\nendobj\n")]);
}

/** Pack LZW codes by hand (MSB-first, at the widths given or 9 bits). */
export function lzwCodes(codes: number[], width = 9): Uint8Array {
  const out: number[] = [];
  let acc = 0;
  let bits = 0;
  for (const c of codes) {
    acc = (acc << width) | c;
    bits += width;
    while (bits >= 8) {
      bits -= 8;
      out.push((acc >>> bits) & 255);
    }
    acc &= (1 << bits) - 1;
  }
  if (bits > 0) out.push((acc << (8 - bits)) & 255);
  return new Uint8Array(out);
}

/** A PDF whose page tree has `levels` levels, each node naming the next node twice (2^levels leaves seen). */
export function pageTreeDag(levels: number): Uint8Array {
  const objs: string[] = ["1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n"];
  for (let i = 0; i < levels; i++) {
    const n = 2 + i;
    objs.push(`${n} 0 obj\n<< /Type /Pages /Kids [${n + 1} 0 R ${n + 1} 0 R] /Count ${2 ** Math.min(30, levels - i)} >>\nendobj\n`);
  }
  objs.push(`${2 + levels} 0 obj\n<< /Type /Page /MediaBox [0 0 10 10] >>\nendobj\n`);
  return new TextEncoder().encode(`%PDF-1.7\n${objs.join("")}trailer\n<< /Root 1 0 R /Size ${3 + levels} >>\n%%EOF\n`);
}

/** A one-page PDF whose page shows a form XObject that names itself `fanOut` times in its own resources. */
export async function formFanOut(fanOut: number): Promise<Uint8Array> {
  const { PDFDocument } = await import("pdf-lib");
  const doc = await PDFDocument.create();
  const page = doc.addPage([100, 100]);
  const formRef = doc.context.nextRef();
  const names: Record<string, unknown> = {};
  for (let i = 0; i < fanOut; i++) names[`F${i}`] = formRef;
  const form = doc.context.stream(new Uint8Array(0), {
    Type: "XObject",
    Subtype: "Form",
    BBox: [0, 0, 1, 1],
    Resources: { XObject: names },
  } as never);
  doc.context.assign(formRef, form);
  page.node.newXObject("F", formRef);
  return doc.save();
}
