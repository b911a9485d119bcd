/**
 * Comparing a questioned signature with a subject's reference model.
 *
 *   compareToModel(core, features, model, params?): Comparison
 *     score     calibrated to [0, 1], the same meaning for every subject (see calibration.ts); the policy
 *               thresholds in src/domain/policy-defaults.ts apply to it
 *     distance  the per-writer normalised distance (mean z over feature groups; 0 = as far as a typical
 *               genuine signature, higher = further)
 *     bestRefId the reference that matched best
 *     regions   the zones that deviated most from that reference, as boxes in [0, 1] coordinates of the
 *               questioned signature's raster, with deviation = zone distance / mean zone distance (1 = typical)
 */
import type { Core, VectorKind } from "./core";
import { blendedScore, DEFAULT_PARAMS, scoreOf, type ScoringParams } from "./calibration";
import { BLURRED_EDGE_WIDTH } from "./blur-measure";
import {
  BINARISE_MIN_RESOLUTION,
  BINARISED_BLUR_FROM,
  BLUR_BLEND_FROM,
  BLUR_BLEND_TO,
  binarisedView,
  COARSER_RESOLUTION,
  blurredView,
  FEATURE_VERSION,
  featureVector,
  isBitonal,
  isBlurred,
  median,
  referencesBitonal,
  type SignatureFeatures,
} from "./features";
import { aggregate, LEARNED_DISTANCE_FLOOR, type ReferenceModel } from "./model";

export interface Region {
  box: { x: number; y: number; w: number; h: number };
  deviation: number;
}

export interface Comparison {
  score: number;
  distance: number;
  bestRefId: string;
  regions: Region[];
  /**
   * Set when the questioned signature was compared in another regime than as it is: blurred (a capture
   * out of focus) or binarised (its bitonality differs from its references'); calibration.ts.
   */
  regime?: Exclude<Regime, "sharp">;
  /**
   * Set when the score is a blend of the signature compared as captured (or binarised, for a grey capture
   * against bitonal references) and in the blurred regime: the blurred comparison's share, in (0, 1]
   * (blurredShare: the parameters' least share, more for a capture blurrier than its references;
   * binarisedBlurShare: by the edge width of a soft grey capture).
   */
  blurredShare?: number;
}

/** The comparison regimes (regimeFor). */
export type Regime = "sharp" | "blurred" | "binarised";

export class ModelMismatchError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ModelMismatchError";
  }
}

/** Groups used to explain: HOG and LBP on the 4x8 grid. */
const ZONE_ROWS = 4;
const ZONE_COLS = 8;
const REGION_COUNT = 3;

/**
 * The vector the classifier reads, per group: z of the k-nearest distance against the subject's statistics,
 * log of that distance against the population, log of it against the subject's mean, and log of the
 * nearest reference's distance against the subject's mean. The last one is there for writers whose
 * signatures come in variants (a tail drawn long or short, a flourish or none): a genuine signature is
 * then close to the one reference of its own variant and far from the rest, which the k-nearest mean
 * blurs; with more references, one of them is more likely to be of the same variant.
 */
export function comparisonVector(
  dist: Float32Array,
  refCount: number,
  groups: number,
  model: ReferenceModel,
  params: ScoringParams,
): { x: number[]; z: number } {
  return comparisonVectorOf(aggregate(dist, refCount, groups, params.k), aggregate(dist, refCount, groups, 1), groups, model, params);
}

/** comparisonVector from the aggregated per-group distances: to the k nearest (d) and to the nearest (d1). */
export function comparisonVectorOf(
  d: number[],
  d1: number[],
  groups: number,
  model: ReferenceModel,
  params: ScoringParams,
): { x: number[]; z: number } {
  const x: number[] = [];
  let zSum = 0;
  for (let g = 0; g < groups; g++) {
    const z = (d[g] - model.stats.mean[g]) / model.stats.spread[g];
    x.push(z);
    zSum += z;
  }
  for (let g = 0; g < groups; g++) x.push(Math.log((d[g] + 1e-6) / (params.prior.mean[g] + 1e-6)));
  // The distance relative to the subject's mean alone: steadier than z when the spread rests on few references.
  for (let g = 0; g < groups; g++) x.push(Math.log((d[g] + 1e-6) / (model.stats.mean[g] + 1e-6)));
  for (let g = 0; g < groups; g++) x.push(Math.log((d1[g] + 1e-6) / (model.stats.mean[g] + 1e-6)));
  return { x, z: zSum / groups };
}

/** The regime a questioned signature is compared in, the reference model it is compared with, and how it is scored. */
export interface RegimeChoice {
  regime: Regime;
  model: ReferenceModel;
  params: ScoringParams;
  /**
   * The share of the score that comes from the blurred regime instead, 0 to 1: for a signature compared as
   * captured ("sharp"), blurredShare; for a grey capture binarised against bitonal references,
   * binarisedBlurShare. 0 otherwise.
   */
  blurredShare: number;
}

/**
 * Where a questioned signature with these measures is compared (the one place that decides it, for
 * compareToModel and for a check's extraction, check-features.ts):
 * - blurred (a phone photo out of focus), or of coarser resolution than its references (a 150 dpi scan
 *   against 300 dpi references, COARSER_RESOLUTION), against sharp references: in the blurred regime, by
 *   its blurred vector against the references' blurred vectors (the model's `blurred` sub-model,
 *   `params.blurred`). References blurred alike are left as they are: matched blur compares as well as
 *   matched sharpness.
 * - bitonal (a fax, a G4 TIFF) against references scanned in grey: in the binarised regime, by its own
 *   vector against the references as a bitonal scanner would have made them (`binarised` sub-model and
 *   parameters).
 * - grey against bitonal references, with enough resolution (resolutionToBinarise): in the binarised
 *   regime, by its binarised vector against the references as they are; a soft capture's score blends in
 *   the blurred regime's (binarisedBlurShare).
 * - anything else as captured ("sharp"). So is a regime whose sub-model or parameters are missing. Its
 *   score blends in the blurred regime's, the more so the blurrier the capture is than its references
 *   (blurredShare).
 */
export function regimeFor(
  q: Pick<SignatureFeatures, "edgeWidth" | "greyShare" | "resolution">,
  model: ReferenceModel,
  params: ScoringParams = DEFAULT_PARAMS,
): RegimeChoice {
  if (params.blurred && model.blurred && (isBlurred(q.edgeWidth) || coarserThanReferences(q, model)) && !referencesBlurred(model)) {
    return { regime: "blurred", model: model.blurred, params: params.blurred, blurredShare: 0 };
  }
  if (q.greyShare !== undefined) {
    const bitonal = isBitonal(q.greyShare);
    const refsBitonal = referencesBitonal(model);
    if (!bitonal && refsBitonal && resolutionToBinarise(q, model)) {
      return { regime: "binarised", model, params, blurredShare: binarisedBlurShare(q, model, params) };
    }
    if (bitonal && !refsBitonal && params.binarised && model.binarised) {
      return { regime: "binarised", model: model.binarised, params: params.binarised, blurredShare: 0 };
    }
  }
  return { regime: "sharp", model, params, blurredShare: blurredShare(q, model, params) };
}

/**
 * How much of a capture's score comes from the blurred regime when it is compared as captured: the
 * parameters' least share (params.blend; 0 without) up to BLUR_BLEND_FROM times the references' median
 * edge width, rising linearly to 1 at BLUR_BLEND_TO (features.ts). A grey scan with a little blur is below
 * the blurred regime's switch, yet its texture is softer than its references': as captured it reads as
 * another hand, and in the blurred regime alone it would give away a slow forgery's softer edges. The
 * blend follows the measure instead of cutting it at one point.
 */
export function blurredShare(
  q: Pick<SignatureFeatures, "edgeWidth">,
  model: ReferenceModel,
  params: ScoringParams = DEFAULT_PARAMS,
): number {
  if (!params.blurred || !model.blurred) return 0;
  const refs = referencesEdgeWidth(model);
  if (refs !== null && isBlurred(refs)) return 0;
  const least = params.blend?.share ?? 0;
  if (q.edgeWidth === null || q.edgeWidth === undefined || refs === null || !(refs > 0)) return least;
  const ramp = Math.min(1, Math.max(0, (q.edgeWidth / refs - BLUR_BLEND_FROM) / (BLUR_BLEND_TO - BLUR_BLEND_FROM)));
  return least + (1 - least) * ramp;
}

/**
 * How much of a grey capture's score comes from the blurred regime when it is binarised against bitonal
 * references: 0 up to an edge width of BINARISED_BLUR_FROM (features.ts), rising linearly to 1 at the
 * blurred regime's switch (BLURRED_EDGE_WIDTH, blur-measure.ts). A soft scan loses its thinnest strokes to
 * the threshold, while the blurred regime compares the ink as it is, blurred on both sides alike. None when
 * the references are blurred themselves, as for blurredShare.
 */
export function binarisedBlurShare(
  q: Pick<SignatureFeatures, "edgeWidth">,
  model: ReferenceModel,
  params: ScoringParams = DEFAULT_PARAMS,
): number {
  if (!params.blurred || !model.blurred || q.edgeWidth === null || q.edgeWidth === undefined || referencesBlurred(model)) return 0;
  return Math.min(1, Math.max(0, (q.edgeWidth - BINARISED_BLUR_FROM) / (BLURRED_EDGE_WIDTH - BINARISED_BLUR_FROM)));
}

/** The vector of the questioned signature that a regime reads: a bitonal capture's own is already binarised. */
export function vectorKindFor(regime: Regime, greyShare: number | undefined): VectorKind {
  return regime === "binarised" && isBitonal(greyShare) ? "sharp" : regime;
}

/** The questioned signature as its regime reads it; null when it lacks that vector (a blank crop). */
function viewIn(features: SignatureFeatures, kind: VectorKind): SignatureFeatures | null {
  if (kind === "blurred") return features.blurred ? blurredView(features) : null;
  if (kind === "binarised") return features.binarised ? binarisedView(features) : null;
  return features;
}

export function compareToModel(
  core: Core,
  features: SignatureFeatures,
  model: ReferenceModel,
  params: ScoringParams = DEFAULT_PARAMS,
): Comparison {
  if (model.featureVersion !== FEATURE_VERSION || features.version !== FEATURE_VERSION) {
    throw new ModelMismatchError("the reference model was built with other features: rebuild it");
  }
  const choice = regimeFor(features, model, params);
  // Outside the comparison as captured, only a soft grey capture binarised against bitonal references has a
  // blurred share (binarisedBlurShare): its scores mix as they are.
  const mixed = (own: number, inBlurred: number) => (1 - choice.blurredShare) * own + choice.blurredShare * inBlurred;
  if (features.regime !== undefined) {
    // Extracted against this model in that regime (check-features.ts): `vector` is the regime's own.
    if (features.regime !== choice.regime) throw new ModelMismatchError("the signature was extracted for another reference model");
    const c = { ...compareAsIs(core, features, choice.model, choice.params), regime: features.regime };
    return withBlurred(core, features, c, choice.blurredShare, model, params, mixed);
  }
  const { regime } = choice;
  if (regime !== "sharp") {
    const view = viewIn(features, vectorKindFor(regime, features.greyShare));
    if (view) {
      const c = { ...compareAsIs(core, view, choice.model, choice.params), regime };
      return withBlurred(core, features, c, choice.blurredShare, model, params, mixed);
    }
  }
  // Only a choice as captured blends here: a binarised choice that lacks its vector (a rendering without
  // ink) is compared as captured alone, whichever way it was extracted.
  const w = regime === "sharp" ? choice.blurredShare : 0;
  return withBlurred(core, features, compareAsIs(core, features, model, params), w, model, params, (own, inBlurred) =>
    blendedScore(own, inBlurred, w, model.refs.filter((r) => !r.outlier).length, params),
  );
}

/**
 * A comparison blended with the blurred regime's, which takes the share `w` of its distance and, through
 * `score`, of its score (the blend of a comparison as captured, with its shift; the plain mix of a
 * binarised one). The explanation (best reference, regions) stays the comparison's own: that is what a
 * reviewer sees. With no share, or without the blurred vector (a signature stored before the blend), the
 * comparison is returned as it is.
 */
function withBlurred(
  core: Core,
  features: SignatureFeatures,
  c: Comparison,
  w: number,
  model: ReferenceModel,
  params: ScoringParams,
  score: (own: number, inBlurred: number) => number,
): Comparison {
  if (!(w > 0) || !features.inkFound || !features.blurred || !model.blurred || !params.blurred) return c;
  const blurred = compareAsIs(core, blurredView(features), model.blurred, params.blurred);
  return {
    ...c,
    score: score(c.score, blurred.score),
    distance: (1 - w) * c.distance + w * blurred.distance,
    blurredShare: Math.round(w * 1000) / 1000,
  };
}

/** Compare this vector with these references as it is, scored with `params`. */
function compareAsIs(core: Core, features: SignatureFeatures, model: ReferenceModel, params: ScoringParams): Comparison {
  const active = model.refs.filter((r) => !r.outlier);
  if (active.length === 0) throw new ModelMismatchError("the reference model has no usable reference");
  const q = featureVector(features);
  const G = core.groupCount;
  const refVectors = active.map((r) => featureVector(r.features));
  const dist = core.groupDistances(q, refVectors);

  // Learned references lower the distance by at most LEARNED_DISTANCE_FLOOR of the anchors' own (model.ts).
  let d = aggregate(dist, active.length, G, params.k);
  let d1 = aggregate(dist, active.length, G, 1);
  const anchorRows = active.map((r, i) => (r.learned ? -1 : i)).filter((i) => i >= 0);
  if (anchorRows.length > 0 && anchorRows.length < active.length) {
    const anchorDist = new Float32Array(anchorRows.length * G);
    anchorRows.forEach((r, n) => anchorDist.set(dist.subarray(r * G, (r + 1) * G), n * G));
    const dAnchors = aggregate(anchorDist, anchorRows.length, G, params.k);
    const d1Anchors = aggregate(anchorDist, anchorRows.length, G, 1);
    d = d.map((v, g) => Math.max(v, LEARNED_DISTANCE_FLOOR * dAnchors[g]));
    d1 = d1.map((v, g) => Math.max(v, LEARNED_DISTANCE_FLOOR * d1Anchors[g]));
  }
  const { x, z } = comparisonVectorOf(d, d1, G, model, params);
  const score = features.inkFound ? scoreOf(x, active.length, params) : 0;

  // Best reference: smallest distance relative to the subject's typical distance, over all groups.
  let best = 0;
  let bestD = Infinity;
  for (let r = 0; r < active.length; r++) {
    let t = 0;
    for (let g = 0; g < G; g++) t += dist[r * G + g] / (model.stats.mean[g] + 1e-6);
    if (t < bestD) {
      bestD = t;
      best = r;
    }
  }
  return {
    score,
    distance: z,
    bestRefId: active[best].refId,
    regions: deviatingRegions(core, q, refVectors[best], features.inkBox),
  };
}

/** The references' median edge width is a blurred capture's (features.ts isBlurred). */
function referencesBlurred(model: ReferenceModel): boolean {
  return isBlurred(referencesEdgeWidth(model));
}

/** The usable references' median edge width; null when none has one. */
function referencesEdgeWidth(model: ReferenceModel): number | null {
  return median(model.refs.filter((r) => !r.outlier).map((r) => r.features.edgeWidth));
}

/** The references' median resolution (features.ts SignatureFeatures.resolution); null when none has one. */
function referencesResolution(model: ReferenceModel): number | null {
  return median(model.refs.filter((r) => !r.outlier).map((r) => r.features.resolution));
}

/** The questioned ink has at least BINARISE_MIN_RESOLUTION of the references' median resolution. */
function resolutionToBinarise(features: Pick<SignatureFeatures, "resolution">, model: ReferenceModel): boolean {
  const refs = referencesResolution(model);
  return features.resolution !== undefined && refs !== null && features.resolution >= BINARISE_MIN_RESOLUTION * refs;
}

/** The questioned ink has less than COARSER_RESOLUTION of the references' median resolution. */
function coarserThanReferences(features: Pick<SignatureFeatures, "resolution">, model: ReferenceModel): boolean {
  const refs = referencesResolution(model);
  return features.resolution !== undefined && features.resolution > 0 && refs !== null && features.resolution < COARSER_RESOLUTION * refs;
}

function zoneChi2(a: Float32Array, b: Float32Array, from: number, len: number): number {
  let t = 0;
  for (let i = from; i < from + len; i++) {
    const s = a[i] + b[i];
    if (s > 0) t += ((a[i] - b[i]) * (a[i] - b[i])) / s;
  }
  return t;
}

/** The 4x8 zones where the questioned signature differs most from the reference (HOG + LBP per zone). */
export function deviatingRegions(core: Core, q: Float32Array, ref: Float32Array, inkBox: SignatureFeatures["inkBox"]): Region[] {
  const hog = core.groupOffsets[2];
  const lbp = core.groupOffsets[6];
  const hogBins = (core.groupOffsets[3] - hog) / (ZONE_ROWS * ZONE_COLS);
  const lbpBins = 59;
  const zones: { r: number; c: number; d: number }[] = [];
  let total = 0;
  for (let r = 0; r < ZONE_ROWS; r++) {
    for (let c = 0; c < ZONE_COLS; c++) {
      const z = r * ZONE_COLS + c;
      const d = zoneChi2(q, ref, hog + z * hogBins, hogBins) + zoneChi2(q, ref, lbp + z * lbpBins, lbpBins);
      zones.push({ r, c, d });
      total += d;
    }
  }
  const mean = total / zones.length;
  if (!(mean > 0)) return [];
  return zones
    .sort((a, b) => b.d - a.d)
    .slice(0, REGION_COUNT)
    .map(({ r, c, d }) => ({
      box: {
        x: inkBox.x + (c / ZONE_COLS) * inkBox.w,
        y: inkBox.y + (r / ZONE_ROWS) * inkBox.h,
        w: inkBox.w / ZONE_COLS,
        h: inkBox.h / ZONE_ROWS,
      },
      deviation: Math.round((d / mean) * 1000) / 1000,
    }));
}
