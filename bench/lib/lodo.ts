// Leave-one-dataset-out: which development datasets exist, and the scoring parameters each one is scored
// with, trained on every other dataset's writers and never on its own (thresholds included: the anchor
// that places the score scale is set on the training writers, the thresholds are the default policy's).
import { existsSync, readdirSync, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import type { ScoringParams } from "../../src/verify/calibration";
import type { Core } from "../../src/verify/core";
import { DEFAULT_THRESHOLDS } from "../../src/domain/policy-defaults";
import { type FitOptions, fitAll } from "../train/fit";
import type { Dataset, Writer } from "./dataset";

export const isDataset = (folder: string): boolean => existsSync(join(folder, "index.csv"));

/** Dataset folders (those holding an index.csv) directly inside `root`, by name. */
export function datasetFolders(root: string): string[] {
  return readdirSync(root)
    .map((n) => join(root, n))
    .filter((p) => statSync(p).isDirectory() && isDataset(p))
    .sort();
}

/** The nearest `shared/datasets` folder at or above `start` (the layout beside a checkout or worktree). */
export function findDatasetsRoot(start = process.cwd()): string | undefined {
  for (let dir = resolve(start); ; dir = dirname(dir)) {
    const candidate = join(dir, "shared", "datasets");
    if (existsSync(candidate) && datasetFolders(candidate).length > 0) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * What a leave-one-dataset-out run scores and what it may train on. `folder` is one dataset (scored alone;
 * its siblings train), a folder of datasets (each is scored in turn), or absent (the nearest shared/datasets).
 */
export function lodoTargets(folder?: string): { scored: string[]; all: string[] } {
  const root = folder ? resolve(folder) : findDatasetsRoot();
  if (!root) throw new Error("no dataset folder given and no shared/datasets found above the working directory");
  if (isDataset(root)) {
    const all = datasetFolders(dirname(root));
    return { scored: [root], all: all.includes(root) ? all : [...all, root] };
  }
  const all = datasetFolders(root);
  if (all.length < 2) throw new Error(`${root}: leave-one-dataset-out needs at least two datasets (folders with index.csv)`);
  return { scored: all, all };
}

/** Writers of several datasets in one pool; ids are only unique within a dataset. */
export function pooledWriters(datasets: Dataset[]): Writer[] {
  return datasets.flatMap((d) => d.writers.map((w) => ({ ...w, id: `${d.name}/${w.id}` })));
}

/** Parameters for scoring `scored`: fitted on every other dataset in `loaded`, never on `scored` itself. */
export function lodoParams(core: Core, scored: Dataset, loaded: Dataset[], memo = new Map<string, ScoringParams>()): ScoringParams {
  const others = loaded.filter((d) => d.folder !== scored.folder);
  if (others.length === 0) throw new Error(`no other dataset to train on for ${scored.name}`);
  const key = others.map((d) => d.name).join(",");
  let p = memo.get(key);
  if (!p) {
    const writers = others.length === 1 ? others[0].writers : pooledWriters(others);
    const opt: FitOptions = {
      trainedOn: others.map((d) => d.name),
      anchor: { score: DEFAULT_THRESHOLDS.approve, far: 0.02 },
      ...fitKnobs(),
    };
    // Every part, as train:scoring fits them (partsLeftOut: for comparison runs).
    p = fitAll(core, writers, opt, partsLeftOut());
    memo.set(key, p);
  }
  if (p.trainedOn.includes(scored.name)) throw new Error(`parameters for ${scored.name} were trained on it`);
  return p;
}

export const datasetName = (folder: string): string => basename(resolve(folder));

/**
 * Parts of the scoring parameters left out of a comparison run, from the environment: NO_BLUR_REGIME=1,
 * NO_BINARISED_REGIME=1 and NO_BLEND=1 (without the blend, a comparison as captured is blended only when the
 * capture is blurrier than its references). By default every part is fitted, as train:scoring fits them.
 */
export function partsLeftOut(): { blurred: boolean; binarised: boolean; blend: boolean } {
  return { blurred: !!process.env.NO_BLUR_REGIME, binarised: !!process.env.NO_BINARISED_REGIME, blend: !!process.env.NO_BLEND };
}

/**
 * Tuning knobs for experiments, from the environment (never in reported tables unless stated; docs/accuracy.md
 * names the ones its experiments used): PRIOR_STRENGTH, SPREAD_FLOOR, K, OUTLIER_Z, LAMBDA, RANDOM_WEIGHT,
 * BLEND_SHARE (numbers, FitOptions of bench/train/fit.ts) and PER_BAND (any value: one classifier per band of
 * reference counts).
 */
export function fitKnobs(): Partial<FitOptions> {
  const out: Partial<FitOptions> = {};
  const num = (name: string) => (process.env[name] ? Number(process.env[name]) : undefined);
  out.priorStrength = num("PRIOR_STRENGTH");
  out.spreadFloor = num("SPREAD_FLOOR");
  out.k = num("K");
  out.outlierZ = num("OUTLIER_Z");
  out.lambda = num("LAMBDA");
  out.randomWeight = num("RANDOM_WEIGHT");
  out.blendShare = num("BLEND_SHARE");
  if (process.env.PER_BAND) out.perBand = true;
  return out;
}
