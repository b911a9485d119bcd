/**
 * Scoring parameters: everything in scoring that was learned or tuned, trained by bench/train/train.ts on
 * development writers only and shipped as src/verify/data/scoring.json. Nothing is fetched at run time.
 *
 * A comparison yields a vector (see compare.ts comparisonVector): per feature group, the questioned
 * signature's distance to its nearest references z-normalised by the subject's own reference statistics,
 * the same distance relative to the population and to the subject's mean, and the distance to the single
 * nearest reference relative to the subject's mean (four values per group). A linear model turns it into a logit; a logistic map
 * (fitted on development writers, per band of reference counts) turns that into the calibrated score in
 * [0, 1], so one set of policy thresholds means the same for every subject: the slope comes from a Platt fit
 * and the offset puts the default policy's `approve` threshold (0.7) where about 2% of skilled forgeries
 * of development writers would pass. On those writers, `auto_approve` (0.9) then lets through well under
 * 1%, and below `flag` (0.4) lies the bulk of forgeries.
 */
import shipped from "./data/scoring.json";

export interface ScoringParams {
  version: number;
  featureVersion: number;
  /** Datasets whose writers trained these numbers (the accuracy bench never reports on them). */
  trainedOn: string[];
  /** Distances to the k nearest references are averaged. */
  k: number;
  /** Population statistics of a genuine signature's distance to a subject's references, per group. */
  prior: { mean: number[]; spread: number[] /** weight of the prior, in references */; strength: number };
  /** Per group: genuine-to-genuine distance over reference-to-synthetic-variant distance. */
  variantRatio: number[];
  /** The spread never falls below this share of the mean (one or two references say little). */
  spreadFloor: number;
  /** Outlier references: leave-one-out mean z above this is flagged. */
  outlierZ: number;
  /**
   * One classifier per band of reference counts (ascending maxRefs; the last also serves any larger count):
   * how far to trust the subject's own statistics depends on how many references they rest on, and the
   * calibration per band keeps a score meaning the same whatever the count.
   */
  classifiers: Classifier[];
  /**
   * The blurred regime: parameters fitted on the training writers' blurred vectors, for a questioned
   * signature whose capture is blurred (compare.ts). Absent: every signature is compared as it is.
   */
  blurred?: ScoringParams;
  /**
   * The binarised regime: parameters fitted on the training writers' crops binarised as a bitonal scanner
   * would have made them, for a questioned signature whose bitonality differs from its references'
   * (compare.ts). Absent: no such switch.
   */
  binarised?: ScoringParams;
  /**
   * Every comparison as captured is scored as a blend of itself and the blurred regime's comparison
   * (compare.ts blurredShare): `share` is the blurred regime's least share, and `shift[i]` moves the
   * blended score's logit for the references counted by classifiers[i], so that the anchor (`approve` at
   * 2% of the training writers' skilled forgeries) holds for the blend as it does for each regime alone.
   * Two views of the same ink err on different signatures, so their mean separates better than either
   * (docs/accuracy.md, "Between sharp and blurred"). Absent: no blend beyond the ramp of a blurrier capture.
   */
  blend?: { share: number; shift: number[] };
}

export interface Classifier {
  maxRefs: number;
  /** Linear model over the comparison vector: logit = w . x + b (higher = genuine); every w <= 0. */
  weights: number[];
  bias: number;
  /** score = sigmoid(a * logit + b). */
  calibration: { a: number; b: number };
}

export const DEFAULT_PARAMS: ScoringParams = shipped as ScoringParams;

export function sigmoid(t: number): number {
  return 1 / (1 + Math.exp(-t));
}

/** The inverse of sigmoid, with p kept `eps` away from 0 and 1 so that the result stays finite. */
export function logit(p: number, eps = 1e-12): number {
  const q = Math.min(1 - eps, Math.max(eps, p));
  return Math.log(q / (1 - q));
}

export function classifierFor(p: ScoringParams, refCount: number): Classifier {
  return p.classifiers.find((c) => refCount <= c.maxRefs) ?? p.classifiers[p.classifiers.length - 1];
}

export function logitOf(x: readonly number[], c: Classifier): number {
  if (x.length !== c.weights.length) throw new RangeError("comparison vector and classifier disagree in length");
  let t = c.bias;
  for (let i = 0; i < x.length; i++) t += c.weights[i] * x[i];
  return t;
}

/**
 * The score of a comparison as captured blended with its blurred regime's: the blurred one's share is `w`,
 * and the blend's logit moves by params.blend's shift for this many references (none without blend).
 */
export function blendedScore(asCaptured: number, inBlurred: number, w: number, refCount: number, p: ScoringParams): number {
  const mixed = (1 - w) * asCaptured + w * inBlurred;
  if (!p.blend) return mixed;
  const shift = p.blend.shift[p.classifiers.indexOf(classifierFor(p, refCount))] ?? 0;
  return sigmoid(logit(mixed) + shift);
}

/** The calibrated score in [0, 1] of a comparison vector, for a model with `refCount` active references. */
export function scoreOf(x: readonly number[], refCount: number, p: ScoringParams): number {
  const c = classifierFor(p, refCount);
  const s = sigmoid(c.calibration.a * logitOf(x, c) + c.calibration.b);
  return Math.min(1, Math.max(0, s));
}
