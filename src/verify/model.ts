/**
 * The per-subject reference model, computed once when the references change and stored with them (JSON).
 *
 *   buildReferenceModel(core, refs: {refId, features, raster?}[], params?): ReferenceModel
 *
 * It keeps the references' feature vectors, the statistics of distances among them (per feature group:
 * mean and spread, blended with a population prior and floored) for per-writer normalisation, and flags
 * outlier references, which then take no part in matching. With fewer than three usable references,
 * the spread also comes from synthetic variants of the reference rasters (small rotation, scale, shear,
 * elastic jitter) when the rasters are given.
 */
import type { Core, Jitter } from "./core";
import { DEFAULT_PARAMS, type ScoringParams } from "./calibration";
import { binarisedView, blurredView, FEATURE_VERSION, featureVector, isBitonal, mostlyBitonal, type SignatureFeatures } from "./features";
import type { Raster } from "./types";

export const MODEL_VERSION = 1;

export interface ReferenceInput {
  refId: string;
  features: SignatureFeatures;
  raster?: Raster;
  /**
   * The reference's distances to its own synthetic variants (variantDistanceRow), computed when it was
   * enrolled. Stored references have no raster at hand when the model is rebuilt; this carries what the
   * raster would have given.
   */
  variantRow?: number[] | null;
  /** Learned by the service from a confirmed check rather than enrolled by the caller (see LEARNED_DISTANCE_FLOOR). */
  learned?: boolean;
}

export interface ReferenceModel {
  version: number;
  featureVersion: number;
  refs: { refId: string; features: SignatureFeatures; outlier: boolean; looZ: number | null; learned?: boolean }[];
  /** Per feature group: expected distance of a genuine signature to its nearest references, and its spread. */
  stats: { mean: number[]; spread: number[] };
  /** What the statistics rest on. */
  basis: { references: number; variants: number; prior: number };
  /**
   * The same references in the blurred regime (their blurred vectors, statistics with params.blurred):
   * compare.ts switches to it for a blurred questioned signature.
   */
  blurred?: ReferenceModel;
  /**
   * Grey references in the binarised regime (as a bitonal scanner would have made them, statistics with
   * params.binarised): compare.ts switches to it for a bitonal questioned signature. Absent when the
   * references are mostly bitonal already.
   */
  binarised?: ReferenceModel;
}

/**
 * Anchors stay in charge (docs/learning.md). Learned references are one reviewer's judgement, so they
 * may bring a questioned signature's distance down by at most this share of its distance to the anchors
 * alone: d = max(d_all, LEARNED_DISTANCE_FLOOR * d_anchors), for the k-nearest mean and for the nearest
 * reference alike (compare.ts). A mistaken confirmation of a forgery can then not make the forger's next
 * signature look closer than half of what the anchors say. With feature version 3, bench:learning measures
 * that 0.5 closes 71% and 58% of the 3-to-10-anchor gap on the two development sets (0.6 left Bengali at
 * 49% with a first cut of version 3), and one mistaken confirmation costs at most 0.2 point of FAR
 * (docs/learning.md). Learned references also never mark an anchor as an outlier: outliers are judged
 * among anchors, and a learned reference far from the anchors' statistics is itself flagged and left out.
 */
export const LEARNED_DISTANCE_FLOOR = 0.5;

export const JITTERS: readonly Jitter[] = [
  { rotation: 0.035, scale: 1.04, shear: 0.06, elastic: 1.2, phase: 0.3 },
  { rotation: -0.035, scale: 0.96, shear: -0.06, elastic: 1.2, phase: 2.1 },
  { rotation: 0.02, scale: 0.98, shear: -0.1, elastic: 1.8, phase: 4.0 },
  { rotation: -0.02, scale: 1.02, shear: 0.1, elastic: 1.8, phase: 5.3 },
];

/** Mean of the k smallest values. */
export function meanOfSmallest(values: number[], k: number): number {
  const s = [...values].sort((a, b) => a - b);
  const m = Math.max(1, Math.min(k, s.length));
  let t = 0;
  for (let i = 0; i < m; i++) t += s[i];
  return t / m;
}

/** Per group, the mean of the k smallest distances over refs; d is ref-major (refs x groups). */
export function aggregate(d: Float32Array, refCount: number, groups: number, k: number): number[] {
  const out: number[] = [];
  for (let g = 0; g < groups; g++) {
    const col: number[] = [];
    for (let r = 0; r < refCount; r++) col.push(d[r * groups + g]);
    out.push(meanOfSmallest(col, k));
  }
  return out;
}

function meanSpread(rows: number[][], groups: number): { mean: number[]; spread: number[] } {
  const mean = new Array(groups).fill(0);
  const spread = new Array(groups).fill(0);
  if (rows.length === 0) return { mean, spread };
  for (const r of rows) r.forEach((v, g) => (mean[g] += v / rows.length));
  for (const r of rows) r.forEach((v, g) => (spread[g] += (v - mean[g]) ** 2 / Math.max(1, rows.length - 1)));
  return { mean, spread: spread.map(Math.sqrt) };
}

/**
 * Per feature group, how far this reference's own ink moves under small synthetic distortions
 * (JITTERS): the basis of the spread estimate when a subject has fewer than three references. Null when
 * the raster yields no variants.
 */
export function variantDistanceRow(core: Core, raster: Raster): number[] | null {
  const { main, variants } = core.extract(raster, JITTERS, { blurred: false });
  if (variants.length === 0) return null;
  // The sharp vector's distances: the blurred regime's model and fit (params.blurred.variantRatio) read
  // the same row as the sharp one.
  const d = core.groupDistances(main.vector, variants);
  return aggregate(d, variants.length, core.groupCount, variants.length);
}

export function buildReferenceModel(core: Core, refs: readonly ReferenceInput[], params: ScoringParams = DEFAULT_PARAMS): ReferenceModel {
  const G = core.groupCount;
  const vectors = refs.map((r) => featureVector(r.features));
  const usable = refs.map((r) => r.features.inkFound && r.features.version === FEATURE_VERSION);
  const idx = refs.map((_, i) => i).filter((i) => usable[i]);

  // Leave-one-out: each reference's aggregated distance to the others, as a questioned genuine would have.
  const loo = new Map<number, number[]>();
  if (idx.length >= 2) {
    for (const i of idx) {
      const others = idx.filter((j) => j !== i).map((j) => vectors[j]);
      loo.set(i, aggregate(core.groupDistances(vectors[i], others), others.length, G, params.k));
    }
  }

  // Outliers: with three or more references, a reference far from the others (against the others' own
  // statistics and the prior) is flagged and left out.
  const looZ = new Map<number, number>();
  const outlier = new Set<number>();
  const anchorIdx = idx.filter((i) => !refs[i].learned);
  const learnedIdx = idx.filter((i) => refs[i].learned);
  if (learnedIdx.length === 0 && idx.length >= 3) {
    for (const i of idx) {
      const rest = idx.filter((j) => j !== i).map((j) => loo.get(j)!);
      const st = blend(meanSpread(rest, G), rest.length, params);
      const z = zMean(loo.get(i)!, st);
      looZ.set(i, z);
    }
    // At most a third of the references can be outliers: drop the worst first.
    const order = [...looZ.entries()].sort((a, b) => b[1] - a[1]);
    for (const [i, z] of order) {
      if (z <= params.outlierZ || outlier.size + 1 > Math.floor(idx.length / 3)) break;
      outlier.add(i);
    }
  } else if (learnedIdx.length > 0) {
    // With learned references, anchors are judged among anchors only (a learned one never displaces an
    // anchor), and each learned reference against the anchors' own statistics.
    const anchorLoo = new Map<number, number[]>();
    for (const i of anchorIdx) {
      const others = anchorIdx.filter((j) => j !== i).map((j) => vectors[j]);
      if (others.length > 0) anchorLoo.set(i, aggregate(core.groupDistances(vectors[i], others), others.length, G, params.k));
    }
    if (anchorIdx.length >= 3) {
      for (const i of anchorIdx) {
        const rest = anchorIdx.filter((j) => j !== i).map((j) => anchorLoo.get(j)!);
        looZ.set(i, zMean(anchorLoo.get(i)!, blend(meanSpread(rest, G), rest.length, params)));
      }
      const order = anchorIdx.map((i) => [i, looZ.get(i)!] as const).sort((a, b) => b[1] - a[1]);
      for (const [i, z] of order) {
        if (z <= params.outlierZ || outlier.size + 1 > Math.floor(anchorIdx.length / 3)) break;
        outlier.add(i);
      }
    }
    const anchorRows = anchorIdx.filter((i) => !outlier.has(i) && anchorLoo.has(i)).map((i) => anchorLoo.get(i)!);
    const anchorVectors = anchorIdx.filter((i) => !outlier.has(i)).map((i) => vectors[i]);
    if (anchorVectors.length > 0) {
      const st = blend(meanSpread(anchorRows, G), anchorRows.length, params);
      for (const i of learnedIdx) {
        const z = zMean(aggregate(core.groupDistances(vectors[i], anchorVectors), anchorVectors.length, G, params.k), st);
        looZ.set(i, z);
        if (z > params.outlierZ) outlier.add(i);
      }
    } else {
      // No usable anchor: nothing to judge a learned reference by, so none is trusted.
      for (const i of learnedIdx) outlier.add(i);
    }
  }
  const active = idx.filter((i) => !outlier.has(i));

  // Statistics from the active references (recomputed without outliers).
  const rows: number[][] = [];
  if (active.length >= 2) {
    for (const i of active) {
      const others = active.filter((j) => j !== i).map((j) => vectors[j]);
      rows.push(aggregate(core.groupDistances(vectors[i], others), others.length, G, params.k));
    }
  }
  let basisVariants = 0;
  const variantRows = new Map<number, number[]>();
  if (active.length < 3) {
    // Few references: synthetic variants tell how far this writer's own ink moves under small
    // distortions, scaled by how real genuine variation compares to synthetic (learned per group).
    for (const i of active) {
      const { raster, variantRow } = refs[i];
      const agg = variantRow ?? (raster ? variantDistanceRow(core, raster) : null);
      if (!agg) continue;
      variantRows.set(i, agg);
      rows.push(agg.map((v, g) => v * params.variantRatio[g]));
      basisVariants += JITTERS.length;
    }
  }
  const stats = blend(meanSpread(rows, G), rows.length, params);
  const blurred =
    params.blurred && active.length > 0 && active.every((i) => refs[i].features.blurred)
      ? buildReferenceModel(
          core,
          refs.map((r, i) => ({ ...r, features: blurredView(r.features), variantRow: variantRows.get(i) ?? r.variantRow })),
          params.blurred,
        )
      : undefined;
  // Only grey references need it: a grey questioned signature against bitonal references is binarised and
  // compared with the references as they are (compare.ts).
  const activeFeatures = active.map((i) => refs[i].features);
  const binarised =
    params.binarised &&
    active.length > 0 &&
    !mostlyBitonal(activeFeatures) &&
    activeFeatures.every((f) => f.binarised || isBitonal(f.greyShare))
      ? buildReferenceModel(
          core,
          refs.map((r, i) => ({ ...r, features: binarisedView(r.features), variantRow: variantRows.get(i) ?? r.variantRow })),
          params.binarised,
        )
      : undefined;
  return {
    version: MODEL_VERSION,
    featureVersion: FEATURE_VERSION,
    // A reference's blurred and binarised vectors live in their sub-models only: each vector is stored once.
    refs: refs.map((r, i) => ({
      refId: r.refId,
      features: sharpOnly(r.features),
      outlier: outlier.has(i) || !usable[i],
      looZ: looZ.has(i) ? looZ.get(i)! : null,
      ...(r.learned ? { learned: true } : {}),
    })),
    stats,
    basis: { references: active.length, variants: basisVariants, prior: params.prior.strength },
    ...(blurred ? { blurred } : {}),
    ...(binarised ? { binarised } : {}),
  };
}

function sharpOnly(f: SignatureFeatures): SignatureFeatures {
  if (f.blurred === undefined && f.binarised === undefined) return f;
  const { blurred: _b, binarised: _n, ...sharp } = f;
  return sharp;
}

/** Blend writer statistics from `n` observations with the population prior, and floor the spread. */
export function blend(st: { mean: number[]; spread: number[] }, n: number, p: ScoringParams): { mean: number[]; spread: number[] } {
  const w0 = p.prior.strength;
  const mean = st.mean.map((m, g) => (n * m + w0 * p.prior.mean[g]) / (n + w0));
  const spread = st.spread.map((s, g) => {
    const nv = Math.max(0, n - 1);
    const v = (nv * s * s + w0 * p.prior.spread[g] ** 2) / (nv + w0);
    return Math.max(Math.sqrt(v), p.spreadFloor * mean[g], 1e-6);
  });
  return { mean, spread };
}

export function zMean(d: number[], st: { mean: number[]; spread: number[] }): number {
  let t = 0;
  d.forEach((v, g) => (t += (v - st.mean[g]) / st.spread[g]));
  return t / d.length;
}
