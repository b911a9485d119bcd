/**
 * How forgeable is a subject? An estimate, from the reference model alone, of how often skilled forgeries
 * of a signature like this one would reach a policy's approve threshold.
 *
 *   forgeabilityFeatures(model, groupOffsets, scoring): { consistency: number[]; complexity: number[] }
 *   estimateForgeability(model, groupOffsets, approveThreshold, params?, scoring?): Forgeability
 *
 * Two things make a subject easy to forge: references that vary a lot (the model then accepts distances a
 * forger reaches too) and a simple signature (little to imitate). Both are read from what is stored:
 * - consistency: the model's per-group statistics of genuine distances (blended with the population prior,
 *   exactly as scoring uses them) against the population prior: log of mean and of spread, averaged over
 *   groups. 0 = a typical development writer; higher = the references vary more.
 * - complexity: from the active references' feature vectors (averaged over references): entropy of the
 *   contour-direction pairs and of the gradient orientations, ink crossings per column (strokes stacked
 *   above one another), how much the upper and lower contours turn along the signature, ink density and
 *   the ink box's aspect (a longer signature has more to imitate).
 * A logistic model over the standardised features, the logit of the threshold and the log of the number
 * of references maps them to the expected skilled-forgery pass rate. It was fitted on development writers
 * (bench/train/forgeability-fit.ts) with sign constraints, so more complexity and more consistency can only
 * lower the estimate; its coefficients ship as src/verify/data/forgeability.json. bench/forgeability.ts
 * validates it leave-one-dataset-out (docs/forgeability.md).
 *
 * Pure: no core, no bindings. The feature layout comes in as the core's group offsets.
 */
import shipped from "./data/forgeability.json";
import { DEFAULT_PARAMS, logit as scoreLogit, sigmoid, type ScoringParams } from "./calibration";
import { FEATURE_VERSION, featureVector } from "./features";
import type { ReferenceModel } from "./model";

export const FORGEABILITY_VERSION = 1;

/** Names of the raw features, in the order of ForgeabilityParams weights. */
export const CONSISTENCY_FEATURES = ["mean_distance", "distance_spread"] as const;
export const COMPLEXITY_FEATURES = [
  "direction_entropy",
  "orientation_entropy",
  "crossings",
  "contour_turns",
  "ink_density",
  "aspect",
] as const;

/** Feature groups of the vector (wasm/lib/layout.ts). */
const G_HOG_1X1 = 0;
const G_GLOBAL = 10;
const G_COOC_1X1 = 11;
const G_SEQUENCE = 13;
const SEQ_DIM = 4;

export interface LinearPart {
  /** Standardisation of each raw feature on the development writers. */
  mean: number[];
  sd: number[];
  /** Logit weights of the standardised features. */
  weights: number[];
  /** Spread of this part's logit contribution over development writers: the index is sigmoid(contribution / scale). */
  scale: number;
}

export interface ForgeabilityParams {
  version: number;
  featureVersion: number;
  /** Datasets whose writers trained these numbers. */
  trainedOn: string[];
  /** How the training scores were obtained (which scoring parameters scored which writers). */
  scoredBy: string;
  consistency: LinearPart;
  complexity: LinearPart;
  /** Logit = bias + threshold * logit(approve) + references * ln(active references) + both parts. */
  bias: number;
  threshold: number;
  references: number;
  /** Estimated pass rate at or above which the level is medium, and high. */
  levels: { medium: number; high: number };
}

export const DEFAULT_FORGEABILITY_PARAMS: ForgeabilityParams = shipped as ForgeabilityParams;

export type ForgeabilityLevel = "low" | "medium" | "high";

export interface Forgeability {
  version: number;
  /** The approve threshold the estimate is for. */
  approveThreshold: number;
  /** Expected share of skilled forgeries scoring at or above approveThreshold, in [0, 1]. */
  estimatedFarAtApprove: number;
  level: ForgeabilityLevel;
  /** In (0, 1); 0.5 = a typical development writer's reference set, lower = the references vary more. */
  consistency: number;
  /** In (0, 1); 0.5 = a typical development signature, lower = simpler. */
  complexity: number;
  /** What the estimate rests on: active references (outliers left out) and synthetic variants. */
  basis: { references: number; variants: number };
  /** Null when the level is low; else what a desk should do. */
  advice: string | null;
}

function entropy(v: Float32Array, from: number, len: number): number {
  let total = 0;
  for (let i = from; i < from + len; i++) total += Math.max(0, v[i]);
  if (!(total > 0)) return 0;
  let h = 0;
  for (let i = from; i < from + len; i++) {
    const p = Math.max(0, v[i]) / total;
    if (p > 0) h -= p * Math.log(p);
  }
  return h / Math.log(len);
}

/** Complexity features of one feature vector (see COMPLEXITY_FEATURES). */
export function complexityOf(v: Float32Array, offsets: readonly number[]): number[] {
  const seq = offsets[G_SEQUENCE];
  const steps = Math.floor((offsets[G_SEQUENCE + 1] - seq) / SEQ_DIM);
  let crossings = 0;
  let density = 0;
  let turns = 0;
  for (let i = 0; i < steps; i++) {
    const p = seq + i * SEQ_DIM;
    density += v[p + 2] / steps;
    crossings += v[p + 3] / steps;
    if (i > 0) turns += Math.abs(v[p] - v[p - SEQ_DIM]) + Math.abs(v[p + 1] - v[p + 1 - SEQ_DIM]);
  }
  return [
    entropy(v, offsets[G_COOC_1X1], offsets[G_COOC_1X1 + 1] - offsets[G_COOC_1X1]),
    entropy(v, offsets[G_HOG_1X1], offsets[G_HOG_1X1 + 1] - offsets[G_HOG_1X1]),
    crossings,
    turns,
    density,
    v[offsets[G_GLOBAL]],
  ];
}

/** The raw consistency and complexity features of a model (see the module comment). */
export function forgeabilityFeatures(
  model: ReferenceModel,
  offsets: readonly number[],
  scoring: ScoringParams = DEFAULT_PARAMS,
): { consistency: number[]; complexity: number[]; references: number } {
  const G = model.stats.mean.length;
  let mean = 0;
  let spread = 0;
  for (let g = 0; g < G; g++) {
    mean += Math.log((model.stats.mean[g] + 1e-6) / (scoring.prior.mean[g] + 1e-6)) / G;
    spread += Math.log((model.stats.spread[g] + 1e-6) / (scoring.prior.spread[g] + 1e-6)) / G;
  }
  const active = model.refs.filter((r) => !r.outlier && r.features.inkFound && r.features.version === FEATURE_VERSION);
  const complexity = new Array(COMPLEXITY_FEATURES.length).fill(0);
  for (const r of active) complexityOf(featureVector(r.features), offsets).forEach((x, j) => (complexity[j] += x / active.length));
  return { consistency: [mean, spread], complexity, references: active.length };
}

function contribution(x: readonly number[], part: LinearPart): number {
  let t = 0;
  x.forEach((v, j) => (t += part.weights[j] * ((v - part.mean[j]) / (part.sd[j] || 1))));
  return t;
}

/**
 * The features in which a more complex signature is higher: the entropies of contour directions and of
 * orientations, ink crossings, contour turns (COMPLEXITY_FEATURES 0 to 3). Ink density and aspect have no
 * such direction.
 */
const COMPLEXITY_DESCRIPTORS = 4;

/**
 * How complex the signature is against the development writers, in (0, 1): sigmoid of the mean of its
 * standardised winding features, so 0.5 is the development mean and one standard deviation on all of them
 * gives 0.27 or 0.73. A description for desks, independent of the fitted weights: the fit gives complexity
 * weight only where the data shows it lowers the forgeries' pass rate (with feature version 3, nowhere;
 * docs/forgeability.md), while a simple signature stays worth saying.
 */
export function complexityIndexOf(x: readonly number[], p: ForgeabilityParams = DEFAULT_FORGEABILITY_PARAMS): number {
  let z = 0;
  for (let j = 0; j < COMPLEXITY_DESCRIPTORS; j++) z += (x[j] - p.complexity.mean[j]) / (p.complexity.sd[j] || 1);
  return sigmoid(z / COMPLEXITY_DESCRIPTORS);
}

/** The logit of a pass rate or threshold, kept 1e-6 away from 0 and 1 (the fitted estimate expects that bound). */
export function logit(p: number): number {
  return scoreLogit(p, 1e-6);
}

/**
 * The estimate from raw features. Exported for the bench and the fit, which have features without a
 * stored model at hand.
 */
export function estimateFromFeatures(
  f: { consistency: readonly number[]; complexity: readonly number[]; references: number },
  approveThreshold: number,
  p: ForgeabilityParams = DEFAULT_FORGEABILITY_PARAMS,
): { far: number; consistencyIndex: number; complexityIndex: number; consistencyLogit: number; complexityLogit: number } {
  // Each part's logit contribution: positive = more forgeable.
  const inconsistency = contribution(f.consistency, p.consistency);
  const simplicity = contribution(f.complexity, p.complexity);
  const t =
    p.bias + p.threshold * logit(approveThreshold) + p.references * Math.log(Math.max(1, f.references)) + inconsistency + simplicity;
  return {
    far: sigmoid(t),
    consistencyIndex: sigmoid(-inconsistency / (p.consistency.scale || 1)),
    complexityIndex: complexityIndexOf(f.complexity, p),
    consistencyLogit: inconsistency,
    complexityLogit: simplicity,
  };
}

export function levelOf(far: number, p: ForgeabilityParams = DEFAULT_FORGEABILITY_PARAMS): ForgeabilityLevel {
  return far >= p.levels.high ? "high" : far >= p.levels.medium ? "medium" : "low";
}

/** What to tell a desk, naming the larger cause; null when the level is low. */
export function adviceFor(
  level: ForgeabilityLevel,
  inconsistencyLogit: number,
  simplicityLogit: number,
  references: number,
): string | null {
  if (level === "low") return null;
  const cause =
    inconsistencyLogit >= simplicityLogit
      ? references < 5
        ? "The references vary more than most and are few: enrol more references from the same period."
        : "The references vary more than most: check for references from other periods or other hands."
      : "The signature is simple, so it is easy to imitate.";
  return level === "high"
    ? `${cause} Review approved checks of this subject by hand, or use a policy with a higher approve threshold.`
    : `${cause} Review approved checks of this subject more often than usual.`;
}

export function estimateForgeability(
  model: ReferenceModel,
  offsets: readonly number[],
  approveThreshold: number,
  p: ForgeabilityParams = DEFAULT_FORGEABILITY_PARAMS,
  scoring: ScoringParams = DEFAULT_PARAMS,
): Forgeability {
  const f = forgeabilityFeatures(model, offsets, scoring);
  const e = estimateFromFeatures(f, approveThreshold, p);
  const level = levelOf(e.far, p);
  const round = (v: number) => Math.round(v * 10000) / 10000;
  return {
    version: FORGEABILITY_VERSION,
    approveThreshold,
    estimatedFarAtApprove: round(e.far),
    level,
    consistency: round(e.consistencyIndex),
    complexity: round(e.complexityIndex),
    basis: { references: f.references, variants: model.basis.variants },
    advice: adviceFor(level, e.consistencyLogit, e.complexityLogit, f.references),
  };
}
