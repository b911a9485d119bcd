import { VerifyError, type Raster } from "../types";
import { inflateBounded } from "./inflate";
import { RowDecoder, expectedBytes, type SampleLayout } from "./rows";
import { truncated, u32be } from "./limits";
import { concatBytes } from "../../util/bytes";

export interface PngHeader {
  width: number;
  height: number;
  bitDepth: number;
  colourType: number;
  interlace: number;
}

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** The IHDR chunk, which the format requires to come first. */
export function pngHeader(b: Uint8Array): PngHeader {
  for (let i = 0; i < 8; i++) if (b[i] !== SIGNATURE[i]) throw new VerifyError("corrupt_file", "the PNG signature is damaged");
  if (b.length < 33) throw truncated("PNG");
  const len = u32be(b, 8);
  const type = String.fromCharCode(b[12], b[13], b[14], b[15]);
  if (type !== "IHDR" || len !== 13) throw new VerifyError("corrupt_file", "the PNG does not start with an IHDR chunk");
  const h: PngHeader = {
    width: u32be(b, 16),
    height: u32be(b, 20),
    bitDepth: b[24],
    colourType: b[25],
    interlace: b[28],
  };
  const okDepths: Record<number, number[]> = { 0: [1, 2, 4, 8, 16], 2: [8, 16], 3: [1, 2, 4, 8], 4: [8, 16], 6: [8, 16] };
  if (!okDepths[h.colourType]?.includes(h.bitDepth)) {
    throw new VerifyError("corrupt_file", `the PNG declares an invalid colour type ${h.colourType} with bit depth ${h.bitDepth}`);
  }
  return h;
}

/**
 * A streaming PNG decoder straight to grey: IDAT data is inflated chunk by chunk and unfiltered row by row
 * into the page raster, so the page costs one byte per pixel however wide its colour format is, and a
 * stream that inflates past the size IHDR declares is stopped as a bomb.
 */
export async function decodePngGrey(b: Uint8Array, header: PngHeader): Promise<Raster> {
  const idat: Uint8Array[] = [];
  let palette: Uint8Array | undefined;
  let trns: Uint8Array | undefined;
  let o = 8;
  let sawEnd = false;
  while (o + 8 <= b.length) {
    const len = u32be(b, o);
    const type = String.fromCharCode(b[o + 4], b[o + 5], b[o + 6], b[o + 7]);
    const start = o + 8;
    if (start + len > b.length) throw truncated("PNG");
    const body = b.subarray(start, start + len);
    if (type === "IDAT") idat.push(body);
    else if (type === "PLTE") palette = body;
    else if (type === "tRNS") trns = body;
    else if (type === "IEND") {
      sawEnd = true;
      break;
    }
    o = start + len + 4;
  }
  if (idat.length === 0) throw new VerifyError("corrupt_file", sawEnd ? "the PNG has no image data" : "the PNG is truncated");

  const ct = header.colourType;
  const layout: SampleLayout = {
    width: header.width,
    height: header.height,
    bitsPerComponent: header.bitDepth,
    channels: { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 }[ct] ?? 1,
    model: ct === 3 ? "indexed" : ct === 2 || ct === 6 ? "rgb" : "grey",
    alpha: ct === 4 || ct === 6,
    pngFilters: true,
    adam7: header.interlace === 1,
  };
  if (ct === 3) {
    if (!palette || palette.length % 3 !== 0) throw new VerifyError("corrupt_file", "the palette PNG has no valid PLTE chunk");
    const lut = new Uint8Array(256);
    for (let i = 0; i < palette.length / 3; i++) {
      const y = (palette[3 * i] * 77 + palette[3 * i + 1] * 150 + palette[3 * i + 2] * 29 + 128) >> 8;
      const a = trns && i < trns.length ? trns[i] : 255;
      lut[i] = Math.round((y * a + 255 * (255 - a)) / 255);
    }
    layout.lut = lut;
  } else if (trns && (ct === 0 || ct === 2)) {
    const vals: number[] = [];
    for (let i = 0; i + 1 < trns.length; i += 2) vals.push((trns[i] << 8) | trns[i + 1]);
    layout.transparent = vals;
  }

  const decoder = new RowDecoder(layout);
  const compressed = idat.length === 1 ? idat[0] : concatBytes(idat);
  await inflateBounded(compressed, expectedBytes(layout), (c) => decoder.push(c), {
    what: "PNG image data",
    page: 0,
    allowTruncated: false,
  });
  if (!decoder.complete) throw new VerifyError("corrupt_file", "the PNG image data ends before the last row", 0);
  return decoder.raster;
}
