// Accuracy benchmark (issue 3, part 7), following the protocol in ../shared/design/verification.md.
//
//   npm run bench:accuracy -- <dataset folder> [--json FILE] [--weights shipped|cv|zmean-cv]
//                             [--train-on <other dataset folder>] [--stride K] [--cache DIR]
//
// Every image goes through the production path: decodePage (grey pixels, no metadata), the WASM core's
// preprocessing and features, buildReferenceModel and compareToModel. Which scoring parameters score it:
//   shipped      src/verify/data/scoring.json (refused on a dataset whose writers trained it)
//   cv           5-fold writer-disjoint cross-validation: each fold is scored by parameters trained on the
//                other folds' writers; its random forgeries come from its own fold's writers
//   zmean-cv     the same, with the classifier replaced by the plain mean of per-group z-scores
//   --train-on   cross-dataset: parameters trained on all writers of another dataset
// Default: shipped, or cv when the shipped parameters were trained on this dataset.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { DEFAULT_PARAMS, type ScoringParams } from "../src/verify/calibration";
import { DEFAULT_THRESHOLDS } from "../src/domain/policy-defaults";
import { loadDataset, type Dataset, type Writer } from "./lib/dataset";
import { eer, ratesAt } from "./lib/metrics";
import { loadNodeCore } from "./lib/node-core";
import { runProtocol, type Trial } from "./lib/protocol";
import { fitParams } from "./train/fit";

const NS = [1, 3, 5, 10];
const FOLDS = 5;

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

interface Rates {
  eer_global: number;
  eer_writer: number;
  far: number;
  frr: number;
  at: Record<string, { far: number; frr: number }>;
}

function rates(trials: Trial[], impostor: "skilled" | "random"): Rates {
  const gen = trials.filter((t) => t.kind === "genuine").map((t) => t.score);
  const imp = trials.filter((t) => t.kind === impostor).map((t) => t.score);
  const writers = [...new Set(trials.map((t) => t.writer))];
  const perWriter = writers
    .map((w) =>
      eer(
        trials.filter((t) => t.writer === w && t.kind === "genuine").map((t) => t.score),
        trials.filter((t) => t.writer === w && t.kind === impostor).map((t) => t.score),
      ),
    )
    .filter((e) => !Number.isNaN(e));
  const at: Rates["at"] = {};
  for (const [name, t] of Object.entries(DEFAULT_THRESHOLDS)) at[name] = ratesAt(gen, imp, t);
  return {
    eer_global: eer(gen, imp),
    eer_writer: perWriter.reduce((s, v) => s + v, 0) / Math.max(1, perWriter.length),
    far: at.approve.far,
    frr: at.approve.frr,
    at,
  };
}

function folds(writers: Writer[]): Writer[][] {
  // Deterministic interleaving keeps folds balanced across the index order.
  const out: Writer[][] = Array.from({ length: FOLDS }, () => []);
  writers.forEach((w, i) => out[i % FOLDS].push(w));
  return out;
}

async function main(): Promise<void> {
  const folder = process.argv[2];
  if (!folder || folder.startsWith("--")) {
    console.error("usage: npm run bench:accuracy -- <dataset folder> [--json FILE] [--weights shipped|cv|zmean-cv] [--train-on FOLDER]");
    process.exit(2);
  }
  const t0 = Date.now();
  const core = loadNodeCore();
  const coreBytes = new Uint8Array(readFileSync(fileURLToPath(new URL("../wasm/build/core.wasm", import.meta.url))));
  const log = (s: string) => process.stderr.write(s);
  const stride = Number(arg("--stride") ?? 1);
  const cacheDir = arg("--cache");
  const ds = await loadDataset(core, folder, coreBytes, { writerStride: stride, cacheDir, log });
  const tLoaded = Date.now();

  const trainOn = arg("--train-on");
  let mode = arg("--weights") ?? (trainOn ? "train-on" : DEFAULT_PARAMS.trainedOn.includes(ds.name) ? "cv" : "shipped");
  if (trainOn) mode = "train-on";
  if (mode === "shipped" && DEFAULT_PARAMS.trainedOn.includes(ds.name)) {
    console.error(`the shipped parameters were trained on ${ds.name}'s writers: use --weights cv or --train-on`);
    process.exit(2);
  }

  let other: Dataset | undefined;
  if (trainOn) other = await loadDataset(core, trainOn, coreBytes, { cacheDir, log });

  const results = [];
  const paramsUsed: string[] = [];
  for (const n of NS) {
    let trials: Trial[] = [];
    if (mode === "shipped") {
      trials = runProtocol(core, ds.writers, ds.writers, n, DEFAULT_PARAMS);
    } else if (mode === "train-on") {
      const p = fitCached(core, other!.writers, [other!.name], "lr");
      trials = runProtocol(core, ds.writers, ds.writers, n, p);
    } else if (mode === "cv" || mode === "zmean-cv") {
      const fs = folds(ds.writers);
      fs.forEach((fold, i) => {
        const train = fs.filter((_, j) => j !== i).flat();
        const p = fitCached(core, train, [`${ds.name}#cv${i}`], mode === "cv" ? "lr" : "zmean");
        trials.push(...runProtocol(core, fold, fold, n, p));
      });
    } else {
      throw new Error(`unknown --weights ${mode}`);
    }
    results.push({ n, skilled: rates(trials, "skilled"), random: rates(trials, "random") });
    log(`N=${n} done (${((Date.now() - t0) / 1000).toFixed(0)} s)\n`);
  }
  void paramsUsed;

  const pct = (v: number) => (100 * v).toFixed(1).padStart(5) + "%";
  const label = mode === "train-on" ? `trained on ${other!.name}` : mode;
  console.log(`\n${ds.name}: ${ds.writers.length} writers, scoring parameters: ${label}`);
  console.log(
    `thresholds: auto_approve ${DEFAULT_THRESHOLDS.auto_approve}, approve ${DEFAULT_THRESHOLDS.approve}, flag ${DEFAULT_THRESHOLDS.flag}`,
  );
  console.log("   N | skilled EER glob  (writer) | FAR@appr FRR@appr | FAR@auto FAR@flag | random EER glob (writer) | FAR@appr FRR@appr");
  for (const r of results) {
    const s = r.skilled,
      q = r.random;
    console.log(
      `${String(r.n).padStart(4)} |        ${pct(s.eer_global)}   (${pct(s.eer_writer)}) |  ${pct(s.far)}  ${pct(s.frr)} |  ${pct(s.at.auto_approve.far)}  ${pct(s.at.flag.far)} |` +
        `       ${pct(q.eer_global)}  (${pct(q.eer_writer)}) |  ${pct(q.far)}  ${pct(q.frr)}`,
    );
  }
  const secs = (Date.now() - t0) / 1000;
  console.log(
    `images decoded+extracted: ${ds.images}${other ? ` + ${other.images}` : ""}, mean extract ${(ds.extractMs / Math.max(1, ds.images)).toFixed(2)} ms; load ${((tLoaded - t0) / 1000).toFixed(0)} s; total ${secs.toFixed(0)} s`,
  );
  const json = arg("--json");
  if (json) {
    writeFileSync(json, JSON.stringify({ dataset: ds.name, weights: label, seconds: secs, results }, null, 1));
  }
}

const fitMemo = new Map<string, ScoringParams>();
function fitCached(
  core: ReturnType<typeof loadNodeCore>,
  writers: Writer[],
  trainedOn: string[],
  classifier: "lr" | "zmean",
): ScoringParams {
  const key = `${trainedOn.join(",")}:${classifier}`;
  let p = fitMemo.get(key);
  if (!p) {
    p = fitParams(core, writers, {
      trainedOn,
      classifier,
      anchor: anchorFromEnv(),
      randomWeight: envNumber("RANDOM_WEIGHT"),
      priorStrength: envNumber("PRIOR_STRENGTH"),
      k: envNumber("K"),
      spreadFloor: envNumber("SPREAD_FLOOR"),
    });
    fitMemo.set(key, p);
  }
  return p;
}

// Tuning knobs for experiments (never in reported tables unless stated).
function envNumber(name: string): number | undefined {
  const v = process.env[name];
  return v ? Number(v) : undefined;
}

function anchorFromEnv(): { score: number; far: number } | null | undefined {
  const far = process.env.ANCHOR_FAR;
  if (far === "none") return null;
  return far ? { score: DEFAULT_THRESHOLDS.approve, far: Number(far) } : undefined;
}

await main();
