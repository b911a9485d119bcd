// Fitting the forgeability estimate (src/verify/forgeability.ts) on development writers.
//
// A record is one simulated enrolment: a writer's first n genuine samples as references, the model's
// consistency and complexity features, and the scores of that writer's skilled forgeries against it. The
// scores must come from scoring parameters that never saw the writer (cross-validated or cross-dataset),
// as in production, where no subject is a training writer: in-sample scores pass fewer forgeries.
import type { Core } from "../../src/verify/core";
import type { ScoringParams } from "../../src/verify/calibration";
import { compareToModel } from "../../src/verify/compare";
import { FEATURE_VERSION } from "../../src/verify/features";
import { FORGEABILITY_VERSION, forgeabilityFeatures, logit, type ForgeabilityParams, type LinearPart } from "../../src/verify/forgeability";
import type { Writer } from "../lib/dataset";
import { modelFor } from "../lib/protocol";
import { fitAll, logistic } from "./fit";

export interface WriterRecord {
  dataset: string;
  writer: string;
  n: number;
  features: { consistency: number[]; complexity: number[]; references: number };
  skilled: number[];
}

/** Thresholds the estimate is fitted across, so that it holds for any policy's approve threshold. */
export const FIT_THRESHOLDS = [0.5, 0.6, 0.7, 0.8, 0.9];
/** Reference counts simulated in training. */
export const FIT_NS = [1, 2, 3, 5, 7, 10];
export const FOLDS = 5;

/** Records of `writers` at each n, scored with `params`. */
export function recordsOf(core: Core, dataset: string, writers: Writer[], ns: number[], params: ScoringParams): WriterRecord[] {
  const out: WriterRecord[] = [];
  for (const w of writers) {
    if (w.genuine.length < 2 || w.forgeries.length === 0) continue;
    for (const n of ns) {
      if (n > 1 && n >= w.genuine.length) continue;
      const model = modelFor(core, w, n, params);
      out.push({
        dataset,
        writer: w.id,
        n,
        features: forgeabilityFeatures(model, core.groupOffsets, params),
        skilled: w.forgeries.map((s) => compareToModel(core, s.features, model, params).score),
      });
    }
  }
  return out;
}

/** Records of every writer, each scored by parameters trained on the other folds' writers only. */
export function crossValidatedRecords(core: Core, dataset: string, writers: Writer[], ns: number[], folds = FOLDS): WriterRecord[] {
  const out: WriterRecord[] = [];
  for (let f = 0; f < folds; f++) {
    const test = writers.filter((_, i) => i % folds === f);
    const train = writers.filter((_, i) => i % folds !== f);
    // Every part, as production scores: a regime or the blend moves which forgeries pass.
    const params = fitAll(core, train, { trainedOn: [`${dataset} (folds other than ${f})`] });
    out.push(...recordsOf(core, dataset, test, ns, params));
  }
  return out;
}

export function observedFar(r: WriterRecord, threshold: number): number {
  return r.skilled.filter((s) => s >= threshold).length / Math.max(1, r.skilled.length);
}

function standardise(rows: number[][]): { mean: number[]; sd: number[] } {
  const d = rows[0].length;
  const mean = new Array(d).fill(0);
  const sd = new Array(d).fill(0);
  for (const r of rows) r.forEach((v, j) => (mean[j] += v / rows.length));
  for (const r of rows) r.forEach((v, j) => (sd[j] += (v - mean[j]) ** 2 / Math.max(1, rows.length - 1)));
  return { mean, sd: sd.map((s) => Math.sqrt(s) || 1) };
}

function std(a: number[]): number {
  const m = a.reduce((s, v) => s + v, 0) / Math.max(1, a.length);
  return Math.sqrt(a.reduce((s, v) => s + (v - m) ** 2, 0) / Math.max(1, a.length - 1));
}

/**
 * Fractional logistic regression of each record's observed pass rate at each threshold of FIT_THRESHOLDS,
 * weighted by its number of forgeries. Consistency weights are kept >= 0 (references that vary more never
 * make a subject look safer) and complexity weights <= 0; a feature whose fitted weight breaks its sign is
 * dropped and the rest refitted.
 *
 * Records from several datasets get one offset per dataset (a fixed effect): the collections differ in
 * script, scanning and forger skill, and their pass rates differ several-fold, so without it the features
 * that tell the scripts apart would be fitted to that difference rather than to what makes one writer
 * easier to forge than another in the same collection. The shipped bias is the records-weighted mean offset.
 */
export function fitForgeability(
  records: WriterRecord[],
  trainedOn: string[],
  scoredBy: string,
  levels = { medium: 0.03, high: 0.08 },
): ForgeabilityParams {
  const cStd = standardise(records.map((r) => r.features.consistency));
  const xStd = standardise(records.map((r) => r.features.complexity));
  const datasets = [...new Set(records.map((r) => r.dataset))];
  const nc = cStd.mean.length;
  const nx = xStd.mean.length;
  // Columns: consistency (negated so every constrained weight must be <= 0), complexity, logit(t), ln n.
  const rowOf = (r: WriterRecord, t: number) => [
    ...r.features.consistency.map((v, j) => -(v - cStd.mean[j]) / cStd.sd[j]),
    ...r.features.complexity.map((v, j) => (v - xStd.mean[j]) / xStd.sd[j]),
    logit(t),
    Math.log(Math.max(1, r.features.references)),
    // Dataset offsets, the first dataset as the baseline.
    ...datasets.slice(1).map((d) => (r.dataset === d ? 1 : 0)),
  ];
  const X: number[][] = [];
  const y: number[] = [];
  const wt: number[] = [];
  for (const r of records) {
    for (const t of FIT_THRESHOLDS) {
      X.push(rowOf(r, t));
      y.push(observedFar(r, t));
      wt.push(r.skilled.length);
    }
  }
  const constrained = nc + nx;
  const d = X[0].length;
  let free = Array.from({ length: d }, (_, j) => j);
  let w = new Array(d).fill(0);
  let b = 0;
  for (;;) {
    const fit = logistic(
      X.map((x) => free.map((j) => x[j])),
      y,
      wt,
      1e-4,
    );
    w = new Array(d).fill(0);
    free.forEach((j, i) => (w[j] = fit.w[i]));
    b = fit.b;
    const broken = free.filter((j) => j < constrained && w[j] > 0);
    if (broken.length === 0) break;
    const worst = broken.reduce((a, c) => (w[a] > w[c] ? a : c));
    free = free.filter((j) => j !== worst);
  }
  const consistencyWeights = w.slice(0, nc).map((v) => -v);
  const complexityWeights = w.slice(nc, nc + nx);
  const part = (s: { mean: number[]; sd: number[] }, weights: number[], rows: number[][]): LinearPart => {
    const contributions = rows.map((x) => x.reduce((t, v, j) => t + weights[j] * ((v - s.mean[j]) / s.sd[j]), 0));
    return { mean: s.mean, sd: s.sd, weights, scale: std(contributions) || 1 };
  };
  return {
    version: FORGEABILITY_VERSION,
    featureVersion: FEATURE_VERSION,
    trainedOn,
    scoredBy,
    consistency: part(
      cStd,
      consistencyWeights,
      records.map((r) => r.features.consistency),
    ),
    complexity: part(
      xStd,
      complexityWeights,
      records.map((r) => r.features.complexity),
    ),
    bias:
      b +
      datasets.slice(1).reduce((t, d, i) => t + (w[nc + nx + 2 + i] * records.filter((r) => r.dataset === d).length) / records.length, 0),
    threshold: w[nc + nx],
    references: w[nc + nx + 1],
    levels,
  };
}
