// Accuracy benchmark (issues 3 and 14), following the protocol in ../shared/design/verification.md.
//
//   npm run bench:accuracy [-- <dataset folder | folder of datasets>] [--out DIR] [--stride K] [--cache DIR]
//       [--scores DIR]
//   npm run bench:accuracy -- <dataset folder> --weights shipped|cv|zmean-cv [--json FILE]
//   npm run bench:accuracy -- <dataset folder> --train-on <other dataset folder> [--json FILE]
//   npm run bench:accuracy -- <dataset folder> --page a4-jpeg [--on-line] [--weights ...] [--json FILE]
//
// --page a4-jpeg: every image is signed onto a printed form, scanned as a 300 dpi JPEG, and its features
// are taken from the crop the pipeline locates (bench/lib/a4-page.ts), once with the page decoded whole and
// once with the scaled decode, from the same pages: both tables, and the shift between them, are printed.
// With --on-line the signature sits on the form's signing line, as people sign (the line crosses its ink at
// 80% of its height); without, it is centred in the signing box and the line crosses only the tallest.
// It runs the explicit modes below (default cv, or shipped on a dataset the shipped parameters did not see).
//
// Every image goes through the production path: decodePage (grey pixels, no metadata), the WASM core's
// preprocessing and features, buildReferenceModel and compareToModel. Which scoring parameters score it:
//   (default)    leave-one-dataset-out, the headline: each scored dataset is scored with parameters
//                trained on the other datasets only (bench/lib/lodo.ts). Given one dataset, its sibling
//                folders train; given a folder of datasets or nothing (the nearest shared/datasets), every
//                dataset is scored in turn. Thresholds are the default policy's, never tuned. Each table
//                is followed by every global EER's 95% interval over the scored writers (a bootstrap).
//                Writes <out>/accuracy-lodo-<dataset>.json (out: bench/results). --scores DIR also writes every
//                scored comparison, <DIR>/scores-lodo-<dataset>.json, for bench/compare-scores.ts to test
//                one version's rates against another's.
//   shipped      src/verify/data/scoring.json (refused on a dataset whose writers trained it)
//   cv           5-fold writer-disjoint cross-validation: each fold is scored by parameters trained on the
//                other folds' writers; its random forgeries come from its own fold's writers. Secondary:
//                the other folds share the scored dataset's scanner and script.
//   zmean-cv     the same, with the classifier replaced by the plain mean of per-group z-scores
//   --train-on   cross-dataset with an explicit training folder
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { DEFAULT_PARAMS, type ScoringParams } from "../src/verify/calibration";
import { DEFAULT_THRESHOLDS } from "../src/domain/policy-defaults";
import { join } from "node:path";
import { decodePage } from "../src/verify/decode/index";
import { extractFeatures, type SignatureFeatures } from "../src/verify/features";
import type { Raster } from "../src/verify/types";
import { loadDataset, type Dataset, type Sample, type Writer } from "./lib/dataset";
import { fitKnobs, lodoParams, lodoTargets, partsLeftOut } from "./lib/lodo";
import { loadNodeCore } from "./lib/node-core";
import { runProtocol } from "./lib/protocol";
import { type EerInterval, eerInterval } from "./lib/paired-bootstrap";
import type { Trial } from "./lib/trial";
import { type Concentration, concentration, pct, rates, type Rates } from "./lib/rates";
import { throughA4Page } from "./lib/a4-page";
import { parseOptions } from "./lib/cli";
import { fitAll } from "./train/fit";

const NS = [1, 3, 5, 10];
const FOLDS = 5;

const options = parseOptions({
  values: ["--out", "--stride", "--cache", "--weights", "--train-on", "--page", "--json", "--scores"],
  flags: ["--on-line"],
  usage: [
    "npm run bench:accuracy [-- <dataset folder | folder of datasets>] [--out DIR] [--stride K] [--cache DIR] [--scores DIR]",
    "npm run bench:accuracy -- <dataset folder> --weights shipped|cv|zmean-cv [--json FILE]",
    "npm run bench:accuracy -- <dataset folder> --train-on <other dataset folder> [--json FILE]",
    "npm run bench:accuracy -- <dataset folder> --page a4-jpeg [--on-line] [--weights ...] [--json FILE]",
  ].join("\n"),
});
const arg = options.value;

function folds(writers: Writer[]): Writer[][] {
  // Deterministic interleaving keeps folds balanced across the index order.
  const out: Writer[][] = Array.from({ length: FOLDS }, () => []);
  writers.forEach((w, i) => out[i % FOLDS].push(w));
  return out;
}

interface Row {
  n: number;
  skilled: Rates;
  random: Rates;
  /** How the errors at approve spread over writers (leave-one-dataset-out runs). */
  concentration?: Concentration;
  /** 95% intervals of the global EERs from a bootstrap over writers (leave-one-dataset-out runs). */
  intervals?: { skilled: EerInterval; random: EerInterval };
}

function printTable(title: string, results: Row[]): void {
  console.log(`\n${title}`);
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
}

/** Where the errors at approve sit: the view of the held-out report in issue 14, for comparison. */
function printConcentration(results: Row[]): void {
  console.log("errors at approve by writer (skilled forgery passed or genuine rejected):");
  for (const r of results) {
    const c = r.concentration;
    if (!c) continue;
    const worst = c.worstFrr.map((v) => `${Math.round(100 * v)}%`).join(", ");
    console.log(
      `${String(r.n).padStart(4)} | ${c.writersWithoutError} of ${c.writers} writers without error; the ${c.worstFrr.length} with most rejected genuine carry ${Math.round(100 * c.worstShareOfRejected)}% of them (their FRR ${worst})`,
    );
  }
}

/** How far each global EER could move on another set of writers like these (bench/lib/paired-bootstrap.ts). */
function printIntervals(results: Row[]): void {
  const span = (i: EerInterval) => `${(100 * i.low).toFixed(1)} to ${(100 * i.high).toFixed(1)}%`;
  const first = results.find((r) => r.intervals)?.intervals;
  if (!first) return;
  console.log(`EER, 95% interval over writers (bootstrap, ${first.skilled.replicates} draws of the writers):`);
  for (const r of results) {
    if (r.intervals) console.log(`${String(r.n).padStart(4)} | skilled ${span(r.intervals.skilled)} | random ${span(r.intervals.random)}`);
  }
}

const log = (s: string) => process.stderr.write(s);

async function lodo(folder: string | undefined): Promise<void> {
  const t0 = Date.now();
  const core = loadNodeCore();
  const coreBytes = new Uint8Array(readFileSync(fileURLToPath(new URL("../wasm/build/core.wasm", import.meta.url))));
  const stride = Number(arg("--stride") ?? 1);
  const cacheDir = arg("--cache");
  const out = arg("--out") ?? fileURLToPath(new URL("./results", import.meta.url));
  mkdirSync(out, { recursive: true });
  const { scored, all } = lodoTargets(folder);
  // Training always sees every writer of the other datasets; --stride thins only the scored ones.
  const full = new Map<string, Dataset>();
  for (const f of all) full.set(f, await loadDataset(core, f, coreBytes, { cacheDir, log }));
  const summary: string[] = [];
  for (const f of scored) {
    const ds = stride > 1 ? await loadDataset(core, f, coreBytes, { cacheDir, writerStride: stride }) : full.get(f)!;
    const params = lodoParams(core, ds, [...full.values()]);
    const results: Row[] = [];
    const byN: Record<number, Trial[]> = {};
    for (const n of NS) {
      const trials = runProtocol(core, ds.writers, ds.writers, n, params);
      results.push({
        n,
        skilled: rates(trials, "skilled"),
        random: rates(trials, "random"),
        concentration: concentration(trials),
        intervals: { skilled: eerInterval(trials, "skilled"), random: eerInterval(trials, "random") },
      });
      byN[n] = trials;
    }
    const scoresDir = arg("--scores");
    if (scoresDir) {
      mkdirSync(scoresDir, { recursive: true });
      const suffix = stride > 1 ? `-stride${stride}` : "";
      writeFileSync(
        join(scoresDir, `scores-lodo-${ds.name}${suffix}.json`),
        JSON.stringify({ dataset: ds.name, trainedOn: params.trainedOn, byN }),
      );
    }
    const label = `leave-one-dataset-out: trained on ${params.trainedOn.join(", ")} only`;
    printTable(`${ds.name}: ${ds.writers.length} writers, ${label}`, results);
    printIntervals(results);
    printConcentration(results);
    const file = join(out, `accuracy-lodo-${ds.name}${stride > 1 ? `-stride${stride}` : ""}.json`);
    writeFileSync(
      file,
      JSON.stringify(
        {
          dataset: ds.name,
          protocol: "leave-one-dataset-out",
          trainedOn: params.trainedOn,
          writers: ds.writers.length,
          stride,
          thresholds: DEFAULT_THRESHOLDS,
          seconds_so_far: (Date.now() - t0) / 1000,
          results,
        },
        null,
        1,
      ),
    );
    summary.push(file);
  }
  const images = [...full.values()].reduce((s, d) => s + d.images, 0);
  console.log(
    `\nimages decoded+extracted (not cached): ${images}; total ${((Date.now() - t0) / 1000).toFixed(0)} s; wrote ${summary.join(", ")}`,
  );
}

async function main(): Promise<void> {
  const folder = options.positional[0];
  if (!arg("--weights") && !arg("--train-on") && !arg("--page")) return lodo(folder);
  if (!folder) {
    console.error(
      "usage: npm run bench:accuracy -- <dataset folder> [--json FILE] [--weights shipped|cv|zmean-cv] [--train-on FOLDER] [--page a4-jpeg]",
    );
    process.exit(2);
  }
  const t0 = Date.now();
  const core = loadNodeCore();
  const coreBytes = new Uint8Array(readFileSync(fileURLToPath(new URL("../wasm/build/core.wasm", import.meta.url))));
  const stride = Number(arg("--stride") ?? 1);
  const cacheDir = arg("--cache");
  const pageMode = arg("--page");
  if (pageMode !== undefined && pageMode !== "a4-jpeg") throw new Error(`unknown --page ${pageMode}`);
  const placement = options.flag("--on-line") ? "on-line" : "centred";
  // With --page: both decode modes from the same JPEG pages; the scaled mode's features go through
  // loadDataset, the whole-page mode's are kept aside and make a second copy of the dataset.
  const counts = { scaled: { located: 0, missed: 0 }, whole: { located: 0, missed: 0 } };
  const wholeFeatures = new Map<string, SignatureFeatures>();
  const extract = pageMode
    ? {
        tag: "a4-jpeg",
        pixels: async (raster: Raster, path: string) => {
          const o = await throughA4Page(raster, ["whole", "scaled"], placement);
          for (const m of ["whole", "scaled"] as const) counts[m][o[m]!.located ? "located" : "missed"]++;
          wholeFeatures.set(path, extractFeatures(core, o.whole!.crop));
          return o.scaled!.crop;
        },
      }
    : undefined;
  // Page runs are not cached: both modes must come from the same pages, decoded in this run.
  const ds = await loadDataset(core, folder, coreBytes, { writerStride: stride, cacheDir: pageMode ? undefined : cacheDir, log, extract });
  const variants: { name: string; ds: Dataset }[] = [];
  if (pageMode) {
    // The kept rasters (synthetic variants for small models) of the whole-page copy: its own crops.
    const writers: Writer[] = [];
    for (const w of ds.writers) {
      const copy = async (s: Sample): Promise<Sample> => {
        const features = wholeFeatures.get(s.path);
        if (!features) throw new Error(`no whole-page features for ${s.path}`);
        if (!s.raster) return { path: s.path, features };
        const decoded = await decodePage(new Uint8Array(readFileSync(join(ds.folder, s.path))), 0);
        return { path: s.path, features, raster: (await throughA4Page(decoded, ["whole"], placement)).whole!.crop };
      };
      writers.push({ id: w.id, genuine: await Promise.all(w.genuine.map(copy)), forgeries: await Promise.all(w.forgeries.map(copy)) });
    }
    variants.push({ name: "whole", ds: { ...ds, writers } }, { name: "scaled", ds });
  } else variants.push({ name: "", ds });
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

  const evaluate = (d: Dataset, variant: string) => {
    const results = [];
    // Parameters fitted on one variant's features are never reused for the other's.
    const tag = variant ? `[${variant}]` : "";
    for (const n of NS) {
      let trials: Trial[] = [];
      if (mode === "shipped") {
        trials = runProtocol(core, d.writers, d.writers, n, DEFAULT_PARAMS);
      } else if (mode === "train-on") {
        const p = fitCached(core, other!.writers, [other!.name], "lr");
        trials = runProtocol(core, d.writers, d.writers, n, p);
      } else if (mode === "cv" || mode === "zmean-cv") {
        const fs = folds(d.writers);
        fs.forEach((fold, i) => {
          const train = fs.filter((_, j) => j !== i).flat();
          const p = fitCached(core, train, [`${d.name}${tag}#cv${i}`], mode === "cv" ? "lr" : "zmean");
          trials.push(...runProtocol(core, fold, fold, n, p));
        });
      } else {
        throw new Error(`unknown --weights ${mode}`);
      }
      results.push({ n, skilled: rates(trials, "skilled"), random: rates(trials, "random") });
      log(`${variant ? `${variant}: ` : ""}N=${n} done (${((Date.now() - t0) / 1000).toFixed(0)} s)\n`);
    }
    return results;
  };
  const evaluated = variants.map((v) => ({ name: v.name, results: evaluate(v.ds, v.name) }));

  const label = mode === "train-on" ? `trained on ${other!.name}` : mode;
  for (const { name, results } of evaluated) {
    const page = pageMode
      ? `\nthrough a 300 dpi JPEG form page (${name} decode, signature ${placement}): signature located on ${counts[name as "whole" | "scaled"].located} page(s), missed on ${counts[name as "whole" | "scaled"].missed} (those use the known box)`
      : "";
    printTable(`${ds.name}: ${ds.writers.length} writers, scoring parameters: ${label}${page}`, results);
  }
  let largestShift = 0;
  if (evaluated.length === 2) {
    // The scaled decode against the whole-page decode: every rate of every N, in points.
    const [a, b] = evaluated;
    const shifts: string[] = [];
    a.results.forEach((ra, i) => {
      const rb = b.results[i];
      for (const kind of ["skilled", "random"] as const) {
        for (const key of ["eer_global", "eer_writer", "far", "frr"] as const) {
          const d = 100 * (rb[kind][key] - ra[kind][key]);
          if (!Number.isNaN(d)) largestShift = Math.max(largestShift, Math.abs(d));
          if (key.startsWith("eer")) shifts.push(`N=${ra.n} ${kind} ${key}: ${d >= 0 ? "+" : ""}${d.toFixed(2)}`);
        }
      }
    });
    console.log(`\nscaled decode minus whole-page decode, in points:\n  ${shifts.join("\n  ")}`);
    console.log(`largest shift of any EER, FAR or FRR: ${largestShift.toFixed(2)} points`);
  }
  const secs = (Date.now() - t0) / 1000;
  console.log(
    `images decoded+extracted: ${ds.images}${other ? ` + ${other.images}` : ""}, mean extract ${(ds.extractMs / Math.max(1, ds.images)).toFixed(2)} ms; load ${((tLoaded - t0) / 1000).toFixed(0)} s; total ${secs.toFixed(0)} s`,
  );
  const json = arg("--json");
  if (json) {
    const body = pageMode
      ? {
          page: pageMode,
          placement,
          located: counts,
          largest_shift_points: largestShift,
          results: Object.fromEntries(evaluated.map((e) => [e.name, e.results])),
        }
      : { results: evaluated[0].results };
    writeFileSync(json, JSON.stringify({ dataset: ds.name, weights: label, stride, seconds: secs, ...body }, null, 1));
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
    // Every part of the parameters, as the headline and train:scoring fit them.
    p = fitAll(core, writers, { ...fitKnobs(), trainedOn, classifier, anchor: anchorFromEnv() }, partsLeftOut());
    fitMemo.set(key, p);
  }
  return p;
}

function anchorFromEnv(): { score: number; far: number } | null | undefined {
  const far = process.env.ANCHOR_FAR;
  if (far === "none") return null;
  return far ? { score: DEFAULT_THRESHOLDS.approve, far: Number(far) } : undefined;
}

await main();
