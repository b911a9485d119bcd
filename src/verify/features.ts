/**
 * Signature features: what the WASM core extracts from a signature crop, in a JSON-serialisable form.
 *
 *   extractFeatures(core, signature: Raster, opts?): SignatureFeatures
 *   featureVector(features): Float32Array          (decoded once per object, cached)
 *
 * The vector holds only shape: ink weights relative to the image's own grey levels, tight crop, size
 * normalisation keeping the aspect ratio, then zoned HOG, uniform LBP, contour-direction co-occurrence,
 * ink mass per zone, projection profiles and a column sequence (upper and lower contour, density,
 * transitions) that the core matches by dynamic time warping (layout in wasm/lib/layout.ts). Absolute ink
 * darkness and other scanner traces do not reach it: ink weights are relative to the image's own paper and
 * ink levels, and isolated specks are left out of the ink box. The shape groups (HOG, ink mass, profiles,
 * co-occurrence, column sequence) are computed on the ink redrawn at one mean stroke width (version 3,
 * wasm/lib/stroke.ts); the LBP groups keep the stroke's own texture.
 *
 * Version 4 adds a second regime for blurred captures (a phone photo out of focus): the crop's edge width
 * (blur-measure.ts) and the vector of the normalised image blurred by BLUR_SIGMA (core.ts). A blurred
 * questioned signature is compared by that vector against its references' blurred vectors (compare.ts),
 * since blur changes the stroke texture the sharp vector reads but leaves blurred texture comparable.
 */
import type { Core } from "./core";
import { BLURRED_EDGE_WIDTH, edgeWidth } from "./blur-measure";
import type { Raster } from "./types";

/**
 * Bump when the core's features change. Stored references of another version are re-extracted from their
 * files and their models rebuilt before use; the shipped parameters are retrained (`npm run train:scoring`,
 * `npm run train:forgeability`).
 */
export const FEATURE_VERSION = 4;

export interface SignatureFeatures {
  version: number;
  /** Base64 of the little-endian f32 feature vector. */
  vector: string;
  /**
   * Version 4: base64 of the feature vector of the normalised image blurred by BLUR_SIGMA (core.ts), the
   * vector a blurred questioned signature is compared by (compare.ts).
   */
  blurred?: string;
  /**
   * Version 4: the lower quartile of the crop's edge widths in its own pixels (blur-measure.ts), null
   * when nothing could be measured: above BLURRED_EDGE_WIDTH the capture is blurred (compare.ts).
   */
  edgeWidth?: number | null;
  /** False when the crop held no ink. */
  inkFound: boolean;
  /** The ink's tight box as fractions of the raster (x, y, w, h in [0, 1]). */
  inkBox: { x: number; y: number; w: number; h: number };
}

const cache = new WeakMap<SignatureFeatures, Float32Array>();

/**
 * `blurredVector`: "always" for a reference (any later check may be blurred), "when-blurred" for a
 * questioned signature, whose blurred vector is compared only when its own capture is blurred.
 */
export function extractFeatures(
  core: Core,
  signature: Raster,
  opts: { blurredVector: "always" | "when-blurred" } = { blurredVector: "always" },
): SignatureFeatures {
  const width = roundWidth(edgeWidth(signature));
  const withBlurred = opts.blurredVector === "always" || isBlurred(width);
  const { main } = core.extract(signature, [], withBlurred);
  const f: SignatureFeatures = {
    version: FEATURE_VERSION,
    vector: encodeVector(main.vector),
    ...(withBlurred && main.inkFound ? { blurred: encodeVector(main.blurred) } : {}),
    edgeWidth: main.inkFound ? width : null,
    inkFound: main.inkFound,
    inkBox: {
      x: main.inkBox.x / signature.width,
      y: main.inkBox.y / signature.height,
      w: main.inkBox.w / signature.width,
      h: main.inkBox.h / signature.height,
    },
  };
  cache.set(f, main.vector);
  return f;
}

/** A capture is blurred when its sharpest edges are wider than BLURRED_EDGE_WIDTH (blur-measure.ts). */
export function isBlurred(edgeWidthPx: number | null | undefined): boolean {
  return edgeWidthPx !== null && edgeWidthPx !== undefined && edgeWidthPx > BLURRED_EDGE_WIDTH;
}

function roundWidth(w: number | null): number | null {
  return w === null ? null : Math.round(w * 1000) / 1000;
}

/** The same signature seen in the blurred regime: its blurred vector in place of the sharp one. */
export function blurredView(f: SignatureFeatures): SignatureFeatures {
  return { version: f.version, vector: f.blurred ?? f.vector, inkFound: f.inkFound, inkBox: f.inkBox };
}

export function featureVector(f: SignatureFeatures): Float32Array {
  let v = cache.get(f);
  if (!v) {
    v = decodeVector(f.vector);
    cache.set(f, v);
  }
  return v;
}

export function encodeVector(v: Float32Array): string {
  const bytes = new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

export function decodeVector(b64: string): Float32Array {
  const s = atob(b64);
  const bytes = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) bytes[i] = s.charCodeAt(i);
  return new Float32Array(bytes.buffer);
}
