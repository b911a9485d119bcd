// Robustness benchmark (issue 14): how much worse does verification get when the images come from another
// capture than the development sets' clean 300 dpi scans? Each condition of bench/lib/render.ts re-renders
// every image of the scored dataset in memory (nothing is written), the production path extracts its
// features, and the protocol of ../shared/design/verification.md scores it with leave-one-dataset-out
// parameters (trained on the other datasets, clean, never on the scored one; default policy thresholds).
//
//   npm run bench:robustness [-- <dataset folder | folder of datasets>] [--stride K] [--only c1,c2]
//                            [--out DIR] [--cache DIR] [--preview DIR]
//
// Sides: "questioned" renders only the questioned images (the subject's remaining genuine samples, the
// skilled forgeries and the other writers' random forgeries) and keeps the references clean: a new
// scanner or pen at check time, the realistic case. "both" renders the references as well, for the
// capture conditions (a customer whose whole pipeline scans that way) and for a writer's own habits (a
// thin or thick pen, a light pen on grey paper, a flourish that always fades: their references share it).
// Reported per condition: skilled EER with one global threshold at N = 3 and N = 10 references, its
// change from clean, and FAR (skilled) / FRR at the default approve threshold. Clean features come from the feature cache (default:
// <tmpdir>/countersign-features); rendered ones are extracted afresh. --stride K scores every K-th writer
// (training still sees every writer of the other datasets). --preview DIR writes each condition's
// rendering of the first writer's first genuine sample as PNG, to look at.
//
// --forgeability adds, per cell, the subject forgeability estimate (src/verify/forgeability.ts) against what
// forgers achieved: the mean over writers of the estimated skilled-forgery pass rate at approve, of each
// writer's model as enrolled under the condition, beside the mean observed pass rate per writer. The
// estimate is fitted leave-one-dataset-out too (on the training datasets' cross-validated records, as
// bench:forgeability does), which adds a few minutes. The question it answers: when a condition makes
// forgeries pass more often, does the subject view say so?
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ScoringParams } from "../src/verify/calibration";
import { compareToModel } from "../src/verify/compare";
import type { Core } from "../src/verify/core";
import { decodePage } from "../src/verify/decode/index";
import { extractFeatures } from "../src/verify/features";
import { estimateForgeability, type ForgeabilityParams } from "../src/verify/forgeability";
import type { Raster } from "../src/verify/types";
import { DEFAULT_THRESHOLDS } from "../src/domain/policy-defaults";
import { type Dataset, loadDataset, RASTERS_KEPT, type Sample, type Writer } from "./lib/dataset";
import { parseOptions } from "./lib/cli";
import { lodoParams, lodoTargets } from "./lib/lodo";
import { loadNodeCore } from "./lib/node-core";
import { modelFor, questionedOf, regimeCounter } from "./lib/protocol";
import type { Trial } from "./lib/trial";
import { pct, rates } from "./lib/rates";
import { CONDITIONS, type Condition, rngFor, toPng } from "./lib/render";
import { crossValidatedRecords, FIT_NS, fitForgeability } from "./train/forgeability-fit";

const NS = [3, 10];

const options = parseOptions({
  values: ["--stride", "--only", "--out", "--cache", "--preview"],
  flags: ["--forgeability"],
  usage: [
    "npm run bench:robustness [-- <dataset folder | folder of datasets>] [--stride K] [--only c1,c2]",
    "                         [--out DIR] [--cache DIR] [--preview DIR] [--forgeability]",
  ].join("\n"),
});
const arg = options.value;

const log = (s: string) => process.stderr.write(s);

interface Cell {
  skilled_eer: number;
  skilled_eer_writer: number;
  /** Skilled forgeries accepted at the default approve threshold. */
  far: number;
  /** Genuine samples rejected at the default approve threshold. */
  frr: number;
  random_eer: number;
  random_far: number;
  /** With --forgeability: mean over writers of the estimated and of the observed skilled pass rate at approve. */
  forgeability?: { predicted: number; observed: number };
}

interface Row {
  condition: string;
  about: string;
  side: "clean" | "questioned" | "both";
  byN: Record<number, Cell>;
}

interface Scored {
  trials: Trial[];
  /** With --forgeability, per writer with skilled forgeries: estimated and observed pass rate at approve. */
  writers?: { predicted: number; observed: number }[];
}

function cell({ trials, writers }: Scored): Cell {
  const s = rates(trials, "skilled");
  const q = rates(trials, "random");
  const mean = (a: number[]) => a.reduce((t, v) => t + v, 0) / Math.max(1, a.length);
  return {
    skilled_eer: s.eer_global,
    skilled_eer_writer: s.eer_writer,
    far: s.far,
    frr: s.frr,
    random_eer: q.eer_global,
    random_far: q.far,
    ...(writers
      ? { forgeability: { predicted: mean(writers.map((w) => w.predicted)), observed: mean(writers.map((w) => w.observed)) } }
      : {}),
  };
}

/**
 * References from `refsFrom`, questioned samples from `questioned`: same writers, same order (clean and
 * clean, clean and rendered, or rendered and rendered). With `forge`, each writer's model also gets the
 * forgeability estimate at approve, set against the share of its skilled forgeries that reached approve.
 */
function scoreCondition(
  core: Core,
  refsFrom: Writer[],
  questioned: Writer[],
  n: number,
  params: ScoringParams,
  forge?: ForgeabilityParams,
): Scored {
  const trials: Trial[] = [];
  const writers: Scored["writers"] = forge ? [] : undefined;
  const switched = regimeCounter();
  const approve = DEFAULT_THRESHOLDS.approve;
  refsFrom.forEach((w, i) => {
    if (w.genuine.length < 2) return;
    const model = modelFor(core, w, n, params);
    let skilled = 0;
    let passed = 0;
    for (const q of questionedOf(questioned[i], n, questioned)) {
      const c = compareToModel(core, q.sample.features, model, params);
      switched.add(q.kind, c.regime);
      trials.push({ writer: w.id, kind: q.kind, score: c.score });
      if (q.kind === "skilled") {
        skilled++;
        if (c.score >= approve) passed++;
      }
    }
    if (forge && writers && skilled > 0) {
      const predicted = estimateForgeability(model, core.groupOffsets, approve, forge, params).estimatedFarAtApprove;
      writers.push({ predicted, observed: passed / skilled });
    }
  });
  switched.log(`N=${n}${refsFrom === questioned ? "" : " (questioned rendered)"}`);
  return { trials, writers };
}

/** The forgeability estimate fitted on the training datasets only (as bench:forgeability, leave one dataset out). */
function lodoForgeability(core: Core, scored: Dataset, loaded: Dataset[]): ForgeabilityParams {
  const others = loaded.filter((d) => d.folder !== scored.folder);
  log(`forgeability estimate: cross-validated records of ${others.map((d) => d.name).join(", ")}\n`);
  const records = others.flatMap((d) => crossValidatedRecords(core, d.name, d.writers, FIT_NS));
  return fitForgeability(
    records,
    others.map((d) => d.name),
    `5-fold writer-disjoint cross-validation within ${others.map((d) => d.name).join(" and ")}`,
  );
}

/** Every image of the dataset's (scored) writers, rendered under `c` and run through the production extractor. */
async function renderWriters(core: Core, ds: Dataset, c: Condition): Promise<Writer[]> {
  const one = async (s: Sample, keep: boolean): Promise<Sample> => {
    const raster = await c.render(
      await decodePage(new Uint8Array(readFileSync(join(ds.folder, s.path))), 0),
      rngFor(`${c.name}|${s.path}`),
    );
    return { path: s.path, features: extractFeatures(core, raster), raster: keep ? raster : undefined };
  };
  const out: Writer[] = [];
  for (const w of ds.writers) {
    const genuine: Sample[] = [];
    for (const [i, s] of w.genuine.entries()) genuine.push(await one(s, i < RASTERS_KEPT));
    const forgeries: Sample[] = [];
    for (const s of w.forgeries) forgeries.push(await one(s, false));
    out.push({ id: w.id, genuine, forgeries });
  }
  return out;
}

async function preview(ds: Dataset, dir: string): Promise<void> {
  mkdirSync(dir, { recursive: true });
  const s = ds.writers[0].genuine[0];
  const clean = await decodePage(new Uint8Array(readFileSync(join(ds.folder, s.path))), 0);
  writeFileSync(join(dir, `${ds.name}-clean.png`), toPng(clean));
  for (const c of CONDITIONS)
    writeFileSync(join(dir, `${ds.name}-${c.name}.png`), toPng(await c.render(clean, rngFor(`${c.name}|${s.path}`))));
  log(`previews of ${s.path} in ${dir}\n`);
}

function printTable(title: string, rows: Row[]): void {
  const clean = rows.find((r) => r.side === "clean")!;
  console.log(`\n${title}`);
  console.log(`thresholds: approve ${DEFAULT_THRESHOLDS.approve} (the default policy's); skilled EER with one global threshold`);
  const head = NS.map((n) => `N=${n}: EER  (vs clean)  FAR@appr FRR@appr`).join(" | ");
  console.log(`condition    side       | ${head}`);
  for (const r of rows) {
    const cells = NS.map((n) => {
      const c = r.byN[n];
      const d = c.skilled_eer - clean.byN[n].skilled_eer;
      const delta = r.side === "clean" ? "        " : `${d >= 0 ? "+" : "-"}${(100 * Math.abs(d)).toFixed(1).padStart(4)} pt`;
      return `${pct(c.skilled_eer)} (${delta})  ${pct(c.far)}   ${pct(c.frr)}`;
    });
    console.log(`${r.condition.padEnd(12)} ${r.side.padEnd(10)} | ${cells.join(" |  ")}`);
  }
  if (!clean.byN[NS[0]].forgeability) return;
  console.log("\nforgeability: skilled-forgery pass rate at approve, mean over writers, estimated / observed");
  console.log(`condition    side       | ${NS.map((n) => `N=${n}: estimated observed`).join(" | ")}`);
  for (const r of rows) {
    const cells = NS.map((n) => {
      const f = r.byN[n].forgeability!;
      return `${pct(f.predicted).padStart(14)} ${pct(f.observed).padStart(8)}`;
    });
    console.log(`${r.condition.padEnd(12)} ${r.side.padEnd(10)} | ${cells.join(" | ")}`);
  }
}

async function main(): Promise<void> {
  const t0 = Date.now();
  const folder = options.positional[0];
  const core = loadNodeCore();
  const coreBytes = new Uint8Array(readFileSync(fileURLToPath(new URL("../wasm/build/core.wasm", import.meta.url))));
  const stride = Number(arg("--stride") ?? 1);
  const cacheDir = arg("--cache") ?? join(tmpdir(), "countersign-features");
  const out = arg("--out") ?? fileURLToPath(new URL("./results", import.meta.url));
  mkdirSync(out, { recursive: true });
  const only = arg("--only")?.split(",");
  const conditions = only ? CONDITIONS.filter((c) => only.includes(c.name)) : CONDITIONS;
  if (only && conditions.length !== only.length)
    throw new Error(`unknown condition in --only; known: ${CONDITIONS.map((c) => c.name).join(", ")}`);
  const { scored, all } = lodoTargets(folder);

  const full = new Map<string, Dataset>();
  for (const f of all) full.set(f, await loadDataset(core, f, coreBytes, { cacheDir, log }));
  for (const f of scored) {
    const tDs = Date.now();
    const ds = stride > 1 ? await loadDataset(core, f, coreBytes, { cacheDir, writerStride: stride }) : full.get(f)!;
    const previewDir = arg("--preview");
    if (previewDir) await preview(ds, previewDir);
    const params = lodoParams(core, ds, [...full.values()]);
    const forge = options.flag("--forgeability") ? lodoForgeability(core, ds, [...full.values()]) : undefined;
    const byN = (refsFrom: Writer[], questioned: Writer[]) =>
      Object.fromEntries(NS.map((n) => [n, cell(scoreCondition(core, refsFrom, questioned, n, params, forge))]));
    const rows: Row[] = [
      {
        condition: "clean",
        about: "the dataset as scanned",
        side: "clean",
        byN: byN(ds.writers, ds.writers),
      },
    ];
    const images = ds.writers.reduce((s, w) => s + w.genuine.length + w.forgeries.length, 0);
    for (const c of conditions) {
      const tc = Date.now();
      const rendered = await renderWriters(core, ds, c);
      const tr = Date.now();
      rows.push({
        condition: c.name,
        about: c.about,
        side: "questioned",
        byN: byN(ds.writers, rendered),
      });
      if (c.both) rows.push({ condition: c.name, about: c.about, side: "both", byN: byN(rendered, rendered) });
      log(
        `${ds.name} ${c.name}: rendered+extracted ${images} images in ${((tr - tc) / 1000).toFixed(0)} s, scored in ${((Date.now() - tr) / 1000).toFixed(0)} s\n`,
      );
    }
    printTable(
      `${ds.name}: ${ds.writers.length} writers${stride > 1 ? ` (1 in ${stride})` : ""}, leave-one-dataset-out: trained on ${params.trainedOn.join(", ")} only`,
      rows,
    );
    const seconds = (Date.now() - tDs) / 1000;
    console.log(`${images} images per condition, ${conditions.length} conditions: ${seconds.toFixed(0)} s`);
    const file = join(out, `robustness-${ds.name}${stride > 1 ? `-stride${stride}` : ""}.json`);
    writeFileSync(
      file,
      JSON.stringify(
        {
          dataset: ds.name,
          protocol: "leave-one-dataset-out",
          trainedOn: params.trainedOn,
          writers: ds.writers.length,
          stride,
          imagesPerCondition: images,
          thresholds: DEFAULT_THRESHOLDS,
          seconds,
          conditions: CONDITIONS.filter((c) => conditions.includes(c)).map((c) => ({ name: c.name, about: c.about, both: c.both })),
          rows,
        },
        null,
        1,
      ),
    );
    console.log(`wrote ${file}`);
  }
  console.log(`total ${((Date.now() - t0) / 1000).toFixed(0)} s`);
}

await main();
