// E78: test normalisation (T-norm of speaker verification), leave-one-dataset-out.
//   node --import tsx bench/experiments/t-norm.ts --cache DIR [--cohort 30] [--only <dataset name>]
// E22 (cohort-norm.ts) normalised each subject's scores by other writers' signatures scored against the
// subject's model (Z-norm). This is the dual: each questioned signature is also scored against the models
// of a cohort of other subjects, and its logit is normalised by those logits. What T-norm can remove is a
// shift that belongs to the questioned capture (a thinner pen, another scanner, blur): such a capture sits
// far from every model alike, so its cohort logits fall with its own. Cohorts:
//   "own"   = models of up to K other writers of the scored set, each with the same N references
//             (a tenant's other subjects, captured like this one);
//   "train" = models of K writers of the training set (what a shipped cohort would be).
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { logit, sigmoid } from "../../src/verify/calibration";
import { compareToModel } from "../../src/verify/compare";
import type { ReferenceModel } from "../../src/verify/model";
import { type Dataset, loadDataset, type Writer } from "../lib/dataset";
import { lodoParams, lodoTargets } from "../lib/lodo";
import { loadNodeCore } from "../lib/node-core";
import { modelFor, questionedOf } from "../lib/protocol";
import { pct, rates } from "../lib/rates";
import type { Trial } from "../lib/trial";

const arg = (n: string) => {
  const i = process.argv.indexOf(n);
  return i >= 0 ? process.argv[i + 1] : undefined;
};

const core = loadNodeCore();
const coreBytes = new Uint8Array(readFileSync(fileURLToPath(new URL("../../wasm/build/core.wasm", import.meta.url))));
const cacheDir = arg("--cache");
const K = Number(arg("--cohort") ?? 30);
const only = arg("--only");
const { all } = lodoTargets(undefined);
const full: Dataset[] = [];
for (const f of all) full.push(await loadDataset(core, f, coreBytes, { cacheDir }));

type Variant = { name: string; f: (L: number, mu: number, sd: number) => number };
const variants: Variant[] = [
  { name: "raw", f: (L) => L },
  { name: "shift", f: (L, mu) => L - mu },
  { name: "half shift", f: (L, mu) => L - 0.5 * mu },
  { name: "quarter shift", f: (L, mu) => L - 0.25 * mu },
  { name: "z", f: (L, mu, sd) => (L - mu) / Math.max(sd, 0.5) },
];

/** Every k-th writer with at least two genuine samples, k chosen so that at most K remain. */
function spaced(writers: Writer[], k: number): Writer[] {
  const usable = writers.filter((w) => w.genuine.length >= 2);
  const step = Math.max(1, Math.floor(usable.length / k));
  return usable.filter((_, i) => i % step === 0).slice(0, k);
}

for (const ds of full) {
  if (only && ds.name !== only) continue;
  const params = lodoParams(core, ds, full);
  const trainWriters = full.filter((d) => d !== ds).flatMap((d) => d.writers);
  for (const cohortKind of ["own", "train"] as const) {
    console.log(`\n${ds.name} (trained on ${params.trainedOn.join(",")}), cohort ${cohortKind}, K ${K}`);
    console.log(`  N | ${variants.map((v) => v.name.padStart(26)).join(" |")}`);
    console.log(`    | ${variants.map(() => "skilled glob/wr FAR/FRR@appr".padStart(26)).join(" |")}`);
    for (const n of [1, 3, 5, 10]) {
      const pool = cohortKind === "own" ? spaced(ds.writers, K + 1) : spaced(trainWriters, K);
      const cohortModels = new Map<string, ReferenceModel>(pool.map((w) => [w.id, modelFor(core, w, n, params)]));
      const per: Trial[][] = variants.map(() => []);
      for (const w of ds.writers) {
        if (w.genuine.length < 2) continue;
        const model = modelFor(core, w, n, params);
        // The subject's own model is never in its cohort; with the own cohort that leaves K others.
        const cohort = [...cohortModels.entries()]
          .filter(([id]) => id !== w.id)
          .slice(0, K)
          .map(([, m]) => m);
        for (const q of questionedOf(w, n, ds.writers)) {
          const L = logit(compareToModel(core, q.sample.features, model, params).score, 1e-9);
          const cl = cohort.map((m) => logit(compareToModel(core, q.sample.features, m, params).score, 1e-9));
          const mu = cl.reduce((a, b) => a + b, 0) / cl.length;
          const sd = Math.sqrt(cl.reduce((a, b) => a + (b - mu) ** 2, 0) / cl.length);
          variants.forEach((v, i) => {
            per[i].push({ writer: w.id, kind: q.kind, score: sigmoid(v.f(L, mu, sd)) });
          });
        }
      }
      const cells = per.map((t) => {
        const s = rates(t, "skilled");
        const r = rates(t, "random");
        return `${pct(s.eer_global)}/${pct(s.eer_writer)} ${pct(s.far)}/${pct(s.frr)} r${pct(r.eer_global)}`;
      });
      console.log(`${String(n).padStart(3)} | ${cells.join(" |")}`);
    }
  }
}
