import { VerifyError } from "../types";
import { truncated, u32be } from "./limits";

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
