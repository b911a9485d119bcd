import { PDFHexString } from "pdf-lib";
import UTIF from "utif2";
import { describe, expect, it } from "vitest";
import { decodeDocument, decodePage, openDocument, pageCount, sniffFormat } from "../../src/verify/decode";
import { VerifyError, type Raster } from "../../src/verify/types";
import { encodeJpeg, encodePng, makeWriter, renderForm, renderSignature, signatureBoxes, toPdf, toTiff } from "../fixtures/generator";
import { concat, pdfWithImages, zlib } from "./decode-files";
import { bilevel, encodeG4, g4Tiff } from "./g4-encode";

/**
 * The decoder's refusal. How early it refuses is asserted on what it says, not on a clock: a header
 * check names the declared dimensions ("declares WxH pixels", before any pixel memory exists), and a
 * bounded inflate names the declared size it stopped at.
 */
async function failure(p: Promise<unknown>): Promise<{ error: VerifyError }> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(VerifyError);
    return { error: err as VerifyError };
  }
  throw new Error("expected the decoder to refuse the file");
}

function flat(value: number, w = 40, h = 30): Raster {
  return { width: w, height: h, data: new Uint8Array(w * h).fill(value) };
}

function mismatches(r: Raster, black: (x: number, y: number) => boolean): number {
  let bad = 0;
  for (let y = 0; y < r.height; y++) for (let x = 0; x < r.width; x++) if (r.data[y * r.width + x] < 128 !== black(x, y)) bad++;
  return bad;
}

const signature = renderSignature(makeWriter(11), { height: 120 });

describe("TIFF", () => {
  it("counts and decodes the pages of a multi-page TIFF, each its own", async () => {
    const tiff = toTiff([flat(10), flat(120, 50, 20), flat(240, 30, 60)]);
    expect(sniffFormat(tiff)).toBe("tiff");
    expect(await pageCount(tiff)).toBe(3);
    const pages = await decodeDocument(tiff);
    expect(pages.map((p) => [p.width, p.height, p.data[5]])).toEqual([
      [40, 30, 10],
      [50, 20, 120],
      [30, 60, 240],
    ]);
    expect((await failure(decodePage(tiff, 3))).error.code).toBe("page_out_of_range");
    expect((await failure(decodeDocument(tiff, { maxPages: 2 }))).error.code).toBe("too_many_pages");
  });

  it("decodes CCITT Group 4 pages exactly (cross-checked with utif2's decoder)", async () => {
    const black = bilevel(signature);
    const g4 = encodeG4(black, signature.width, signature.height);
    const tiff = g4Tiff(g4, signature.width, signature.height, 2);
    expect(await pageCount(tiff)).toBe(2);
    const page = await decodePage(tiff, 1);
    expect([page.width, page.height]).toEqual([signature.width, signature.height]);
    expect(mismatches(page, black)).toBe(0);
    // The reference reading: utif2 decodes our encoder's stream to the same pixels.
    const ifd = UTIF.decode(tiff.slice().buffer)[0];
    UTIF.decodeImage(tiff.slice().buffer, ifd);
    const rgba = UTIF.toRGBA8(ifd);
    let disagree = 0;
    for (let i = 0; i < page.data.length; i++) if (rgba[i * 4] < 128 !== page.data[i] < 128) disagree++;
    expect(disagree).toBe(0);
  });

  it("refuses a G4 stream of endless make-up codes at once (the run exceeds the line)", async () => {
    // Horizontal mode, then 20,000 white make-up codes of 2560 px each.
    const bits = "001" + "000000011111".repeat(20_000);
    const g4 = new Uint8Array(Math.ceil(bits.length / 8));
    for (let i = 0; i < bits.length; i++) if (bits[i] === "1") g4[i >> 3] |= 0x80 >> (i & 7);
    const { error } = await failure(decodePage(g4Tiff(g4, 1000, 1000), 0));
    expect(error.code).toBe("corrupt_file");
    // Refused on the first run that overflows the 1000 px line, not after walking 20,000 codes.
    expect(error.message).toBe("a CCITT Group 4 run is longer than the line");
  });

  it("refuses declared sizes over the bound, looping directory chains and truncation with typed errors", async () => {
    const tiff = toTiff([flat(10)]);
    const big = tiff.slice();
    // toTiff writes big-endian IFDs whose width and height are LONGs; find the width entry (tag 256).
    const v = new DataView(big.buffer);
    const ifd = v.getUint32(4);
    for (let i = 0; i < v.getUint16(ifd); i++) {
      const e = ifd + 2 + i * 12;
      const tag = v.getUint16(e);
      if (tag === 256 || tag === 257) {
        if (v.getUint16(e + 2) === 3) v.setUint16(e + 8, 60000);
        else v.setUint32(e + 8, 60000);
      }
    }
    const big1 = await failure(decodePage(big, 0));
    expect(big1.error.code).toBe("too_many_pixels");
    expect(big1.error.message).toContain("declares 60000x60000 pixels");

    const loop = tiff.slice();
    const lv = new DataView(loop.buffer);
    const first = lv.getUint32(4);
    lv.setUint32(first + 2 + lv.getUint16(first) * 12, first); // next IFD = itself
    expect((await failure(pageCount(loop))).error.code).toBe("corrupt_file");

    expect((await failure(decodePage(tiff.slice(0, 20), 0))).error.code).toBe("corrupt_file");
    const g4 = encodeG4(bilevel(signature), signature.width, signature.height);
    const cut = g4Tiff(g4.slice(0, 40), signature.width, signature.height);
    expect((await failure(decodePage(cut, 0))).error.code).toBe("corrupt_file");
  });
});

describe("PDF", () => {
  const form = renderForm({
    signatures: [{ writer: makeWriter(3), box: signatureBoxes(620, 877, 1)[0] }],
    width: 620,
    height: 877,
    seed: 2,
  });

  it("decodes JPEG and PNG pages, counts pages, and refuses a page without an image", async () => {
    const pdf = await toPdf([{ jpeg: encodeJpeg(form.raster, 92) }, { png: encodePng(form.raster) }, {}]);
    expect(sniffFormat(pdf)).toBe("pdf");
    const doc = await openDocument(pdf);
    expect(doc.pageCount).toBe(3);
    for (const i of [0, 1]) {
      const page = await doc.decodePage(i);
      expect([page.width, page.height]).toEqual([620, 877]);
      let diff = 0;
      for (let k = 0; k < page.data.length; k++) diff += Math.abs(page.data[k] - form.raster.data[k]);
      expect(diff / page.data.length).toBeLessThan(i === 0 ? 4 : 0.01);
    }
    const { error } = await failure(doc.decodePage(2));
    expect(error.code).toBe("no_raster_content");
    expect(error.page).toBe(2);
  });

  it("turns a page shown with /Rotate 90 upright", async () => {
    const { PDFDocument, degrees } = await import("pdf-lib");
    const doc = await PDFDocument.load(
      await toPdf([{ png: encodePng({ width: 60, height: 20, data: new Uint8Array(1200).map((_, i) => (i % 60 < 10 ? 0 : 255)) }) }]),
    );
    doc.getPage(0).setRotation(degrees(90));
    const page = await decodePage(await doc.save(), 0);
    expect([page.width, page.height]).toEqual([20, 60]);
    expect(page.data[0]).toBe(0);
    expect(page.data[59 * 20]).toBe(255);
  });

  it("knows the page count of a long PDF without decoding a page", async () => {
    const jpeg = encodeJpeg(form.raster, 80);
    const pdf = await toPdf(Array.from({ length: 12 }, () => ({ jpeg })));
    expect(await pageCount(pdf)).toBe(12);
    // No page is decoded: a document whose every image stream is garbage still counts its pages.
    const garbage = {
      width: 100,
      height: 100,
      data: new Uint8Array(64).fill(7),
      dict: { BitsPerComponent: 8, ColorSpace: "DeviceGray", Filter: "FlateDecode" },
    };
    expect(await pageCount(await pdfWithImages(Array.from({ length: 12 }, () => garbage)))).toBe(12);
    expect((await failure(pageCount(pdf, { maxPages: 10 }))).error.code).toBe("too_many_pages");
  });

  it("decodes Flate images with a PNG predictor, 1-bit masks and indexed colour", async () => {
    const w = 30;
    const h = 20;
    const grey = (x: number, y: number) => (x * 8 + y * 3) % 256;
    const rows: number[] = [];
    for (let y = 0; y < h; y++) {
      rows.push(2); // PNG "up" filter on every row
      for (let x = 0; x < w; x++) rows.push((grey(x, y) - (y > 0 ? grey(x, y - 1) : 0)) & 255);
    }
    const predicted = await zlib(new Uint8Array(rows));
    const packed = new Uint8Array(Math.ceil(w / 8) * h);
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) if ((x + y) % 2 === 0) packed[y * Math.ceil(w / 8) + (x >> 3)] |= 0x80 >> (x & 7);
    const indices = new Uint8Array(w * h).map((_, i) => i % 3);
    const pdf = await pdfWithImages([
      {
        width: w,
        height: h,
        data: predicted,
        dict: {
          BitsPerComponent: 8,
          ColorSpace: "DeviceGray",
          Filter: "FlateDecode",
          DecodeParms: { Predictor: 15, Colors: 1, Columns: w },
        },
      },
      { width: w, height: h, data: await zlib(packed), dict: { ImageMask: true, Filter: "FlateDecode" } },
      {
        width: w,
        height: h,
        data: await zlib(indices),
        dict: {
          BitsPerComponent: 8,
          ColorSpace: ["Indexed", "DeviceRGB", 2, PDFHexString.of("000000ffffff808080")],
          Filter: "FlateDecode",
        },
      },
    ]);
    const [p0, p1, p2] = await decodeDocument(pdf);
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) expect(p0.data[y * w + x]).toBe(grey(x, y));
    // Image mask: a 1 sample is unpainted (paper), 0 is painted (ink).
    expect(mismatches(p1, (x, y) => (x + y) % 2 !== 0)).toBe(0);
    expect(Array.from(p2.data.subarray(0, 3))).toEqual([0, 255, 128]);
  });

  it("decodes CCITT Group 4 images (/CCITTFaxDecode, K < 0)", async () => {
    const black = bilevel(signature);
    const g4 = encodeG4(black, signature.width, signature.height);
    const pdf = await pdfWithImages([
      {
        width: signature.width,
        height: signature.height,
        data: g4,
        dict: {
          BitsPerComponent: 1,
          ColorSpace: "DeviceGray",
          Filter: "CCITTFaxDecode",
          DecodeParms: { K: -1, Columns: signature.width, Rows: signature.height },
        },
      },
    ]);
    expect(mismatches(await decodePage(pdf, 0), black)).toBe(0);
  });

  it("refuses a Flate bomb and an image dictionary declaring a huge page, in milliseconds", async () => {
    const bomb = await zlib(new Uint8Array(64 * 1024 * 1024));
    const pdf = await pdfWithImages([
      { width: 100, height: 100, data: bomb, dict: { BitsPerComponent: 8, ColorSpace: "DeviceGray", Filter: "FlateDecode" } },
      {
        width: 100_000,
        height: 100_000,
        data: new Uint8Array(10),
        dict: { BitsPerComponent: 8, ColorSpace: "DeviceGray", Filter: "FlateDecode" },
      },
    ]);
    const doc = await openDocument(pdf);
    const b = await failure(doc.decodePage(0));
    expect(b.error.code).toBe("too_many_pixels");
    expect(b.error.message).toContain("expands beyond its declared size (10000 bytes)");
    const h = await failure(doc.decodePage(1));
    expect(h.error.code).toBe("too_many_pixels");
    expect(h.error.message).toContain("declares 100000x100000 pixels");
  });

  it("refuses compressed object streams that would inflate beyond the structure budget, before pdf-lib reads them", async () => {
    const pdf = await toPdf([{ jpeg: encodeJpeg(form.raster, 80) }]);
    const zeros = await zlib(new Uint8Array(80 * 1024 * 1024));
    const enc = new TextEncoder();
    const head = enc.encode(`\n99 0 obj\n<< /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode /Length ${zeros.length} >>\nstream\n`);
    const bomb = concat([pdf.subarray(0, 15), head, zeros, enc.encode("\nendstream\nendobj\n"), pdf.subarray(15)]);
    const { error } = await failure(pageCount(bomb));
    // 422 (a decompression bomb), not 413: the upload itself is small. The message names the budget that stopped it.
    expect(error.code).toBe("too_many_pixels");
  });

  it("gives corrupt_file for a truncated PDF and for a damaged image stream", async () => {
    const pdf = await toPdf([{ jpeg: encodeJpeg(form.raster, 80) }]);
    expect((await failure(decodePage(pdf.slice(0, 400), 0))).error.code).toBe("corrupt_file");
    const broken = await pdfWithImages([
      {
        width: 30,
        height: 20,
        data: new Uint8Array([1, 2, 3, 4, 5]),
        dict: { BitsPerComponent: 8, ColorSpace: "DeviceGray", Filter: "FlateDecode" },
      },
    ]);
    expect((await failure(decodePage(broken, 0))).error.code).toBe("corrupt_file");
    const jpx = await pdfWithImages([{ width: 30, height: 20, data: new Uint8Array(50), dict: { Filter: "JPXDecode" } }]);
    expect((await failure(decodePage(jpx, 0))).error.code).toBe("unsupported_format");
  });
});
