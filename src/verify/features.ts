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
 *
 * Version 5 adds a third regime, for a capture whose bitonality differs from its references' (a fax or a
 * G4 TIFF against references scanned in grey, or the other way round): the crop's grey share (the share
 * of its ink at intermediate grey levels, about 0 when bitonal) and the vector of the crop as a bitonal
 * scanner would have made it. Binarising throws away the soft stroke edges and the uneven ink that the LBP
 * groups read on a grey scan, so a bitonal signature is compared with binarised references, and a grey
 * one with bitonal references is binarised first (compare.ts).
 *
 * Version 7 averages the vector as captured (and the binarised one) over two sampling grids half a pixel
 * apart (core.ts phasedVector): where the grid falls moved the stroke texture codes as much as a scan 1%
 * coarser did.
 *
 * Version 8 averages the texture groups over four grids and reads the shape groups from the crop's own
 * (core.ts phasedVector), and the core takes the gradient's orientation and the polar sectors without
 * trigonometry (wasm/lib/features.ts), which moves a boundary pixel's bin now and then.
 *
 * Version 9 averages the texture groups over nine grids, every combination of 0, a third and two thirds
 * of a pixel along each axis (core.ts EXTRA_GRIDS).
 *
 * Version 10 adds a shape group matched by dynamic time warping like the column sequence: the orientation
 * strips, the gradient orientations of 32 column strips above and below the ink centroid. When a lead-in
 * or a tail is drawn longer, fixed zones compare the wrong parts of two signatures; the warping lets the
 * strips slide.
 *
 * Version 11 reads the strips' split into above and below, and the column sequence's contours, from the
 * writing's local centre (the ink centroid of the strips around each point, wasm/lib/features.ts
 * stripSplits) instead of the whole signature's centroid and the box's top: a signature that rises or
 * falls moves them where it moves, not everywhere.
 *
 * Version 13 decides whether to even out the paper under uneven light on the closed paper level itself
 * (wasm/lib/preprocess.ts flatten), so that a shadow over a whole band of the crop is evened out rather
 * than taken for ink. (Version 12 was taken, and given back, by E71: stored references of it must not
 * pass for current.)
 */
import type { Core } from "./core";
import { BLURRED_EDGE_WIDTH, edgeWidth } from "./blur-measure";
import type { ReferenceModel } from "./model";
import type { Raster } from "./types";

/**
 * Bump when the core's features change. Stored references of another version are re-extracted from their
 * files and their models rebuilt before use; the shipped parameters are retrained (`npm run train:scoring`,
 * `npm run train:forgeability`).
 */
export const FEATURE_VERSION = 13;

/**
 * A crop whose grey share is at most this is bitonal. Measured on the development sets (every 23rd
 * image, bench/experiments/grey-share.ts): bitonal scans 0, the same after JPEG at quality 30 at most
 * 0.04, with a tail stretched by interpolation at most 0.12 (median 0.05); grey scans at least 0.27, and
 * 0.20 with the strokes thickened by 2 px. A bitonal scan resampled to 200 dpi, rotated or blurred by
 * 0.7 px is grey by then (at least 0.11), and is binarised again before it is compared with bitonal
 * references. The test fixtures' anti-aliased renderings, the nearest to bitonal of what is grey, read
 * 0.10 to 0.29. A bitonal image mistaken for grey costs most (compared as captured with grey references:
 * the robustness suite's 41.7%), so the threshold sits nearer the grey side.
 */
export const BITONAL_GREY_SHARE = 0.08;

/**
 * A grey capture is binarised against bitonal references only when its ink has at least this share of
 * the references' resolution (SignatureFeatures.resolution, the median over references). Thresholding a
 * capture of coarser resolution (a 200 or 150 dpi image against 300 dpi references: 0.67 and 0.5) quantises
 * its stroke edges more coarsely than the references' and made those captures worse, not better
 * (docs/accuracy.md, "Bitonal and grey captures").
 */
export const BINARISE_MIN_RESOLUTION = 0.8;

/**
 * A capture whose ink has less than this share of its references' resolution (the median over references)
 * is compared in the blurred regime (compare.ts regimeFor): resampled to the normalised size, a 200 or
 * 150 dpi capture against 300 dpi references (0.67 and 0.5) has softer stroke edges and texture than the
 * references, as a capture out of focus does, and blurring both sides alike compares them as matched
 * blur does (E31, docs/accuracy.md "Captures of coarser resolution"). The measure is the signature's size
 * in pixels, so a signature written much smaller than its references switches as well: on the clean
 * development sets at most 0.7% of genuine signatures (N = 1) and 2 to 9% of skilled forgeries, which
 * the blurred regime rejects as well.
 */
export const COARSER_RESOLUTION = 0.75;

/**
 * A capture compared as captured is scored as a blend of the two regimes (compare.ts blurredShare): the
 * blurred one's share rises from the scoring parameters' least share (calibration.ts `blend`) to 1 as the
 * capture's edge width goes from BLUR_BLEND_FROM to BLUR_BLEND_TO times the references' median, below the
 * blurred regime's switch (BLURRED_EDGE_WIDTH). A grey scan with 0.7 px of blur sits at 1.27 to 1.37 times
 * its clean image's (10th to 90th percentile, Dutch genuine images), so it is mostly blurred; a clean
 * genuine signature is at most 1.18 times its writer's references (99th percentile), so it gets the least
 * share. A ramp rather than a switch: skilled forgeries, written slowly with
 * softer edges, overlap the band (1.28 at their 95th percentile), and a switch placed anywhere in it either
 * misses the grey scans a little sharper than the rendering or takes those forgeries wholly into the regime
 * that sees less (docs/accuracy.md, "Between sharp and blurred").
 */
export const BLUR_BLEND_FROM = 1.15;
export const BLUR_BLEND_TO = 1.4;

/**
 * A grey capture against bitonal references is binarised at its Otsu threshold (compare.ts), which keeps
 * a sharp scan's strokes. A softer one has spread its thinnest strokes below that threshold: a 1 px line
 * under a blur of 0.7 px peaks at about half the ink's contrast, at 1.0 px at 0.38, and binarising drops
 * it, so the signature lacks strokes its references have. From this edge width on, the blurred regime
 * (which needs no threshold) takes a share of the score, rising linearly to all of it at the blurred
 * regime's switch (BLURRED_EDGE_WIDTH); compare.ts binarisedBlurShare. 1.8 px is a sharp grey scan's own
 * edge (the clean Dutch scans: 1.68 to 1.96 px, 10th to 90th percentile), so a good grey scanner's
 * capture stays binarised, or nearly (at most 0.18 of its score from the blurred regime at 1.96 px); a
 * bitonal scan blurred by 0.7 px measures 1.91 to 2.06 px, by 1.0 px 2.31 to 2.63 (docs/accuracy.md, "A
 * soft grey capture against bitonal references", E51).
 */
export const BINARISED_BLUR_FROM = 1.8;

export interface SignatureFeatures {
  version: number;
  /** Base64 of the little-endian f32 feature vector. */
  vector: string;
  /**
   * Version 4: base64 of the feature vector of the normalised image blurred by BLUR_SIGMA (core.ts), the
   * vector a blurred questioned signature is compared by, and the second view a signature compared as
   * captured is blended with (compare.ts).
   */
  blurred?: string;
  /**
   * Version 4: the lower quartile of the crop's edge widths in its own pixels (blur-measure.ts), null
   * when nothing could be measured: above BLURRED_EDGE_WIDTH the capture is blurred (compare.ts).
   */
  edgeWidth?: number | null;
  /**
   * Version 5: base64 of the feature vector of the crop binarised at its Otsu threshold, the vector
   * compared when the other side is bitonal and this one is not (compare.ts). Absent for a bitonal crop,
   * whose own vector is that already.
   */
  binarised?: string;
  /** Version 5: the share of the crop's ink at intermediate grey levels (core.ts); see isBitonal. */
  greyShare?: number;
  /** Version 5: the crop's pixels per pixel of the normalised image, along each side (core.ts). */
  resolution?: number;
  /**
   * Set on a questioned signature extracted against its references in another regime than as captured
   * (check-features.ts extractForCheck): `vector` is then that regime's vector, and compareToModel compares
   * it in that regime. A binarised one may carry its blurred vector too (`blurred`), for a soft grey
   * capture whose score blends in the blurred regime's (compare.ts binarisedBlurShare).
   */
  regime?: "blurred" | "binarised";
  /** False when the crop held no ink. */
  inkFound: boolean;
  /** The ink's tight box as fractions of the raster (x, y, w, h in [0, 1]). */
  inkBox: { x: number; y: number; w: number; h: number };
}

const cache = new WeakMap<SignatureFeatures, Float32Array>();

/**
 * A reference's features: its own vector, the blurred one, and the binarised one when it is grey, since
 * any later check may be blurred or bitonal. A questioned signature carries only the vectors its check
 * compares (check-features.ts): one, or two when its score blends in the blurred regime's.
 */
export function extractFeatures(core: Core, signature: Raster): SignatureFeatures {
  const width = roundMeasure(edgeWidth(signature));
  const { main } = core.extract(signature, [], { blurred: true, binarised: (share) => !isBitonal(share) });
  return featuresOf(signature, main, width, main.vector, {
    ...(main.inkFound ? { blurred: encodeVector(main.blurred) } : {}),
    ...(main.binarised ? { binarised: encodeVector(main.binarised) } : {}),
  });
}

/**
 * The serialisable features of a crop from what the core measured, the vector it is compared by, and the
 * other regimes' vectors or the regime it was extracted in (`extra`).
 */
export function featuresOf(
  signature: Raster,
  m: { greyShare: number; resolution: number; inkFound: boolean; inkBox: { x: number; y: number; w: number; h: number } },
  edgeWidthPx: number | null,
  vector: Float32Array,
  extra: Pick<SignatureFeatures, "blurred" | "binarised" | "regime"> = {},
): SignatureFeatures {
  const f: SignatureFeatures = {
    version: FEATURE_VERSION,
    vector: encodeVector(vector),
    ...extra,
    greyShare: roundMeasure(m.greyShare),
    resolution: roundMeasure(m.resolution),
    edgeWidth: m.inkFound ? edgeWidthPx : null,
    inkFound: m.inkFound,
    inkBox: {
      x: m.inkBox.x / signature.width,
      y: m.inkBox.y / signature.height,
      w: m.inkBox.w / signature.width,
      h: m.inkBox.h / signature.height,
    },
  };
  cache.set(f, vector);
  return f;
}

/** A capture is blurred when its sharpest edges are wider than BLURRED_EDGE_WIDTH (blur-measure.ts). */
export function isBlurred(edgeWidthPx: number | null | undefined): boolean {
  return edgeWidthPx !== null && edgeWidthPx !== undefined && edgeWidthPx > BLURRED_EDGE_WIDTH;
}

/** A measure as stored: to 0.001. */
export function roundMeasure(v: number): number;
export function roundMeasure(v: number | null): number | null;
export function roundMeasure(v: number | null): number | null {
  return v === null ? null : Math.round(v * 1000) / 1000;
}

/** A crop is bitonal when almost none of its ink is at an intermediate grey level (BITONAL_GREY_SHARE). */
export function isBitonal(greyShare: number | undefined): boolean {
  return greyShare !== undefined && greyShare <= BITONAL_GREY_SHARE;
}

/** Most of the model's usable references are bitonal. */
export function referencesBitonal(model: ReferenceModel): boolean {
  return mostlyBitonal(model.refs.filter((r) => !r.outlier).map((r) => r.features));
}

/** The median grey share of these signatures (those that have one) is a bitonal crop's. */
export function mostlyBitonal(signatures: readonly SignatureFeatures[]): boolean {
  const m = median(signatures.map((f) => f.greyShare));
  return m !== null && isBitonal(m);
}

/** The median of the numbers among `values`; null when there is none. */
export function median(values: readonly (number | null | undefined)[]): number | null {
  const v = values.filter((x): x is number => typeof x === "number").sort((a, b) => a - b);
  if (v.length === 0) return null;
  const m = v.length >> 1;
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

/** The same signature seen in the blurred regime: its blurred vector in place of the sharp one. */
export function blurredView(f: SignatureFeatures): SignatureFeatures {
  return { version: f.version, vector: f.blurred ?? f.vector, inkFound: f.inkFound, inkBox: f.inkBox };
}

/** The same signature seen in the binarised regime: a bitonal crop's own vector, else its binarised one. */
export function binarisedView(f: SignatureFeatures): SignatureFeatures {
  return { version: f.version, vector: f.binarised ?? f.vector, inkFound: f.inkFound, inkBox: f.inkBox };
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
