/**
 * The seed corpus: small valid files of every format and variant the decoders accept, all made by the
 * synthetic generator in test/fixtures (and the test encoders beside the decoder tests). Nothing comes
 * from a data set. Small on purpose: a mutated case should cost milliseconds, so a run has many of them.
 */
import { ascii85, asciiHex } from "../../test/fixtures/filters";
import { PDFDocument } from "pdf-lib";
import type { Raster } from "../../src/verify/types";
import { encodeJpeg, encodePng, makeWriter, renderSignature, toPdf, toTiff } from "../../test/fixtures/generator";
import { makePng } from "../../test/unit/decode-files";
import { encodeG4 } from "../../test/unit/g4-encode";
import { encodeProgressiveJpeg } from "../../test/unit/jpeg-progressive-encode";
import { ascii, concat } from "../core/bytes";
import type { Seed } from "../core/types";
import { deflate } from "../core/zlib";
import { bilevelTiff, g4StripTiff, stripTiff, tiledTiff } from "./tiff";

interface PdfImage {
  width: number;
  height: number;
  data: Uint8Array;
  dict: Record<string, unknown>;
}

/** One image XObject per page, written with or without object streams (and so a classic or stream xref). */
async function pdfOf(pages: PdfImage[], objectStreams: boolean): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  for (const spec of pages) {
    const page = doc.addPage([300, 200]);
    const stream = doc.context.stream(spec.data, {
      Type: "XObject",
      Subtype: "Image",
      Width: spec.width,
      Height: spec.height,
      ...spec.dict,
    } as never);
    page.node.newXObject("Im", doc.context.register(stream));
  }
  return doc.save({ useObjectStreams: objectStreams });
}

export const pdfEncoders = { hex: asciiHex, ascii85 };

function crop(r: Raster, w: number, h: number): Raster {
  const data = new Uint8Array(w * h);
  for (let y = 0; y < h; y++) data.set(r.data.subarray(y * r.width, y * r.width + w), y * w);
  return { width: w, height: h, data };
}

let cached: Promise<Seed[]> | null = null;

/** The corpus, built once per process (about a second). */
export function buildSeeds(): Promise<Seed[]> {
  cached ??= make();
  return cached;
}

async function make(): Promise<Seed[]> {
  const sig = renderSignature(makeWriter(7), { variant: 1, height: 64 });
  const small = crop(sig, Math.min(96, sig.width), 48);
  const seeds: Seed[] = [];
  const add = (format: Seed["format"], kind: string, bytes: Uint8Array) => seeds.push({ format, kind, bytes });

  // PNG: the encoder clients use (photon) and every colour type, bit depth and interlacing.
  add("png", "png/photon-rgba", encodePng(sig));
  const level = (x: number, y: number) => (x * 7 + y * 13) & 255;
  add("png", "png/grey8", await makePng({ width: 40, height: 30, colourType: 0, bitDepth: 8, pixel: (x, y) => [level(x, y)] }));
  add(
    "png",
    "png/grey1-interlaced",
    await makePng({ width: 33, height: 17, colourType: 0, bitDepth: 1, interlace: true, pixel: (x, y) => [(x ^ y) & 1] }),
  );
  add(
    "png",
    "png/palette4-trns",
    await makePng({
      width: 21,
      height: 9,
      colourType: 3,
      bitDepth: 4,
      palette: [
        [0, 0, 0],
        [255, 255, 255],
        [200, 10, 10],
      ],
      trns: new Uint8Array([255, 128]),
      pixel: (x, y) => [(x + y) % 3],
    }),
  );
  add(
    "png",
    "png/rgb16-interlaced",
    await makePng({ width: 19, height: 11, colourType: 2, bitDepth: 16, interlace: true, pixel: (x, y) => [x * 3000, y * 5000, 65535] }),
  );
  add("png", "png/grey-alpha8", await makePng({ width: 16, height: 16, colourType: 4, bitDepth: 8, pixel: (x, y) => [level(x, y), 200] }));

  // JPEG: baseline colour (photon) and progressive grey (DC successive approximation, two AC bands).
  add("jpeg", "jpeg/baseline", encodeJpeg(sig, 80));
  add("jpeg", "jpeg/baseline-small", encodeJpeg(small, 60));
  add("jpeg", "jpeg/progressive", encodeProgressiveJpeg(sig));
  add("jpeg", "jpeg/progressive-small", encodeProgressiveJpeg(small));

  // TIFF: strips in each compression, tiles, Group 4 in one strip and in several, bilevel, multi-page.
  add("tiff", "tiff/uncompressed-be", toTiff([small]));
  add("tiff", "tiff/uncompressed-strips", stripTiff(small, 1, 8));
  add("tiff", "tiff/lzw", stripTiff(small, 5, 16));
  add("tiff", "tiff/packbits", stripTiff(small, 32773, 16));
  add("tiff", "tiff/deflate", stripTiff(small, 8, 16));
  add("tiff", "tiff/tiles", tiledTiff(small, 1));
  add("tiff", "tiff/tiles-lzw", tiledTiff(small, 5));
  add("tiff", "tiff/g4", g4StripTiff(sig, sig.height));
  add("tiff", "tiff/g4-strips", g4StripTiff(sig, 16, 2));
  add("tiff", "tiff/bilevel", bilevelTiff(small));

  // PDF: pdf-lib's own output (object streams and an xref stream), classic xref tables, and image
  // streams in each filter the decoder reads, including a Flate stage before DCT.
  const jpeg = encodeJpeg(small, 60);
  add("pdf", "pdf/jpeg-objstm", await toPdf([{ jpeg, widthPt: 200, heightPt: 100 }]));
  add("pdf", "pdf/png-objstm", await toPdf([{ png: encodePng(small), widthPt: 200, heightPt: 100 }, {}]));
  const grey = { BitsPerComponent: 8, ColorSpace: "DeviceGray" };
  add(
    "pdf",
    "pdf/flate-xref",
    await pdfOf([{ width: small.width, height: small.height, data: deflate(small.data), dict: { ...grey, Filter: "FlateDecode" } }], false),
  );
  add(
    "pdf",
    "pdf/flate-dct-chain",
    await pdfOf(
      [{ width: small.width, height: small.height, data: deflate(jpeg), dict: { ...grey, Filter: ["FlateDecode", "DCTDecode"] } }],
      true,
    ),
  );
  const g4 = encodeG4((x, y) => sig.data[y * sig.width + x] < 128, sig.width, sig.height);
  add(
    "pdf",
    "pdf/ccitt-g4",
    await pdfOf(
      [
        {
          width: sig.width,
          height: sig.height,
          data: g4,
          dict: {
            BitsPerComponent: 1,
            ColorSpace: "DeviceGray",
            Filter: "CCITTFaxDecode",
            DecodeParms: { K: -1, Columns: sig.width, Rows: sig.height },
          },
        },
      ],
      false,
    ),
  );
  add(
    "pdf",
    "pdf/hex-a85-chain",
    await pdfOf(
      [
        {
          width: 8,
          height: 4,
          data: asciiHex(ascii85(deflate(small.data.subarray(0, 32)))),
          dict: { ...grey, Filter: ["ASCIIHexDecode", "ASCII85Decode", "FlateDecode"] },
        },
      ],
      true,
    ),
  );
  return seeds;
}

/** A readable name for the corpus, for the report. */
export function describeSeeds(seeds: Seed[]): string {
  return seeds.map((s) => `${s.kind} (${s.bytes.length} B)`).join(", ");
}

export { concat };
