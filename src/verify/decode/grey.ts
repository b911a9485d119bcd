import type { Raster } from "../types";

/**
 * RGBA to grey (Rec. 601 luma), alpha composited onto white paper: a transparent pixel is paper,
 * never ink, whatever colour it carries.
 */
export function rgbaToGrey(rgba: Uint8Array, width: number, height: number): Raster {
  const n = width * height;
  const out = new Uint8Array(n);
  for (let i = 0, j = 0; i < n; i++, j += 4) {
    const a = rgba[j + 3];
    const y = (rgba[j] * 77 + rgba[j + 1] * 150 + rgba[j + 2] * 29 + 128) >> 8;
    out[i] = a === 255 ? y : (y * a + 255 * (255 - a) + 127) / 255;
  }
  return { width, height, data: out };
}
