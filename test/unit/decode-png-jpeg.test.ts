import { describe, expect, it } from "vitest";
import { decodeDocument, decodePage, pageCount, sniffFormat } from "../../src/verify/decode";
import { JPEG_MAX_PIXELS } from "../../src/verify/decode/jpeg";
import { VerifyError, type Raster } from "../../src/verify/types";
import { encodeJpeg, encodePng, makeWriter, renderSignature } from "../fixtures/generator";
import { makePng, zlib } from "./decode-files";
import { encodeProgressiveJpeg } from "./jpeg-progressive-encode";

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

const W = 37;
const H = 23;
// A diagonal ramp: every grey level differs, so a wrong unfilter or channel order shows.
const level = (x: number, y: number) => (x * 7 + y * 5) % 256;

function expectRamp(r: Raster, f: (x: number, y: number) => number, tolerance = 0) {
  expect([r.width, r.height]).toEqual([W, H]);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const want = f(x, y);
      const got = r.data[y * W + x];
      if (Math.abs(got - want) > tolerance) throw new Error(`pixel ${x},${y}: ${got} instead of ${want}`);
    }
  }
}

describe("PNG decoding to grey", () => {
  it("reads 8-bit grey through all five row filters", async () => {
    const png = await makePng({ width: W, height: H, colourType: 0, bitDepth: 8, pixel: (x, y) => [level(x, y)] });
    expect(sniffFormat(png)).toBe("png");
    expectRamp(await decodePage(png, 0), level);
  });

  it("reads 16-bit grey by its high byte", async () => {
    const png = await makePng({ width: W, height: H, colourType: 0, bitDepth: 16, pixel: (x, y) => [level(x, y) * 257] });
    expectRamp(await decodePage(png, 0), level);
  });

  it("reads 1-bit grey: 0 is ink, 1 is paper", async () => {
    const png = await makePng({ width: W, height: H, colourType: 0, bitDepth: 1, pixel: (x, y) => [(x + y) % 3 === 0 ? 0 : 1] });
    expectRamp(await decodePage(png, 0), (x, y) => ((x + y) % 3 === 0 ? 0 : 255));
  });

  it("reads RGB as luma", async () => {
    const png = await makePng({
      width: W,
      height: H,
      colourType: 2,
      bitDepth: 8,
      pixel: (x, y) => [level(x, y), level(x, y), level(x, y)],
    });
    expectRamp(await decodePage(png, 0), level, 1);
    const red = await makePng({ width: W, height: H, colourType: 2, bitDepth: 8, pixel: () => [255, 0, 0] });
    const r = await decodePage(red, 0);
    expect(r.data[0]).toBeGreaterThan(70);
    expect(r.data[0]).toBeLessThan(85);
  });

  it("composites RGBA and grey+alpha onto white paper", async () => {
    // Left half: opaque black ink. Right half: fully transparent black, which must read as paper.
    const rgba = await makePng({ width: W, height: H, colourType: 6, bitDepth: 8, pixel: (x) => [0, 0, 0, x < W / 2 ? 255 : 0] });
    expectRamp(await decodePage(rgba, 0), (x) => (x < W / 2 ? 0 : 255));
    const ga = await makePng({ width: W, height: H, colourType: 4, bitDepth: 8, pixel: () => [0, 128] });
    expectRamp(await decodePage(ga, 0), () => 127, 1);
  });

  it("reads palette images, with tRNS transparency as paper", async () => {
    const palette: [number, number, number][] = [
      [0, 0, 0],
      [255, 255, 255],
      [100, 100, 100],
      [0, 0, 0],
    ];
    const png = await makePng({
      width: W,
      height: H,
      colourType: 3,
      bitDepth: 2,
      palette,
      trns: new Uint8Array([255, 255, 255, 0]),
      pixel: (x, y) => [(x + 2 * y) % 4],
    });
    expectRamp(await decodePage(png, 0), (x, y) => [0, 255, 100, 255][(x + 2 * y) % 4]);
  });

  it("reads Adam7-interlaced images the same as plain ones", async () => {
    const png = await makePng({ width: W, height: H, colourType: 0, bitDepth: 8, interlace: true, pixel: (x, y) => [level(x, y)] });
    expectRamp(await decodePage(png, 0), level);
  });

  it("agrees with photon's decoder on a photon-written RGBA PNG", async () => {
    const src: Raster = { width: 64, height: 40, data: new Uint8Array(64 * 40).map((_, i) => (i * 13) % 256) };
    const r = await decodePage(encodePng(src), 0);
    expect(Array.from(r.data)).toEqual(Array.from(src.data));
    expect(await pageCount(encodePng(src))).toBe(1);
  });

  it("refuses a tiny PNG declaring 100000 x 100000 pixels from its header, before any pixel memory", async () => {
    const png = await makePng({ width: 4, height: 4, colourType: 0, bitDepth: 8, pixel: () => [0] }, { ihdrSize: [100_000, 100_000] });
    expect(png.length).toBeLessThan(200);
    const { error } = await failure(decodePage(png, 0));
    expect(error.code).toBe("too_many_pixels");
    expect(error.message).toContain("declares 100000x100000 pixels");
  });

  it("stops image data that inflates beyond the declared size (a zlib bomb)", async () => {
    // Declares 100 x 100 grey (10,100 bytes of rows) but carries 64 MB of zeros.
    const bomb = await zlib(new Uint8Array(64 * 1024 * 1024));
    const png = await makePng({ width: 100, height: 100, colourType: 0, bitDepth: 8, pixel: () => [0] }, { idat: bomb });
    const { error } = await failure(decodePage(png, 0));
    expect(error.code).toBe("too_many_pixels");
    // Stopped at the declared 100 rows of 1 filter byte + 100 pixels, not after inflating 64 MB.
    expect(error.message).toContain("expands beyond its declared size (10100 bytes)");
  });

  it("gives corrupt_file for a truncated or damaged PNG, and unsupported_format for other files", async () => {
    const png = await makePng({ width: W, height: H, colourType: 2, bitDepth: 8, pixel: (x, y) => [level(x, y), 0, 0] });
    expect((await failure(decodePage(png.slice(0, png.length - 40), 0))).error.code).toBe("corrupt_file");
    expect((await failure(decodePage(png.slice(0, 20), 0))).error.code).toBe("corrupt_file");
    const garbage = await makePng(
      { width: W, height: H, colourType: 0, bitDepth: 8, pixel: () => [0] },
      { idat: new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]) },
    );
    expect((await failure(decodePage(garbage, 0))).error.code).toBe("corrupt_file");
    expect((await failure(decodePage(new TextEncoder().encode("GIF89a not supported"), 0))).error.code).toBe("unsupported_format");
    expect((await failure(decodePage(png, 1))).error.code).toBe("page_out_of_range");
  });

  it("refuses a file over the byte bound before reading it", async () => {
    const png = await makePng({ width: W, height: H, colourType: 0, bitDepth: 8, pixel: () => [0] });
    expect((await failure(decodeDocument(png, { maxBytes: 50 }))).error.code).toBe("too_large");
  });
});

describe("JPEG decoding to grey", () => {
  const src: Raster = { width: 120, height: 80, data: new Uint8Array(120 * 80).map((_, i) => (i % 120 < 60 ? 30 : 220)) };

  it("decodes a JPEG to grey close to its source", async () => {
    const jpg = encodeJpeg(src, 95);
    expect(sniffFormat(jpg)).toBe("jpeg");
    const pages = await decodeDocument(jpg);
    expect(pages).toHaveLength(1);
    expect(pages[0].width).toBe(120);
    expect(pages[0].data[40 * 120 + 10]).toBeLessThan(45);
    expect(pages[0].data[40 * 120 + 110]).toBeGreaterThan(205);
  });

  it("decodes baseline JPEGs with its own luma decoder, matching photon's reading", async () => {
    const { decodeJpegLuma } = await import("../../src/verify/decode/jpeg-luma");
    const { photonDecodeGrey } = await import("../../src/verify/decode/photon");
    const odd: Raster = { width: 203, height: 77, data: new Uint8Array(203 * 77).map((_, i) => (i * 31) % 256) };
    for (const jpg of [encodeJpeg(src, 90), encodeJpeg(odd, 75)]) {
      const mine = decodeJpegLuma(jpg)!;
      const ref = photonDecodeGrey(jpg, "JPEG");
      expect([mine.width, mine.height]).toEqual([ref.width, ref.height]);
      let maxDiff = 0;
      for (let i = 0; i < ref.data.length; i++) maxDiff = Math.max(maxDiff, Math.abs(mine.data[i] - ref.data[i]));
      expect(maxDiff).toBeLessThanOrEqual(1);
    }
  });

  it("decodes progressive JPEGs (DC successive approximation, AC bands) as photon does", async () => {
    const { decodeJpegLuma } = await import("../../src/verify/decode/jpeg-luma");
    const { photonDecodeGrey } = await import("../../src/verify/decode/photon");
    const sig = renderSignature(makeWriter(6), { height: 75 });
    const jpg = encodeProgressiveJpeg(sig);
    const mine = decodeJpegLuma(jpg)!;
    expect(mine).not.toBeNull();
    const ref = photonDecodeGrey(jpg, "JPEG");
    let vsPhoton = 0;
    let vsSource = 0;
    for (let i = 0; i < ref.data.length; i++) {
      vsPhoton = Math.max(vsPhoton, Math.abs(mine.data[i] - ref.data[i]));
      vsSource = Math.max(vsSource, Math.abs(mine.data[i] - sig.data[i]));
    }
    expect(vsPhoton).toBeLessThanOrEqual(1);
    expect(vsSource).toBeLessThan(20);
    expect((await decodePage(jpg, 0)).width).toBe(sig.width);
    expect((await failure(decodePage(jpg.slice(0, jpg.length - 200), 0))).error.code).toBe("corrupt_file");
  });

  it("decodes a 12 MP phone-size baseline JPEG, beyond what photon may hold", async () => {
    const w = 4032;
    const h = 3024;
    const page: Raster = { width: w, height: h, data: new Uint8Array(w * h).fill(250) };
    for (let y = 1400; y < 1600; y++) page.data.fill(20, y * w + 1000, y * w + 3000);
    expect(w * h).toBeGreaterThan(JPEG_MAX_PIXELS);
    const r = await decodePage(encodeJpeg(page, 80), 0);
    expect([r.width, r.height]).toEqual([w, h]);
    expect(r.data[1500 * w + 2000]).toBeLessThan(40);
    expect(r.data[100 * w + 100]).toBeGreaterThan(240);
  });

  it("turns phone photos upright from their EXIF orientation", async () => {
    // Stored 60 x 20 with ink on the left tenth; an Exif segment says how to turn it.
    const stored: Raster = { width: 60, height: 20, data: new Uint8Array(60 * 20).map((_, i) => (i % 60 < 10 ? 0 : 255)) };
    const jpg = encodeJpeg(stored, 95);
    const withOrientation = (o: number) => {
      const tiff = [0x4d, 0x4d, 0, 0x2a, 0, 0, 0, 8, 0, 1, 0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, o, 0, 0, 0, 0, 0, 0];
      const body = [0x45, 0x78, 0x69, 0x66, 0, 0, ...tiff];
      return new Uint8Array([
        ...jpg.subarray(0, 2),
        0xff,
        0xe1,
        (body.length + 2) >> 8,
        (body.length + 2) & 255,
        ...body,
        ...jpg.subarray(2),
      ]);
    };
    const six = await decodePage(withOrientation(6), 0); // turned 90 degrees clockwise: the left edge is now the top
    expect([six.width, six.height]).toEqual([20, 60]);
    expect(six.data[0]).toBeLessThan(30);
    expect(six.data[19]).toBeLessThan(30);
    expect(six.data[59 * 20]).toBeGreaterThan(225);
    const three = await decodePage(withOrientation(3), 0); // turned 180: the ink is on the right
    expect([three.width, three.height]).toEqual([60, 20]);
    expect(three.data[59]).toBeLessThan(30);
    expect(three.data[0]).toBeGreaterThan(225);
  });

  it("refuses a JPEG whose frame header declares a huge page, without decoding", async () => {
    const jpg = encodeJpeg(src, 90);
    const sof = findSof(jpg);
    const bomb = jpg.slice();
    bomb[sof + 5] = 0xea; // height 60000
    bomb[sof + 6] = 0x60;
    bomb[sof + 7] = 0xea; // width 60000
    bomb[sof + 8] = 0x60;
    const { error } = await failure(decodePage(bomb, 0));
    expect(error.code).toBe("too_many_pixels");
    // Refused on the frame header's 60000x60000 (whichever bound names it first), before photon sees a byte.
    expect(error.message).toMatch(/60000x60000/);
    expect((await failure(decodePage(jpg, 0, { maxPixelsPerPage: 5000 }))).error.code).toBe("too_many_pixels");
  });

  it("turns a truncated or damaged JPEG into corrupt_file (photon's panic never escapes)", async () => {
    const jpg = encodeJpeg(src, 90);
    expect((await failure(decodePage(jpg.slice(0, 300), 0))).error.code).toBe("corrupt_file");
    const damaged = jpg.slice();
    for (let i = 200; i < damaged.length - 2; i += 7) damaged[i] = 0xff;
    const res = await decodePage(damaged, 0).then(
      () => "decoded",
      (e) => (e instanceof VerifyError ? e.code : "untyped"),
    );
    expect(["decoded", "corrupt_file"]).toContain(res);
    // The decoder still works after a failure.
    expect((await decodePage(jpg, 0)).width).toBe(120);
  });
});

function findSof(b: Uint8Array): number {
  for (let i = 2; i < b.length - 1; i++) if (b[i] === 0xff && b[i + 1] === 0xc0) return i;
  throw new Error("no SOF0");
}
