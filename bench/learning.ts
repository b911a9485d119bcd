// Learning benchmark (issue 12): does learning from confirmed checks close the gap between 3 and 10
// anchors, and how much does a mistaken confirmation of a skilled forgery cost?
//
//   npm run bench:learning -- <dataset folder> [--train-on <other dataset folder>] [--json FILE] [--stride K] [--cache DIR]
//
// Per writer with at least 11 genuine samples:
//   anchors      genuine[0..2]
//   replayed     genuine[3..9], in order, as confirmed checks: each is scored against the subject's current
//                model (anchors plus what was learned so far), then passes the real entry bar
//                (src/domain/learning-bar.ts: recordRefusal on the check, candidateRefusal against the anchors
//                alone) with the default policy (learning.min_score 0.8) before it is learned
//   poisoned     after learning, forgeries[0..p-1] (p = 1 or 3) are "confirmed" by mistake and replayed the same way
//   questioned   genuine[10..] and forgeries[3..], the same for every column
// Columns: 3 anchors, 10 anchors (genuine[0..9]), 3 anchors + learning, + 1 and + 3 mistaken confirmations,
// and + 1 mistaken confirmation forced past the bar (what the model's own weighting alone bounds).
// Every image goes through the production decoder and features; models are buildReferenceModel and scores
// compareToModel. The input's quality is not re-judged here (the datasets are clean scans).
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { DEFAULT_PARAMS, type ScoringParams } from "../src/verify/calibration";
import { compareToModel } from "../src/verify/compare";
import { buildReferenceModel, type ReferenceInput } from "../src/verify/model";
import type { Core } from "../src/verify/core";
import { DEFAULT_LEARNING_MIN_SCORE, DEFAULT_QUALITY_FLOOR, DEFAULT_THRESHOLDS } from "../src/domain/policy-defaults";
import { candidateRefusal, recordRefusal } from "../src/domain/learning-bar";
import { parseOptions } from "./lib/cli";
import { loadDataset, type Sample, type Writer } from "./lib/dataset";
import { eer, ratesAt } from "./lib/metrics";
import { loadNodeCore } from "./lib/node-core";
import { fitAll } from "./train/fit";

const ANCHORS = 3;
const FULL = 10;
const POISON = [1, 3];

const options = parseOptions({
  values: ["--train-on", "--json", "--stride", "--cache"],
  usage: "npm run bench:learning -- <dataset folder> [--train-on <other dataset folder>] [--json FILE] [--stride K] [--cache DIR]",
});
const arg = options.value;

const asRef = (s: Sample, learned = false): ReferenceInput => ({
  refId: s.path,
  features: s.features,
  raster: learned ? undefined : s.raster,
  learned,
});

/**
 * Replays `samples` as confirmed checks against the subject (`refs`, learned ones appended in place):
 * each goes through the real entry bar. Returns how many were learned.
 */
function replay(core: Core, refs: ReferenceInput[], samples: Sample[], params: ScoringParams, force = false): number {
  const anchors = refs.filter((r) => !r.learned);
  const anchorModel = buildReferenceModel(core, anchors, params);
  let learned = 0;
  for (const s of samples) {
    const current = buildReferenceModel(core, refs, params);
    const check = compareToModel(core, s.features, current, params);
    const record = recordRefusal({
      blocked: false,
      inputAvailable: true,
      signatureScores: [check.score],
      bestSignature: 0,
      score: check.score,
      quality: 1,
      policy: { quality_floor: DEFAULT_QUALITY_FLOOR, min_score: DEFAULT_LEARNING_MIN_SCORE },
      anchors: anchors.length,
      subjectChange: null,
    });
    const vs = compareToModel(core, s.features, anchorModel, params);
    const candidate = candidateRefusal({
      quality: 1,
      qualityFloor: DEFAULT_QUALITY_FLOOR,
      distanceToAnchors: vs.distance,
      anchorScore: vs.score,
      minScore: DEFAULT_LEARNING_MIN_SCORE,
    });
    if (force || (!record && !candidate)) {
      refs.push(asRef(s, true));
      learned++;
    }
  }
  return learned;
}

interface Column {
  name: string;
  genuine: number[];
  skilled: number[];
  learned: number;
  poisonLearned: number;
}

async function main(): Promise<void> {
  const folder = options.positional[0];
  if (!folder || folder.startsWith("--")) {
    console.error(
      "usage: npm run bench:learning -- <dataset folder> [--train-on <other dataset folder>] [--json FILE] [--stride K] [--cache DIR]",
    );
    process.exit(2);
  }
  const t0 = Date.now();
  const core = loadNodeCore();
  const coreBytes = new Uint8Array(readFileSync(fileURLToPath(new URL("../wasm/build/core.wasm", import.meta.url))));
  const log = (s: string) => process.stderr.write(s);
  const cacheDir = arg("--cache");
  const ds = await loadDataset(core, folder, coreBytes, { writerStride: Number(arg("--stride") ?? 1), cacheDir, log });
  const trainOn = arg("--train-on");
  let params: ScoringParams = DEFAULT_PARAMS;
  let label = "shipped";
  if (trainOn) {
    const other = await loadDataset(core, trainOn, coreBytes, { cacheDir, log });
    // Every part, as production scores (the regimes and their blend move what the entry bar lets in).
    params = fitAll(core, other.writers, { trainedOn: [other.name], classifier: "lr" });
    label = `trained on ${other.name}`;
  } else if (DEFAULT_PARAMS.trainedOn.includes(ds.name)) {
    console.error(`the shipped parameters were trained on ${ds.name}'s writers: pass --train-on <other dataset>`);
    process.exit(2);
  }

  const names = ["3 anchors", "10 anchors", "3 + learning", "+1 mistaken", "+3 mistaken", "+1 forced"];
  const cols: Column[] = names.map((name) => ({ name, genuine: [], skilled: [], learned: 0, poisonLearned: 0 }));
  const writers = ds.writers.filter((w: Writer) => w.genuine.length > FULL && w.forgeries.length > Math.max(...POISON));
  for (const w of writers) {
    const questionedGenuine = w.genuine.slice(FULL);
    const questionedSkilled = w.forgeries.slice(Math.max(...POISON));
    const score = (col: Column, refs: ReferenceInput[]) => {
      const model = buildReferenceModel(core, refs, params);
      for (const s of questionedGenuine) col.genuine.push(compareToModel(core, s.features, model, params).score);
      for (const s of questionedSkilled) col.skilled.push(compareToModel(core, s.features, model, params).score);
    };
    const anchors = w.genuine.slice(0, ANCHORS).map((s) => asRef(s));
    score(cols[0], anchors);
    score(
      cols[1],
      w.genuine.slice(0, FULL).map((s) => asRef(s)),
    );

    const learnedRefs = [...anchors];
    cols[2].learned += replay(core, learnedRefs, w.genuine.slice(ANCHORS, FULL), params);
    score(cols[2], learnedRefs);
    POISON.forEach((p, i) => {
      const refs = [...learnedRefs];
      cols[3 + i].poisonLearned += replay(core, refs, w.forgeries.slice(0, p), params);
      score(cols[3 + i], refs);
    });
    const forced = [...learnedRefs];
    cols[5].poisonLearned += replay(core, forced, w.forgeries.slice(0, 1), params, true);
    score(cols[5], forced);
  }

  const pct = (v: number) => `${(100 * v).toFixed(1)}%`;
  const rows = cols.map((c) => {
    const at = ratesAt(c.genuine, c.skilled, DEFAULT_THRESHOLDS.approve);
    return { name: c.name, eer: eer(c.genuine, c.skilled), far: at.far, frr: at.frr, learned: c.learned, poisonLearned: c.poisonLearned };
  });
  console.log(`\n${ds.name}: ${writers.length} writers (with > ${FULL} genuine), scoring parameters: ${label}`);
  console.log(
    `questioned per writer: genuine[${FULL}..], forgeries[${Math.max(...POISON)}..]; approve threshold ${DEFAULT_THRESHOLDS.approve}, learning.min_score ${DEFAULT_LEARNING_MIN_SCORE}`,
  );
  console.log("column         | skilled EER | FAR@approve | FRR@approve | learned genuine | mistaken learned");
  for (const r of rows) {
    console.log(
      `${r.name.padEnd(14)} | ${pct(r.eer).padStart(11)} | ${pct(r.far).padStart(11)} | ${pct(r.frr).padStart(11)} | ${String(r.learned).padStart(15)} | ${String(r.poisonLearned).padStart(16)}`,
    );
  }
  const gap = rows[0].eer - rows[1].eer;
  const closed = gap > 0 ? (rows[0].eer - rows[2].eer) / gap : Number.NaN;
  const frrGap = rows[0].frr - rows[1].frr;
  const frrClosed = frrGap > 0 ? (rows[0].frr - rows[2].frr) / frrGap : Number.NaN;
  console.log(`gap closed by learning: EER ${pct(closed)}, FRR@approve ${pct(frrClosed)} (target: EER >= 50%)`);
  console.log(
    `FAR@approve rise: +1 mistaken ${((rows[3].far - rows[2].far) * 100).toFixed(2)} points, +3 mistaken ${((rows[4].far - rows[2].far) * 100).toFixed(2)} points, +1 forced past the bar ${((rows[5].far - rows[2].far) * 100).toFixed(2)} points (target: +1 <= 1 point)`,
  );
  console.log(`total ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  const json = arg("--json");
  if (json)
    writeFileSync(
      json,
      JSON.stringify(
        { dataset: ds.name, params: label, writers: writers.length, rows, gapClosed: closed, frrGapClosed: frrClosed },
        null,
        1,
      ),
    );
}

await main();
