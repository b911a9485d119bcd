/**
 * Decompression bombs and hostile files of every format: each is refused with a typed error (or, for a
 * damaged strip, decoded to a bounded raster), never left to run.
 *
 * How the bound is asserted. Wall-clock limits flake on a loaded machine, so the bound is asserted on work
 * counters instead: the ByteBudget every decoder charges as it produces output (bytes decompressed, never
 * more than the limit plus one 64 KiB chunk), and the size of what is allocated (the declared dimensions
 * are checked before any pixel memory exists). The only time bound is vitest's per-test timeout, a
 * backstop that turns a hang into a failure; it is not an assertion about speed.
 */
import UTIF from "utif2";
import { beforeAll, describe, expect, it } from "vitest";
import { decodePage, openDocument, pageCount } from "../../src/verify/decode";
import { ByteBudget } from "../../src/verify/decode/budget";
import { decodeChain, type FilterStep } from "../../src/verify/decode/filters";
import { guardPdfStructure, PDF_STRUCTURE_BUDGET_BYTES, pdfDocumentBudget } from "../../src/verify/decode/pdf-guard";
import { resolveLimits } from "../../src/verify/decode/limits";
import { PdfReader } from "../../src/verify/decode/pdf";
import { VerifyError } from "../../src/verify/types";
import { encodeJpeg, toPdf } from "../fixtures/generator";
import { blankPage } from "../fixtures/draw";
import { concat, makePng, pdfWithImages, zlib } from "./decode-files";
import {
  ascii85,
  asciiHex,
  formFanOut,
  greyCard,
  lzwCodes,
  lzwEncode,
  pageTreeDag,
  packBits,
  streamObject,
  tiffWith,
  withObjects,
} from "./decode-bomb-files";

const CHUNK = 64 * 1024;
const BACKSTOP_MS = 20_000;

async function refused(p: Promise<unknown>): Promise<VerifyError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(VerifyError);
    return err as VerifyError;
  }
  throw new Error("expected the decoder to refuse the file");
}

/** Run a hostile strip through the same bounded decoder the TIFF reader uses; return the bytes produced. */
function stripWork(strip: Uint8Array, steps: FilterStep[], want: number): { used: number; error?: string } {
  const budget = new ByteBudget(1 << 30, "test");
  let n = 0;
  try {
    decodeChain(
      strip,
      steps,
      {
        push: (c) => {
          n += c.length;
          if (n > want + 4096) throw new VerifyError("too_many_pixels", "over");
        },
        end() {},
      },
      { budget, what: "strip", lenient: true },
    );
  } catch (err) {
    if (!(err instanceof VerifyError)) throw err;
    return { used: budget.used, error: err.code };
  }
  return { used: budget.used };
}

const MiB = 1024 * 1024;
let zeros64: Uint8Array; // zlib of 64 MiB of zeros (about 64 KiB)

beforeAll(async () => {
  zeros64 = await zlib(new Uint8Array(64 * MiB));
}, BACKSTOP_MS * 2);

describe("PNG bombs", () => {
  it("refuses an IHDR that lies about a huge size before allocating", async () => {
    const png = await makePng({ width: 8, height: 8, colourType: 0, bitDepth: 8, pixel: () => [0] }, { ihdrSize: [100_000, 100_000] });
    expect((await refused(decodePage(png, 0))).code).toBe("too_many_pixels");
  });

  it(
    "stops a deflate bomb at the size IHDR declares",
    async () => {
      const png = await makePng({ width: 64, height: 64, colourType: 0, bitDepth: 8, pixel: () => [0] }, { idat: zeros64 });
      expect((await refused(decodePage(png, 0))).code).toBe("too_many_pixels");
    },
    BACKSTOP_MS,
  );
});

describe("JPEG bombs", () => {
  it("refuses a frame header that lies about a huge size before allocating", async () => {
    const jpeg = encodeJpeg(blankPage(32, 32, 200), 80);
    let sof = -1;
    for (let i = 2; i + 1 < jpeg.length; i++)
      if (jpeg[i] === 0xff && (jpeg[i + 1] === 0xc0 || jpeg[i + 1] === 0xc2)) {
        sof = i;
        break;
      }
    expect(sof).toBeGreaterThan(0);
    const lie = jpeg.slice();
    lie.set([0xfd, 0xe8, 0xfd, 0xe8], sof + 5); // 65000 x 65000
    expect((await refused(decodePage(lie, 0))).code).toBe("too_many_pixels");
  });
});

describe("TIFF: strips checked against the file, bounded decoders", () => {
  const W = 120;
  const H = 116; // 13,920 bytes of grey: the size of the LZW file that once hung the service
  const card = greyCard(W, H);

  it(
    "refuses a strip byte count past the end of the file for every compression, before any work",
    async () => {
      const strips: Record<number, Uint8Array> = {
        1: card,
        5: lzwEncode(card),
        8: await zlib(card),
        32773: packBits(card),
        4: new Uint8Array(64),
      };
      for (const [compression, strip] of Object.entries(strips)) {
        for (const lie of [0xffffffff, 0x7fffffff, strip.length + 1]) {
          const tiff = tiffWith({
            width: W,
            height: H,
            compression: Number(compression),
            strips: [strip],
            byteCounts: [lie],
            bitsPerSample: compression === "4" ? 1 : 8,
          });
          const e = await refused(decodePage(tiff, 0));
          expect(e.code, `compression ${compression}, count ${lie}`).toBe("corrupt_file");
          expect(e.message).toMatch(/past the end of the file/);
        }
      }
    },
    BACKSTOP_MS,
  );

  it(
    "refuses text or opaque bytes where a tag holds numbers (a fuzzed StripOffsets once made a TypeError), and reads BYTE-typed numbers",
    async () => {
      const tiff = tiffWith({ width: W, height: H, compression: 1, strips: [card] });
      const typeAt = (bytes: Uint8Array, tag: number) => {
        const ifd = new DataView(bytes.buffer, bytes.byteOffset).getUint32(4, true);
        const count = new DataView(bytes.buffer, bytes.byteOffset).getUint16(ifd, true);
        for (let i = 0; i < count; i++) {
          const e = ifd + 2 + i * 12;
          if (new DataView(bytes.buffer, bytes.byteOffset).getUint16(e, true) === tag) return e + 2;
        }
        throw new Error(`no tag ${tag}`);
      };
      for (const type of [2, 7]) {
        const bad = tiff.slice();
        new DataView(bad.buffer).setUint16(typeAt(bad, 273), type, true);
        const e = await refused(decodePage(bad, 0));
        expect(e.code, `type ${type}`).toBe("corrupt_file");
        expect(e.message).toMatch(/tag 273 holds (text|opaque bytes) where numbers belong/);
      }
      // BitsPerSample written as a BYTE (type 1) with its value in the entry: still 8 bits, still decoded.
      const byteTyped = tiff.slice();
      const at = typeAt(byteTyped, 258);
      const view = new DataView(byteTyped.buffer);
      const bps = view.getUint16(at + 6, true);
      view.setUint16(at, 1, true);
      view.setUint32(at + 6, 0, true);
      view.setUint8(at + 6, bps);
      const page = await decodePage(byteTyped, 0);
      expect([page.width, page.height]).toEqual([W, H]);
    },
    BACKSTOP_MS,
  );

  it("decodes LZW (with and without the horizontal predictor) and PackBits exactly, as utif2 reads the same files", async () => {
    const diff = new Uint8Array(card.length);
    for (let y = 0; y < H; y++) for (let x = 0; x < W; x++) diff[y * W + x] = (card[y * W + x] - (x > 0 ? card[y * W + x - 1] : 0)) & 255;
    const files = [
      tiffWith({ width: W, height: H, compression: 5, strips: [lzwEncode(card)] }),
      tiffWith({ width: W, height: H, compression: 5, predictor: 2, strips: [lzwEncode(diff)] }),
      tiffWith({
        width: W,
        height: H,
        compression: 32773,
        rowsPerStrip: 40,
        strips: [0, 40, 80].map((y) => packBits(card.subarray(y * W, Math.min(H, y + 40) * W))),
      }),
    ];
    for (const tiff of files) {
      const page = await decodePage(tiff, 0);
      expect(page.data).toEqual(card);
      const ifd = UTIF.decode(tiff.slice().buffer)[0];
      UTIF.decodeImage(tiff.slice().buffer, ifd);
      expect(new Uint8Array(ifd.data as Uint8Array).subarray(0, card.length)).toEqual(card);
    }
  });

  it("decodes tiled LZW pages, and refuses a tile table that lies", async () => {
    const T = 64;
    const tiles: Uint8Array[] = [];
    for (let ty = 0; ty < Math.ceil(H / T); ty++) {
      for (let tx = 0; tx < Math.ceil(W / T); tx++) {
        const t = new Uint8Array(T * T);
        for (let y = 0; y < T; y++)
          for (let x = 0; x < T; x++) if (ty * T + y < H && tx * T + x < W) t[y * T + x] = card[(ty * T + y) * W + tx * T + x];
        tiles.push(lzwEncode(t));
      }
    }
    expect((await decodePage(tiffWith({ width: W, height: H, compression: 5, strips: tiles, tile: [T, T] }), 0)).data).toEqual(card);
    const lying = tiffWith({
      width: W,
      height: H,
      compression: 5,
      strips: tiles,
      tile: [T, T],
      byteCounts: tiles.map((t, i) => (i === 3 ? 0xffffffff : t.length)),
    });
    expect((await refused(decodePage(lying, 0))).code).toBe("corrupt_file");
    const missing = tiffWith({ width: W, height: H, compression: 5, strips: tiles.slice(0, 2), tile: [T, T] });
    expect((await refused(decodePage(missing, 0))).code).toBe("corrupt_file");
  });

  it(
    "refuses an LZW code past the string table (utif2 linked an entry to itself and looped forever)",
    async () => {
      // clear, "A", 259 (two past the table: invalid), "B", 259. utif2 took 259 as the KwKwK case, then made
      // entry 259 its own prefix and walked it for ever; a few flipped bits in a real strip do the same.
      const strip = lzwCodes([256, 65, 259, 66, 259, 257]);
      const card13k = concat([strip, new Uint8Array(13_900 - strip.length)]);
      const e = await refused(decodePage(tiffWith({ width: W, height: H, compression: 5, strips: [card13k] }), 0));
      expect(e.code).toBe("corrupt_file");
      expect(e.message).toMatch(/LZW code past the table/);
    },
    BACKSTOP_MS,
  );

  it(
    "ends every LZW strip with flipped bits with a bounded result",
    async () => {
      const strip = lzwEncode(card);
      let seed = 7;
      const rand = () => {
        seed = (seed * 1103515245 + 12345) >>> 0;
        return (seed >>> 8) / 0x1000000;
      };
      for (let round = 0; round < 40; round++) {
        const bad = strip.slice();
        for (let k = 0; k < 5; k++) bad[Math.floor(rand() * bad.length)] ^= 1 << Math.floor(rand() * 8);
        // The bound: what the decoder produced is at most the strip, its slack and one chunk.
        const work = stripWork(bad, [{ filter: "lzw" }], card.length);
        expect(work.used).toBeLessThanOrEqual(card.length + 4096 + CHUNK);
        // And the reader answers: a raster of the declared size or a typed refusal.
        const tiff = tiffWith({ width: W, height: H, compression: 5, strips: [bad] });
        try {
          const page = await decodePage(tiff, 0);
          expect([page.width, page.height]).toEqual([W, H]);
        } catch (err) {
          expect(err).toBeInstanceOf(VerifyError);
          expect(["corrupt_file", "too_many_pixels"]).toContain((err as VerifyError).code);
        }
      }
    },
    BACKSTOP_MS,
  );

  it(
    "refuses LZW, PackBits and Deflate strips that expand past their size, stopping at once",
    async () => {
      const runs = new Uint8Array(20_000);
      for (let i = 0; i < runs.length; i += 2) runs.set([0x81, 0], i); // each pair: 128 zeros
      const lzw = lzwEncode(new Uint8Array(16 * MiB));
      for (const [compression, strip, steps] of [
        [32773, runs, [{ filter: "packbits" }]],
        [5, lzw, [{ filter: "lzw" }]],
        [8, zeros64, [{ filter: "flate" }]],
      ] as [number, Uint8Array, FilterStep[]][]) {
        const e = await refused(decodePage(tiffWith({ width: 16, height: 16, compression, strips: [strip] }), 0));
        expect(e.code, `compression ${compression}`).toBe("too_many_pixels");
        const work = stripWork(strip, steps, 256);
        expect(work.error).toBe("too_many_pixels");
        expect(work.used).toBeLessThanOrEqual(256 + 4096 + 2 * CHUNK);
      }
    },
    BACKSTOP_MS,
  );

  it("decodes JPEG strips (with shared JPEGTables) and 16-bit little-endian samples, and refuses a strip whose frame lies", async () => {
    const jpeg = encodeJpeg({ width: W, height: H, data: card }, 95);
    const close = (page: { data: Uint8Array }) => page.data.reduce((n, v, i) => n + Math.abs(v - card[i]), 0) / card.length;
    expect(close(await decodePage(tiffWith({ width: W, height: H, compression: 7, strips: [jpeg] }), 0))).toBeLessThan(4);
    // JPEGTables: SOI, the file's quantisation and Huffman tables, EOI.
    const segs: Uint8Array[] = [new Uint8Array([0xff, 0xd8])];
    for (let o = 2; o + 4 < jpeg.length && jpeg[o + 1] !== 0xda; o += 2 + ((jpeg[o + 2] << 8) | jpeg[o + 3])) {
      if (jpeg[o + 1] === 0xdb || jpeg[o + 1] === 0xc4) segs.push(jpeg.subarray(o, o + 2 + ((jpeg[o + 2] << 8) | jpeg[o + 3])));
    }
    segs.push(new Uint8Array([0xff, 0xd9]));
    expect(
      close(await decodePage(tiffWith({ width: W, height: H, compression: 7, strips: [jpeg], jpegTables: concat(segs) }), 0)),
    ).toBeLessThan(4);
    // A strip whose frame header claims a whole page is refused before it is decoded.
    const big = encodeJpeg({ width: 400, height: 300, data: new Uint8Array(400 * 300).fill(128) }, 80);
    expect((await refused(decodePage(tiffWith({ width: W, height: H, compression: 7, strips: [big] }), 0))).code).toBe("corrupt_file");

    const le16 = new Uint8Array(card.length * 2);
    for (let i = 0; i < card.length; i++) le16.set([0x5a, card[i]], 2 * i); // low byte, then high byte
    for (const [compression, strip] of [
      [1, le16],
      [5, lzwEncode(le16)],
    ] as [number, Uint8Array][]) {
      const page = await decodePage(tiffWith({ width: W, height: H, compression, strips: [strip], bitsPerSample: 16 }), 0);
      expect(page.data, `compression ${compression}`).toEqual(card);
    }
  });

  it("refuses CCITT 1D and Group 3 (compression 2 and 3) as unsupported instead of handing them to utif2", async () => {
    for (const compression of [2, 3]) {
      const tiff = tiffWith({ width: W, height: H, compression, strips: [card], bitsPerSample: 1, photometric: 0 });
      const e = await refused(decodePage(tiff, 0));
      expect(e.code).toBe("unsupported_format");
      expect(e.message).toContain(`compression ${compression}`);
    }
  });
});

describe("PDF: one byte budget for every decompression of a document", () => {
  let base: Uint8Array;
  beforeAll(async () => {
    base = await toPdf([{ jpeg: encodeJpeg(greyPage(), 80) }]);
  });
  function greyPage() {
    return { width: 64, height: 48, data: greyCard(64, 48) };
  }

  /** The guard alone, with a fresh document budget: the error, and how many bytes it let out. */
  function guard(pdf: Uint8Array): { error?: VerifyError; used: number } {
    const budget = pdfDocumentBudget(resolveLimits());
    try {
      guardPdfStructure(pdf, budget);
    } catch (err) {
      expect(err).toBeInstanceOf(VerifyError);
      return { error: err as VerifyError, used: budget.used };
    }
    return { used: budget.used };
  }

  async function expectBomb(pdf: Uint8Array, code = "too_many_pixels") {
    const g = guard(pdf);
    expect(g.error?.code).toBe(code);
    // Refused at the structure share of the budget: at most 16 MiB (plus one chunk) was ever decompressed.
    expect(g.used).toBeLessThanOrEqual(PDF_STRUCTURE_BUDGET_BYTES + CHUNK);
    expect((await refused(pageCount(pdf))).code).toBe(code);
  }

  it("lets an ordinary pdf-lib file with object and cross-reference streams through, at little cost", async () => {
    const g = guard(base);
    expect(g.error).toBeUndefined();
    expect(g.used).toBeGreaterThan(0); // its object streams were decoded and counted
    expect(g.used).toBeLessThan(64 * 1024);
    expect(await pageCount(base)).toBe(1);
  });

  it(
    "refuses a Flate object-stream bomb",
    async () => {
      await expectBomb(withObjects(base, streamObject(99, "/Type /ObjStm /N 1 /First 4 /Filter /FlateDecode", zeros64)));
    },
    BACKSTOP_MS,
  );

  it(
    "refuses the bomb when /ObjStm is spelled with a hex escape (/Obj#53tm, /#4fbj#53tm)",
    async () => {
      await expectBomb(withObjects(base, streamObject(99, "/Type /Obj#53tm /N 1 /First 4 /Filter /FlateDecode", zeros64)));
      await expectBomb(withObjects(base, streamObject(99, "/Type /#4fbj#53tm /N 1 /First 4 /Filter /Fl#61teDecode", zeros64)));
    },
    BACKSTOP_MS,
  );

  it(
    "refuses the bomb behind /ASCIIHexDecode, /ASCII85Decode or a second /FlateDecode",
    async () => {
      await expectBomb(
        withObjects(base, streamObject(99, "/Type /ObjStm /N 1 /First 4 /Filter [/ASCIIHexDecode /FlateDecode]", asciiHex(zeros64))),
      );
      await expectBomb(
        withObjects(base, streamObject(99, "/Type /ObjStm /N 1 /First 4 /Filter [/ASCII85Decode /FlateDecode]", ascii85(zeros64))),
      );
      await expectBomb(
        withObjects(base, streamObject(99, "/Type /ObjStm /N 1 /First 4 /Filter [/FlateDecode /FlateDecode]", await zlib(zeros64))),
      );
    },
    BACKSTOP_MS,
  );

  it(
    "refuses LZW and RunLength object-stream bombs, and a cross-reference stream bomb",
    async () => {
      const lzw = lzwEncode(new Uint8Array(24 * MiB));
      await expectBomb(withObjects(base, streamObject(99, "/Type /ObjStm /N 1 /First 4 /Filter /LZWDecode", lzw)));
      const runs = new Uint8Array(400_000);
      for (let i = 0; i < runs.length; i += 2) runs.set([0x81, 0], i);
      await expectBomb(withObjects(base, streamObject(99, "/Type /ObjStm /N 1 /First 4 /Filter /RunLengthDecode", runs)));
      await expectBomb(withObjects(base, streamObject(99, "/Type /XRef /Size 1 /W [1 1 1] /Filter /FlateDecode", zeros64)));
    },
    BACKSTOP_MS,
  );

  it(
    "finds an object stream whose dictionary is padded far beyond its /Type, or hides names in strings",
    async () => {
      // The old guard looked for `stream` within 4 KiB of the name.
      const pad = `/Pad (${"x".repeat(8000)} >> stream)`;
      await expectBomb(withObjects(base, streamObject(99, `/Type /ObjStm ${pad} /N 1 /First 4 /Filter /FlateDecode`, zeros64)));
      // A decoy object header inside a string, whose hex string swallows the real name: traced past it.
      await expectBomb(
        withObjects(base, streamObject(99, `/Filter /FlateDecode /A (8 0 obj <) /Type /ObjStm /B (>) /N 1 /First 4`, zeros64)),
      );
      // A decoy complete object inside a string ends the walk before the real header: refused as unreadable.
      const decoy = withObjects(
        base,
        streamObject(99, `/Filter /FlateDecode /Q (9 0 obj << /Type /Foo >> stream) /Type /ObjStm /N 1 /First 4`, zeros64),
      );
      expect(guard(decoy).error?.code).toBe("corrupt_file");
      expect(guard(decoy).used).toBe(0);
    },
    BACKSTOP_MS,
  );

  it(
    "refuses what pdf-lib could resolve but the guard cannot: an indirect /Type, /Filter or /DecodeParms",
    async () => {
      const indirectType = withObjects(
        base,
        "98 0 obj\n/ObjStm\nendobj\n",
        streamObject(99, "/Type 98 0 R /N 1 /First 4 /Filter /FlateDecode", zeros64),
      );
      expect(guard(indirectType).error?.code).toBe("corrupt_file");
      expect((await refused(pageCount(indirectType))).code).toBe("corrupt_file");
      const indirectFilter = withObjects(
        base,
        "98 0 obj\n/FlateDecode\nendobj\n",
        streamObject(99, "/Type /ObjStm /N 1 /First 4 /Filter 98 0 R", zeros64),
      );
      expect(guard(indirectFilter).error?.code).toBe("corrupt_file");
      const parms = withObjects(
        base,
        streamObject(99, "/Type /ObjStm /N 1 /First 4 /Filter /LZWDecode /DecodeParms 98 0 R", lzwEncode(new Uint8Array(100))),
      );
      expect(guard(parms).error?.code).toBe("corrupt_file");
    },
    BACKSTOP_MS,
  );

  it("answers 415-style unsupported_format for an encrypted file whose object streams are ciphertext", async () => {
    const cipher = new Uint8Array(300).map((_, i) => (i * 97 + 13) & 255);
    const pdf = withObjects(
      base,
      "97 0 obj\n<< /Encrypt 98 0 R >>\nendobj\n",
      streamObject(99, "/Type /ObjStm /N 1 /First 4 /Filter /FlateDecode", cipher),
    );
    expect((await refused(pageCount(pdf))).code).toBe("unsupported_format");
    // Without /Encrypt the same stream is simply damaged.
    expect(
      (await refused(pageCount(withObjects(base, streamObject(99, "/Type /ObjStm /N 1 /First 4 /Filter /FlateDecode", cipher))))).code,
    ).toBe("corrupt_file");
  });

  it(
    "refuses image-stream bombs behind a filter chain, and decodes honest chains exactly",
    async () => {
      const dict = { BitsPerComponent: 8, ColorSpace: "DeviceGray" };
      const bomb = await pdfWithImages([
        { width: 100, height: 100, data: await zlib(zeros64), dict: { ...dict, Filter: ["FlateDecode", "FlateDecode"] } },
      ]);
      const doc = await openDocument(bomb);
      expect((await refused(doc.decodePage(0))).code).toBe("too_many_pixels");

      const px = greyCard(64, 48);
      const z = await zlib(px);
      const chains: [string[], Uint8Array][] = [
        [["ASCII85Decode", "FlateDecode"], ascii85(z)],
        [["ASCIIHexDecode", "FlateDecode"], asciiHex(z)],
        [["LZWDecode"], lzwEncode(px)],
        [["RunLengthDecode"], concat([packBits(px), new Uint8Array([128])])],
        [["ASCIIHexDecode", "LZWDecode"], asciiHex(lzwEncode(px))],
      ];
      for (const [Filter, data] of chains) {
        const pdf = await pdfWithImages([{ width: 64, height: 48, data, dict: { ...dict, Filter } }]);
        expect((await decodePage(pdf, 0)).data, Filter.join(" ")).toEqual(px);
      }
    },
    BACKSTOP_MS,
  );

  it("charges image streams to the same document budget as the structure", async () => {
    const px = greyCard(64, 48);
    const image = {
      width: 64,
      height: 48,
      data: await zlib(px),
      dict: { BitsPerComponent: 8, ColorSpace: "DeviceGray", Filter: "FlateDecode" },
    };
    const reader = await PdfReader.open(await pdfWithImages([image, image]), resolveLimits());
    const afterOpen = reader.budget.used;
    await reader.decodePage(0);
    await reader.decodePage(1);
    expect(reader.budget.used - afterOpen).toBe(2 * px.length);
  });
});

describe("PDF structure guard: its own work is bounded", () => {
  it(
    "refuses a dictionary of 400,000 /XRef names without reading it once per name",
    async () => {
      // Each name traces back to the same 2.4 MB dictionary; reading it once per name would be 10^12 bytes.
      const names = "/XRef ".repeat(400_000);
      const pdf = new TextEncoder().encode(`%PDF-1.7\n1 0 obj\n<< /A [ ${names} ] >>\nendobj\n`);
      const budget = pdfDocumentBudget(resolveLimits());
      let error: unknown;
      try {
        guardPdfStructure(pdf, budget);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(VerifyError);
      expect((error as VerifyError).code).toBe("corrupt_file");
      expect((error as VerifyError).message).toMatch(/too much work/);
    },
    BACKSTOP_MS,
  );
});

describe("PDF structure that would make pdf-lib itself loop", () => {
  let base: Uint8Array;
  beforeAll(async () => {
    base = await toPdf([{ jpeg: encodeJpeg({ width: 64, height: 48, data: greyCard(64, 48) }, 80) }]);
  });
  const guardCode = (pdf: Uint8Array) => {
    try {
      guardPdfStructure(pdf, pdfDocumentBudget(resolveLimits()));
    } catch (err) {
      return (err as VerifyError).code;
    }
    return "ok";
  };

  it("refuses a cross-reference stream that declares more entries than it holds (pdf-lib reads them all)", async () => {
    const entries = new Uint8Array(5 * 3); // three entries of W [1 2 2]
    const honest = withObjects(base, streamObject(98, "/Type /XRef /Size 3 /W [1 2 2]", entries));
    expect(guardCode(honest)).toBe("ok");
    for (const lie of ["/Size 1000000", "/Size 3 /Index [0 3 10 2000000000]", "/Size 3 /W [0 0 0]"]) {
      const dict = lie.includes("/W") ? `/Type /XRef ${lie}` : `/Type /XRef ${lie} /W [1 2 2]`;
      const pdf = withObjects(base, streamObject(98, dict, entries));
      expect(guardCode(pdf), lie).toBe("corrupt_file");
      expect((await refused(pageCount(pdf))).code, lie).toBe("corrupt_file");
    }
  });

  it("refuses an object stream whose table points many times into one long object", async () => {
    const long = `[${"[1 2 3] ".repeat(20_000)}]`;
    const honestTable = "7 0 8 3 ";
    const honest = withObjects(
      base,
      streamObject(98, `/Type /ObjStm /N 2 /First ${honestTable.length}`, new TextEncoder().encode(`${honestTable}1 2 ${long}`)),
    );
    expect(guardCode(honest)).toBe("ok");
    const table = Array.from({ length: 5000 }, (_, i) => `${1000 + i} ${i} `).join("");
    const repeat = withObjects(
      base,
      streamObject(98, `/Type /ObjStm /N 5000 /First ${table.length}`, new TextEncoder().encode(table + long)),
    );
    expect(guardCode(repeat)).toBe("corrupt_file");
    const twice = withObjects(base, streamObject(98, `/Type /ObjStm /N 2 /First 8`, new TextEncoder().encode(`7 0 8 0 ${long}`)));
    expect(guardCode(twice)).toBe("corrupt_file");
  });

  it(
    "refuses a page tree that names one node twice (pdf-lib walked 2^40 nodes to count the pages)",
    async () => {
      expect((await refused(pageCount(pageTreeDag(40)))).code).toBe("corrupt_file");
      expect((await refused(pageCount(pageTreeDag(2)))).code).toBe("corrupt_file");
    },
    BACKSTOP_MS,
  );

  it(
    "looks into each form XObject once per page (a form naming itself 1,000 times was 10^9 visits)",
    async () => {
      // No counter to read here: the per-test timeout is the backstop, and before the fix this ran for hours.
      expect((await refused(decodePage(await formFanOut(1000), 0))).code).toBe("no_raster_content");
    },
    BACKSTOP_MS,
  );
});
