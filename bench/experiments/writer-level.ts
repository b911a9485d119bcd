// E77 (experiment, issue 14): a floor under each writer's threshold from how its own references score.
// At N = 10 the Dutch forgeries that pass `approve` belong to steady writers, whose genuine signatures
// score far above it (docs/accuracy.md, "Column terms, a steadier subject's z"). Here each reference is
// scored against a model of the other references (leave-one-out, production compare path), and a
// questioned signature's logit L becomes L - beta * max(0, m - c), m the mean leave-one-out logit: a
// steady writer's bar rises, nobody else's moves. Unlike E14 (a shift for every writer), a variable
// writer's genuine signatures are never pushed down. N >= 5 only (a leave-one-out model of fewer than
// four references would rest on synthetic variants). Leave-one-dataset-out: the scoring parameters are
// trained on the other set, and (beta, c) picked on that set's own writers scored with them; the scored
// set is seen by neither.
//   node --import tsx bench/experiments/writer-level.ts --cache DIR
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { buildReferenceModel } from "../../src/verify/model";
import { logit, sigmoid } from "../../src/verify/calibration";
import { compareToModel } from "../../src/verify/compare";
import { loadDataset, type Dataset } from "../lib/dataset";
import { lodoParams, lodoTargets } from "../lib/lodo";
import { loadNodeCore } from "../lib/node-core";
import { modelFor, questionedOf, referencesOf } from "../lib/protocol";
import { pct, rates } from "../lib/rates";
import type { Trial } from "../lib/trial";

const cacheAt = process.argv.indexOf("--cache");
const logitOf = (p: number) => logit(p, 1e-9);

const core = loadNodeCore();
const coreBytes = new Uint8Array(readFileSync(fileURLToPath(new URL("../../wasm/build/core.wasm", import.meta.url))));
const { all } = lodoTargets(undefined);
const full: Dataset[] = [];
for (const f of all) full.push(await loadDataset(core, f, coreBytes, { cacheDir: cacheAt >= 0 ? process.argv[cacheAt + 1] : undefined }));

const NS = [5, 10];
const BETAS = [0, 0.25, 0.5, 0.75, 1];
const CS = [2, 3, 4, 5, 6];

/** Per N: every questioned trial with its raw logit and its writer's mean leave-one-out logit. */
type Scored = { writer: string; kind: Trial["kind"]; L: number; m: number }[];

function scoreSet(ds: Dataset, params: ReturnType<typeof lodoParams>, n: number): Scored {
  const out: Scored = [];
  for (const w of ds.writers) {
    if (w.genuine.length < 2) continue;
    const refs = referencesOf(w, n);
    if (refs.length < 5) continue;
    const loo = refs.map((r, i) => {
      const others = refs.filter((_, j) => j !== i).map((s) => ({ refId: s.path, features: s.features, raster: s.raster }));
      return logitOf(compareToModel(core, r.features, buildReferenceModel(core, others, params), params).score);
    });
    const m = loo.reduce((a, b) => a + b, 0) / loo.length;
    const model = modelFor(core, w, n, params);
    for (const q of questionedOf(w, n, ds.writers)) {
      out.push({ writer: w.id, kind: q.kind, L: logitOf(compareToModel(core, q.sample.features, model, params).score), m });
    }
  }
  return out;
}

const apply = (s: Scored, beta: number, c: number): Trial[] =>
  s.map((t) => ({ writer: t.writer, kind: t.kind, score: sigmoid(t.L - beta * Math.max(0, t.m - c)) }));
const cost = (s: Scored, beta: number, c: number) => {
  const r = rates(apply(s, beta, c), "skilled");
  return r.eer_global;
};

for (const ds of full) {
  const other = full.find((d) => d !== ds)!;
  const params = lodoParams(core, ds, full);
  console.log(`\n${ds.name} (scoring trained on ${other.name}); cells: skilled EER, FAR / FRR at approve`);
  for (const n of NS) {
    const mine = scoreSet(ds, params, n);
    const theirs = scoreSet(other, params, n);
    // (beta, c) chosen on the training set's own writers only.
    let best = { beta: 0, c: CS[0], e: Number.POSITIVE_INFINITY };
    for (const beta of BETAS)
      for (const c of CS) {
        const e = cost(theirs, beta, c);
        if (e < best.e - 1e-9) best = { beta, c, e };
      }
    const cell = (beta: number, c: number) => {
      const r = rates(apply(mine, beta, c), "skilled");
      return `${pct(r.eer_global)} ${pct(r.far)}/${pct(r.frr)}`;
    };
    console.log(`  N=${n}: as shipped ${cell(0, 0)}; picked on ${other.name} (beta ${best.beta}, c ${best.c}): ${cell(best.beta, best.c)}`);
    for (const beta of BETAS.slice(1)) console.log(`    beta ${beta}: ${CS.map((c) => `c ${c} ${cell(beta, c)}`).join(" |")}`);
  }
}
