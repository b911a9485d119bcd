import { PDFArray, PDFBool, PDFDict, PDFDocument, PDFName, PDFNumber, PDFPageTree, PDFRawStream, PDFRef, type PDFObject } from "pdf-lib";
import { VerifyError, type DecodeLimits, type Raster } from "../types";
import type { ByteBudget } from "./budget";
import { decodeChain, decodeToBytes, OutputComplete, pdfFilter, type FilterStep } from "./filters";
import { applyOrientation } from "./orientation";
import { guardPdfStructure, pdfDocumentBudget } from "./pdf-guard";
import { decodeJpegGrey } from "./jpeg";
import { checkDimensions, checkPageIndex } from "./limits";
import { RowDecoder, expectedBytes, type SampleLayout } from "./rows";
import { decodeG4 } from "./g4";

/**
 * Image-based PDF pages: the page's largest image XObject (directly or inside a form XObject) is its
 * raster. Scanners write one image per page; vector-only pages have nothing to verify and are refused with
 * no_raster_content. Image streams are decoded here, bounded by the Width and Height their dictionaries
 * declare: /DCTDecode as a JPEG file, /FlateDecode with its predictor, bit depth and colour space, and
 * /CCITTFaxDecode (Group 4) with the same decoder as TIFF Group 4, each after any general filters before
 * it (Flate, LZW, RunLength, ASCIIHex, ASCII85), streamed and bounded.
 *
 * One ByteBudget per document covers every decompression: the structure guard (which also bounds what
 * pdf-lib inflates while loading) and every image stream decoded afterwards.
 */
export class PdfReader {
  readonly pageCount: number;
  #doc: PDFDocument;
  #limits: DecodeLimits;
  /** Every decompression of this document, pdf-lib's included, is charged here. */
  readonly budget: ByteBudget;

  private constructor(doc: PDFDocument, limits: DecodeLimits, budget: ByteBudget) {
    this.#doc = doc;
    this.#limits = limits;
    this.budget = budget;
    this.pageCount = doc.getPageCount();
  }

  static async open(bytes: Uint8Array, limits: DecodeLimits): Promise<PdfReader> {
    const budget = pdfDocumentBudget(limits);
    guardPdfStructure(bytes, budget);
    let doc: PDFDocument;
    try {
      doc = await PDFDocument.load(bytes, { ignoreEncryption: true, updateMetadata: false, throwOnInvalidObject: false });
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new VerifyError("corrupt_file", `the PDF could not be read (${why.slice(0, 160)})`);
    }
    if (doc.isEncrypted) throw new VerifyError("unsupported_format", "encrypted PDFs are not supported");
    let count: number;
    try {
      checkPageTree(doc, limits.maxPages);
      count = doc.getPageCount();
    } catch (err) {
      if (err instanceof VerifyError) throw err;
      throw new VerifyError("corrupt_file", "the PDF's page tree is damaged");
    }
    if (count === 0) throw new VerifyError("corrupt_file", "the PDF has no pages");
    return new PdfReader(doc, limits, budget);
  }

  async decodePage(pageIndex: number): Promise<Raster> {
    checkPageIndex(pageIndex, this.pageCount);
    let image: PDFRawStream | undefined;
    let rotate = 0;
    try {
      const page = this.#doc.getPage(pageIndex);
      rotate = (((page.getRotation().angle % 360) + 360) % 360) | 0;
      image = largestImage(this.#doc, page.node.Resources(), 0);
    } catch (err) {
      if (err instanceof VerifyError) throw err;
      throw new VerifyError("corrupt_file", `page ${pageIndex + 1} of the PDF is damaged`, pageIndex);
    }
    if (!image) {
      throw new VerifyError(
        "no_raster_content",
        `page ${pageIndex + 1} of the PDF holds no image to verify (a text or vector page)`,
        pageIndex,
      );
    }
    const raster = decodeImageStream(this.#doc, image, this.#limits, this.budget, pageIndex);
    // /Rotate turns the page clockwise for display: 90 is orientation 6, 180 is 3, 270 is 8.
    return applyOrientation(raster, ({ 90: 6, 180: 3, 270: 8 } as Record<number, number>)[rotate] ?? 1);
  }
}

/**
 * pdf-lib counts pages by walking the page tree with no memory of where it has been: a tree whose /Kids
 * name the same node twice at each of 40 levels is 2^40 visits, a loop is endless. Walk it first, once,
 * refusing a node seen twice and a tree far larger than the page bound.
 */
function checkPageTree(doc: PDFDocument, maxPages: number): void {
  const seen = new Set<PDFObject>();
  const stack: (PDFObject | undefined)[] = [doc.catalog.get(PDFName.of("Pages"))];
  const maxNodes = 4 * maxPages + 1000;
  while (stack.length > 0) {
    const node = lookup(doc, stack.pop());
    if (!(node instanceof PDFPageTree)) continue; // a leaf, or something pdf-lib does not descend into
    if (seen.has(node)) throw new VerifyError("corrupt_file", "the PDF's page tree names one node twice");
    seen.add(node);
    const kids = lookup(doc, node.get(PDFName.of("Kids")));
    if (!(kids instanceof PDFArray)) continue;
    if (seen.size + stack.length + kids.size() > maxNodes) {
      throw new VerifyError(
        "too_many_pages",
        `the PDF's page tree has more than ${maxNodes} entries; at most ${maxPages} pages are accepted`,
      );
    }
    for (let i = 0; i < kids.size(); i++) stack.push(kids.get(i));
  }
}

function lookup(doc: PDFDocument, obj: PDFObject | undefined): PDFObject | undefined {
  return obj instanceof PDFRef ? doc.context.lookup(obj) : obj;
}

function num(doc: PDFDocument, dict: PDFDict, key: string): number | undefined {
  const v = lookup(doc, dict.get(PDFName.of(key)));
  return v instanceof PDFNumber ? v.asNumber() : undefined;
}

function imageArea(doc: PDFDocument, s: PDFRawStream): number {
  return (num(doc, s.dict, "Width") ?? 0) * (num(doc, s.dict, "Height") ?? 0);
}

/**
 * Each form XObject is looked into once per page: forms that all name one another would otherwise cost
 * (entries per form)^depth visits.
 */
function largestImage(
  doc: PDFDocument,
  resources: PDFDict | undefined,
  depth: number,
  seen = new Set<PDFRawStream>(),
): PDFRawStream | undefined {
  if (!resources || depth > 3) return undefined;
  const xobjects = lookup(doc, resources.get(PDFName.of("XObject")));
  if (!(xobjects instanceof PDFDict)) return undefined;
  let best: PDFRawStream | undefined;
  for (const [, ref] of xobjects.entries()) {
    const x = lookup(doc, ref);
    if (!(x instanceof PDFRawStream) || seen.has(x)) continue;
    seen.add(x);
    const subtype = lookup(doc, x.dict.get(PDFName.of("Subtype")));
    let candidate: PDFRawStream | undefined;
    if (subtype === PDFName.of("Image")) candidate = x;
    else if (subtype === PDFName.of("Form")) {
      const inner = lookup(doc, x.dict.get(PDFName.of("Resources")));
      candidate = largestImage(doc, inner instanceof PDFDict ? inner : undefined, depth + 1, seen);
    }
    if (candidate && (!best || imageArea(doc, candidate) > imageArea(doc, best))) best = candidate;
  }
  return best;
}

function filters(doc: PDFDocument, dict: PDFDict): { names: string[]; parms: (PDFDict | undefined)[] } {
  const f = lookup(doc, dict.get(PDFName.of("Filter")));
  const p = lookup(doc, dict.get(PDFName.of("DecodeParms")) ?? dict.get(PDFName.of("DP")));
  const names: string[] = [];
  const parms: (PDFDict | undefined)[] = [];
  const asDict = (o: PDFObject | undefined) => {
    const d = lookup(doc, o);
    return d instanceof PDFDict ? d : undefined;
  };
  if (f instanceof PDFName) {
    names.push(f.decodeText());
    parms.push(p instanceof PDFArray ? asDict(p.get(0)) : asDict(p));
  } else if (f instanceof PDFArray) {
    for (let i = 0; i < f.size(); i++) {
      const n = lookup(doc, f.get(i));
      names.push(n instanceof PDFName ? n.decodeText() : "?");
      parms.push(p instanceof PDFArray ? asDict(p.get(i)) : undefined);
    }
  }
  return { names, parms };
}

interface ColourInfo {
  model: SampleLayout["model"];
  channels: number;
  lut?: Uint8Array;
  lutFromBase?: { base: ColourInfo; hival: number; table: Uint8Array };
}

function colourSpace(doc: PDFDocument, cs: PDFObject | undefined, page: number, depth = 0): ColourInfo {
  const o = lookup(doc, cs);
  if (o === undefined) return { model: "grey", channels: 1 };
  if (o instanceof PDFName) {
    const n = o.decodeText();
    if (n === "DeviceGray" || n === "CalGray" || n === "G") return { model: "grey", channels: 1 };
    if (n === "DeviceRGB" || n === "CalRGB" || n === "RGB") return { model: "rgb", channels: 3 };
    if (n === "DeviceCMYK" || n === "CMYK") return { model: "cmyk", channels: 4 };
  }
  if (o instanceof PDFArray && o.size() > 0 && depth < 3) {
    const kind = lookup(doc, o.get(0));
    const k = kind instanceof PDFName ? kind.decodeText() : "";
    if (k === "ICCBased") {
      const s = lookup(doc, o.get(1));
      const n = s instanceof PDFRawStream ? num(doc, s.dict, "N") : undefined;
      if (n === 1) return { model: "grey", channels: 1 };
      if (n === 3) return { model: "rgb", channels: 3 };
      if (n === 4) return { model: "cmyk", channels: 4 };
    }
    if (k === "CalGray" || k === "CalRGB") return colourSpace(doc, kind, page, depth + 1);
    if (k === "Indexed" || k === "I") {
      const base = colourSpace(doc, o.get(1), page, depth + 1);
      const hivalObj = lookup(doc, o.get(2));
      const hival = hivalObj instanceof PDFNumber ? hivalObj.asNumber() : 255;
      const t = lookup(doc, o.get(3));
      let table: Uint8Array | undefined;
      if (t instanceof PDFRawStream)
        table = t.contents; // uncompressed lookup tables only
      else if (t && "asBytes" in t && typeof (t as { asBytes: unknown }).asBytes === "function")
        table = (t as unknown as { asBytes(): Uint8Array }).asBytes();
      if (table && base.model !== "indexed") {
        const lut = new Uint8Array(256);
        for (let i = 0; i <= Math.min(255, hival); i++) {
          const c = i * base.channels;
          if (base.model === "grey") lut[i] = table[c] ?? 0;
          else if (base.model === "rgb") lut[i] = ((table[c] ?? 0) * 77 + (table[c + 1] ?? 0) * 150 + (table[c + 2] ?? 0) * 29 + 128) >> 8;
          else
            lut[i] =
              255 -
              Math.min(255, (((table[c] ?? 0) * 77 + (table[c + 1] ?? 0) * 150 + (table[c + 2] ?? 0) * 29) >> 8) + (table[c + 3] ?? 0));
        }
        return { model: "indexed", channels: 1, lut };
      }
    }
  }
  throw new VerifyError("unsupported_format", "the PDF page image uses a colour space that is not supported", page);
}

function decodeImageStream(doc: PDFDocument, s: PDFRawStream, limits: DecodeLimits, budget: ByteBudget, page: number): Raster {
  const d = s.dict;
  const width = num(doc, d, "Width") ?? 0;
  const height = num(doc, d, "Height") ?? 0;
  checkDimensions(width, height, limits, page);
  const { names, parms } = filters(doc, d);
  const isMask = lookup(doc, d.get(PDFName.of("ImageMask"))) === PDFBool.True;
  const decodeArr = lookup(doc, d.get(PDFName.of("Decode")));
  const d0 = decodeArr instanceof PDFArray ? lookup(doc, decodeArr.get(0)) : undefined;
  const invert = d0 instanceof PDFNumber && d0.asNumber() === 1;

  // The general filters at the head of the chain (e.g. [/ASCII85Decode /FlateDecode /DCTDecode]) are
  // undone as one bounded stream; an image codec may only come last.
  const steps: FilterStep[] = [];
  let i = 0;
  for (; i < names.length; i++) {
    const filter = pdfFilter(names[i]);
    if (!filter) break;
    const early = filter === "lzw" && parms[i] ? num(doc, parms[i] as PDFDict, "EarlyChange") : undefined;
    steps.push({ filter, earlyChange: early });
  }
  if (i < names.length - 1)
    throw new VerifyError("unsupported_format", `PDF images with a filter after /${names[i]} are not supported`, page);
  const last = names[i] ?? "";
  const parm = parms[i];
  const what = "PDF image stream";
  const codecInput = () => decodeToBytes(s.contents, steps, limits.maxPixelsPerPage * 4 + 1024, { budget, what, page });

  if (last === "DCTDecode" || last === "DCT") {
    const data = codecInput();
    budget.charge(width * height, page);
    const r = decodeJpegGrey(data, limits, page, "PDF page's JPEG image", false);
    if (invert) for (let k = 0; k < r.data.length; k++) r.data[k] = 255 - r.data[k];
    return r;
  }
  if (last === "CCITTFaxDecode" || last === "CCF") {
    const k = parm ? (num(doc, parm, "K") ?? 0) : 0;
    if (k >= 0) throw new VerifyError("unsupported_format", "only Group 4 (K < 0) CCITT images are supported in PDFs", page);
    const flag = (key: string) => (parm ? lookup(doc, parm.get(PDFName.of(key))) === PDFBool.True : false);
    const data = codecInput();
    budget.charge(width * height, page);
    // Runs coded white come out as 1 (white) unless BlackIs1; a /Decode [1 0] swaps them back.
    return wrapG4(() => decodeG4(data, { width, height, byteAlign: flag("EncodedByteAlign"), invert: flag("BlackIs1") !== invert }), page);
  }
  if (last === "") {
    // Samples, after the general filters: a PNG predictor belongs to the last of them.
    const lastParm = parms[steps.length - 1];
    const bpc = isMask ? 1 : (num(doc, d, "BitsPerComponent") ?? 8);
    const cs = isMask ? ({ model: "grey", channels: 1 } as ColourInfo) : colourSpace(doc, d.get(PDFName.of("ColorSpace")), page);
    const predictor = lastParm ? (num(doc, lastParm, "Predictor") ?? 1) : 1;
    if (predictor !== 1 && predictor < 10)
      throw new VerifyError("unsupported_format", "TIFF predictors in PDF images are not supported", page);
    if (![1, 2, 4, 8, 16].includes(bpc)) throw new VerifyError("corrupt_file", `the PDF image declares ${bpc} bits per component`, page);
    const layout: SampleLayout = {
      width,
      height,
      bitsPerComponent: bpc,
      channels: cs.channels,
      model: cs.model,
      lut: cs.lut,
      invert,
      pngFilters: predictor >= 10,
    };
    const dec = new RowDecoder(layout);
    const expected = expectedBytes(layout);
    let got = 0;
    const sink = {
      push(c: Uint8Array) {
        got += c.length;
        // More data than the dictionary declares is a bomb; the decoder is stopped at the first excess.
        if (got > expected + 64) {
          throw new VerifyError(
            "too_many_pixels",
            `the ${what} expands beyond its declared size (${expected} bytes): refused as a decompression bomb`,
            page,
          );
        }
        dec.push(c);
        if (dec.complete) throw new OutputComplete();
      },
      end() {},
    };
    decodeChain(s.contents, steps, sink, { budget, what, page, lenient: true });
    // Producers sometimes omit the final bytes of a stream; a page missing more than a few rows is damaged.
    if (!dec.complete && dec.rowsDone < height - 2)
      throw new VerifyError("corrupt_file", `the image of PDF page ${page + 1} is truncated`, page);
    return dec.raster;
  }
  if (last === "JPXDecode") throw new VerifyError("unsupported_format", "JPEG 2000 images in PDFs are not supported", page);
  if (last === "JBIG2Decode") throw new VerifyError("unsupported_format", "JBIG2 images in PDFs are not supported", page);
  throw new VerifyError("unsupported_format", `PDF images with the ${last} filter are not supported`, page);
}

function wrapG4(fn: () => Raster, page: number): Raster {
  try {
    return fn();
  } catch (err) {
    if (err instanceof VerifyError) throw new VerifyError(err.code, err.message, page);
    throw err;
  }
}
