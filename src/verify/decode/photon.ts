import { PhotonImage } from "@cf-wasm/photon";
import type { Raster } from "../types";
import { rgbaToGrey } from "./grey";
import { wrapDecoder } from "./limits";

/**
 * Decode a PNG or JPEG with photon and reduce it to grey. Photon holds the page as RGBA inside its own
 * WASM memory, so callers must have checked the declared dimensions first. A Rust panic surfaces as a
 * WebAssembly RuntimeError; wrapDecoder turns it (and any decode error) into corrupt_file.
 */
export function photonDecodeGrey(bytes: Uint8Array, format: string, page?: number): Raster {
  return wrapDecoder(format, page, () => {
    const img = PhotonImage.new_from_byteslice(bytes);
    try {
      const width = img.get_width();
      const height = img.get_height();
      const rgba = img.get_raw_pixels();
      return rgbaToGrey(rgba, width, height);
    } finally {
      img.free();
    }
  });
}
