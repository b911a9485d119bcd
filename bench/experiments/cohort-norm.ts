// E22: cohort score normalisation (Z-norm / T-norm as in speaker verification), leave-one-dataset-out.
//   node --import tsx bench/experiments/cohort-norm.ts --cache /tmp/fcache
// For each subject model, a cohort of other writers' genuine signatures is scored against it; the
// questioned signature's logit is then normalised by the cohort's logits (shift, or shift and scale).
// Cohorts: "train" = one genuine sample per writer of the training dataset (what a shipped cohort would be),
// "own" = one genuine sample (the first) of every other writer of the scored dataset (a tenant's other subjects).
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { compareToModel } from "../../src/verify/compare";
import { loadDataset, type Dataset, type Sample, type Writer } from "../lib/dataset";
import { lodoParams, lodoTargets } from "../lib/lodo";
import { loadNodeCore } from "../lib/node-core";
import { modelFor, questionedOf } from "../lib/protocol";
import { pct, rates } from "../lib/rates";
import type { Trial } from "../lib/trial";

const arg = (n: string) => {
  const i = process.argv.indexOf(n);
  return i >= 0 ? process.argv[i + 1] : undefined;
};
const logit = (p: number) => {
  const q = Math.min(1 - 1e-9, Math.max(1e-9, p));
  return Math.log(q / (1 - q));
};
const sig = (t: number) => 1 / (1 + Math.exp(-t));

const core = loadNodeCore();
const coreBytes = new Uint8Array(readFileSync(fileURLToPath(new URL("../../wasm/build/core.wasm", import.meta.url))));
const cacheDir = arg("--cache");
const COHORT = Number(arg("--cohort") ?? 100);
const { all } = lodoTargets(undefined);
const full: Dataset[] = [];
for (const f of all) full.push(await loadDataset(core, f, coreBytes, { cacheDir }));

type Variant = { name: string; f: (L: number, mu: number, sd: number) => number };
const variants: Variant[] = [
  { name: "raw", f: (L) => L },
  { name: "shift", f: (L, mu) => L - mu },
  { name: "half shift", f: (L, mu) => L - 0.5 * mu },
  { name: "z", f: (L, mu, sd) => (L - mu) / Math.max(sd, 0.25) },
  { name: "scale only", f: (L, _mu, sd) => L / Math.max(sd, 0.25) },
];

for (const ds of full) {
  const params = lodoParams(core, ds, full);
  const train = full.filter((d) => d !== ds);
  const trainCohort: Sample[] = train
    .flatMap((d) => d.writers)
    .filter((w) => w.genuine.length > 0)
    .map((w) => w.genuine[0]);
  const step = Math.max(1, Math.floor(trainCohort.length / COHORT));
  const shipped = trainCohort.filter((_, i) => i % step === 0).slice(0, COHORT);
  for (const cohortKind of ["train", "own"] as const) {
    console.log(`\n${ds.name} (trained on ${params.trainedOn.join(",")}), cohort ${cohortKind}`);
    console.log(`  N | ${variants.map((v) => v.name.padStart(22)).join(" |")}   (skilled EER glob / writer, random EER)`);
    for (const n of [1, 3, 5, 10]) {
      const per: Trial[][] = variants.map(() => []);
      for (const w of ds.writers) {
        if (w.genuine.length < 2) continue;
        const model = modelFor(core, w, n, params);
        const cohort: Sample[] =
          cohortKind === "train"
            ? shipped
            : ds.writers.filter((o: Writer) => o.id !== w.id && o.genuine.length > 0).map((o) => o.genuine[0]);
        const cl = cohort.map((s) => logit(compareToModel(core, s.features, model, params).score));
        const mu = cl.reduce((a, b) => a + b, 0) / cl.length;
        const sd = Math.sqrt(cl.reduce((a, b) => a + (b - mu) ** 2, 0) / cl.length);
        for (const q of questionedOf(w, n, ds.writers)) {
          const L = logit(compareToModel(core, q.sample.features, model, params).score);
          variants.forEach((v, i) => per[i].push({ writer: w.id, kind: q.kind, score: sig(v.f(L, mu, sd)) }));
        }
      }
      const cells = per.map((t) => {
        const s = rates(t, "skilled");
        const r = rates(t, "random");
        return `${pct(s.eer_global)}/${pct(s.eer_writer)} ${pct(r.eer_global)}`;
      });
      console.log(`${String(n).padStart(3)} | ${cells.join(" |")}`);
    }
  }
}
