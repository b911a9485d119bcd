// Experiment (issue 14, N = 1): with one reference, how well does what the model knows predict how far
// the writer's own genuine signatures fall from it? Per writer: T[g] = mean distance (group g) from the
// first genuine sample to each later genuine one; V[g] = the first sample's distance to its synthetic
// variants (model.ts variantDistanceRow), what the model's spread rests on at N = 1. Reports, per group,
// the correlation across writers of log T with log V, and of the residual with the reference's
// complexity descriptors (forgeability.ts complexityOf) and its stroke-free measures.
//
//   node --import tsx bench/experiments/n1-spread.ts <dataset folder>... [--cache DIR]
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { featureVector } from "../../src/verify/features";
import { complexityOf } from "../../src/verify/forgeability";
import { variantDistanceRow } from "../../src/verify/model";
import { loadDataset } from "../lib/dataset";
import { pearson } from "../lib/metrics";
import { loadNodeCore } from "../lib/node-core";

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

function slope(x: number[], y: number[]): { a: number; b: number } {
  const mx = x.reduce((s, v) => s + v, 0) / x.length;
  const my = y.reduce((s, v) => s + v, 0) / y.length;
  let sxy = 0,
    sxx = 0;
  for (let i = 0; i < x.length; i++) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) ** 2;
  }
  const b = sxy / (sxx || 1);
  return { a: my - b * mx, b };
}

const core = loadNodeCore();
const coreBytes = new Uint8Array(readFileSync(fileURLToPath(new URL("../../wasm/build/core.wasm", import.meta.url))));
const folders = process.argv.slice(2).filter((a, i, all) => !a.startsWith("--") && !all[i - 1]?.startsWith("--"));
const G = core.groupCount;
const names = ["hog1", "hog24", "hog48", "hogP", "lbp1", "lbp24", "lbp48", "lbpP", "mass", "prof", "glob", "cooc1", "cooc24", "seq"];
for (const f of folders) {
  const ds = await loadDataset(core, f, coreBytes, { cacheDir: arg("--cache"), log: () => {} });
  const logT: number[][] = [];
  const logV: number[][] = [];
  const desc: number[][] = [];
  for (const w of ds.writers) {
    const first = w.genuine[0];
    if (!first?.raster || w.genuine.length < 4) continue;
    const v = variantDistanceRow(core, first.raster);
    if (!v) continue;
    const q = featureVector(first.features);
    const others = w.genuine.slice(1, 11).map((s) => featureVector(s.features));
    const d = core.groupDistances(q, others);
    const t = new Array(G).fill(0);
    for (let r = 0; r < others.length; r++) for (let g = 0; g < G; g++) t[g] += d[r * G + g] / others.length;
    logT.push(t.map((x) => Math.log(x + 1e-6)));
    logV.push(v.map((x) => Math.log(x + 1e-6)));
    desc.push(complexityOf(q, core.groupOffsets));
  }
  console.log(`\n${ds.name}: ${logT.length} writers`);
  console.log(
    "group  | sd logT | corr(logT, logV) | slope | resid sd | corr(resid, descriptors: dirEnt oriEnt cross turns density aspect)",
  );
  const meanT = logT.map((r) => r.reduce((s, v) => s + v, 0) / G);
  const meanV = logV.map((r) => r.reduce((s, v) => s + v, 0) / G);
  const rows: [string, number[], number[]][] = names.map((n, g) => [n, logT.map((r) => r[g]), logV.map((r) => r[g])]);
  rows.push(["mean", meanT, meanV]);
  for (const [n, t, v] of rows) {
    const m = t.reduce((s, x) => s + x, 0) / t.length;
    const sd = Math.sqrt(t.reduce((s, x) => s + (x - m) ** 2, 0) / t.length);
    const { a, b } = slope(v, t);
    const resid = t.map((x, i) => x - a - b * v[i]);
    const rsd = Math.sqrt(resid.reduce((s, x) => s + x * x, 0) / resid.length);
    const dc = [0, 1, 2, 3, 4, 5].map((j) =>
      pearson(
        resid,
        desc.map((r) => r[j]),
      )
        .toFixed(2)
        .padStart(5),
    );
    console.log(
      `${n.padEnd(6)} | ${sd.toFixed(3)}   | ${pearson(t, v).toFixed(2).padStart(16)} | ${b.toFixed(2).padStart(5)} | ${rsd.toFixed(3).padStart(8)} | ${dc.join(" ")}`,
    );
  }
}
