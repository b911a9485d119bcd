// Experiment (issue 14, forgeability): which per-subject quantity, known at enrolment, ranks the subjects
// whose skilled forgeries come closest? The shipped estimate's features do not (docs/forgeability.md:
// Spearman about 0 under leave-one-dataset-out). This scores, per writer of each dataset with parameters
// trained on the other (bench/lib/lodo.ts), candidate predictors against three per-writer outcomes: the
// share of skilled forgeries reaching approve (0.7) and flag (0.4), and the mean forgery score.
//
//   node --import tsx bench/experiments/forgeability-predictors.ts <dataset> <other dataset> [--cache DIR] [--n 3]
//
// Candidates:
//   shipped     the shipped estimate (fitted on both sets, so in-sample for its level; only its ranking counts)
//   spread      mean over groups of log(subject mean / population prior mean), the consistency feature
//   varRatio    mean over groups of log(subject mean / distance of a reference to its synthetic variants):
//               how much the writer varies compared with how far a small distortion moves the features
//   strongSim   mean score of strongly distorted renderings of a held-out genuine sample (a forger's
//               imitation as a bigger distortion of the genuine shape), against the model
//   heldOut     score of the held-out genuine sample itself
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_THRESHOLDS } from "../../src/domain/policy-defaults";
import type { Jitter } from "../../src/verify/core";
import { compareToModel } from "../../src/verify/compare";
import { decodePage } from "../../src/verify/decode/index";
import { encodeVector, extractFeatures } from "../../src/verify/features";
import { estimateForgeability } from "../../src/verify/forgeability";
import { JITTERS, variantDistanceRow } from "../../src/verify/model";
import { loadDataset, type Dataset } from "../lib/dataset";
import { lodoParams } from "../lib/lodo";
import { spearman } from "../lib/metrics";
import { loadNodeCore } from "../lib/node-core";
import { modelFor, referencesOf } from "../lib/protocol";

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const STRENGTH = Number(process.env.STRENGTH ?? 2.5);
const strong: Jitter[] = JITTERS.map((j) => ({
  rotation: j.rotation * STRENGTH,
  scale: 1 + (j.scale - 1) * STRENGTH,
  shear: j.shear * STRENGTH,
  elastic: j.elastic * STRENGTH,
  phase: j.phase,
}));

const core = loadNodeCore();
const coreBytes = new Uint8Array(readFileSync(fileURLToPath(new URL("../../wasm/build/core.wasm", import.meta.url))));
const folders = process.argv.slice(2).filter((a, i, all) => !a.startsWith("--") && !all[i - 1]?.startsWith("--"));
const cacheDir = arg("--cache");
const n = Number(arg("--n") ?? 3);
const sets: Dataset[] = [];
for (const f of folders) sets.push(await loadDataset(core, f, coreBytes, { cacheDir, log: (s) => process.stderr.write(s) }));

for (const ds of sets.slice(0, 1)) {
  const params = lodoParams(core, ds, sets);
  const rows: Record<string, number>[] = [];
  for (const w of ds.writers) {
    if (w.genuine.length <= n || w.forgeries.length === 0) continue;
    const model = modelFor(core, w, n, params);
    const scores = w.forgeries.map((s) => compareToModel(core, s.features, model, params).score);
    const refs = referencesOf(w, n).length;
    const held = w.genuine[refs];
    const raster = await decodePage(new Uint8Array(readFileSync(join(ds.folder, held.path))), 0);
    const { variants } = core.extract(raster, strong, { blurred: false });
    const own = extractFeatures(core, raster);
    const simScores = variants.map(
      (v) => compareToModel(core, { ...own, vector: encodeVector(v), blurred: undefined, binarised: undefined }, model, params).score,
    );
    const vd = w.genuine[0].raster ? variantDistanceRow(core, w.genuine[0].raster) : null;
    let varRatio = 0;
    let spread = 0;
    let cnt = 0;
    for (let g = 0; g < core.groupCount; g++) {
      spread += Math.log(model.stats.mean[g] / params.prior.mean[g]) / core.groupCount;
      if (vd && vd[g] > 0) {
        varRatio += Math.log(model.stats.mean[g] / vd[g]);
        cnt++;
      }
    }
    rows.push({
      approve: scores.filter((s) => s >= DEFAULT_THRESHOLDS.approve).length / scores.length,
      flag: scores.filter((s) => s >= DEFAULT_THRESHOLDS.flag).length / scores.length,
      meanScore: scores.reduce((a, b) => a + b, 0) / scores.length,
      shipped: estimateForgeability(model, core.groupOffsets, DEFAULT_THRESHOLDS.approve, undefined, params).estimatedFarAtApprove,
      spread,
      varRatio: cnt ? varRatio / cnt : 0,
      strongSim: simScores.length ? simScores.reduce((a, b) => a + b, 0) / simScores.length : 0,
      heldOut: compareToModel(core, held.features, model, params).score,
    });
    process.stderr.write(`\r${ds.name} ${w.id}`);
  }
  process.stderr.write("\n");
  console.log(`${ds.name}, N = ${n}, ${rows.length} writers, scoring trained on ${params.trainedOn.join(", ")}; strength ${STRENGTH}`);
  console.log("predictor  | vs approve | vs flag | vs mean forgery score");
  for (const p of ["shipped", "spread", "varRatio", "strongSim", "heldOut"]) {
    const x = rows.map((r) => r[p]);
    console.log(
      `${p.padEnd(10)} | ${spearman(
        x,
        rows.map((r) => r.approve),
      )
        .toFixed(2)
        .padStart(10)} | ${spearman(
        x,
        rows.map((r) => r.flag),
      )
        .toFixed(2)
        .padStart(7)} | ${spearman(
        x,
        rows.map((r) => r.meanScore),
      )
        .toFixed(2)
        .padStart(6)}`,
    );
  }
}
