// Trains the shipped scoring parameters (src/verify/data/scoring.json) on every writer of the given
// development datasets. The accuracy bench then refuses to report on those datasets with them, and
// measures them by writer-disjoint cross-validation or cross-dataset instead.
//
//   node --import tsx bench/train/train.ts <dataset folder>... [--out src/verify/data/scoring.json]
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { loadDataset, type Writer } from "../lib/dataset";
import { loadNodeCore } from "../lib/node-core";
import { fitParams } from "./fit";

const args = process.argv.slice(2);
const outAt = args.indexOf("--out");
const out = outAt >= 0 ? args[outAt + 1] : fileURLToPath(new URL("../../src/verify/data/scoring.json", import.meta.url));
const folders = args.filter((a, i) => !a.startsWith("--") && (outAt < 0 || i !== outAt + 1));
const cacheAt = args.indexOf("--cache");
const cacheDir = cacheAt >= 0 ? args[cacheAt + 1] : undefined;

const core = loadNodeCore();
const coreBytes = new Uint8Array(readFileSync(fileURLToPath(new URL("../../wasm/build/core.wasm", import.meta.url))));
const writers: Writer[] = [];
const names: string[] = [];
for (const f of folders.filter((f) => f !== cacheDir)) {
  const ds = await loadDataset(core, f, coreBytes, { cacheDir, log: (s) => process.stderr.write(s) });
  // Writer ids are only unique within a dataset.
  writers.push(...ds.writers.map((w) => ({ ...w, id: `${ds.name}/${w.id}` })));
  names.push(ds.name);
}
const params = fitParams(core, writers, { trainedOn: names });
const round = (v: number) => Number(v.toPrecision(6));
writeFileSync(out, JSON.stringify(params, (_, v) => (typeof v === "number" ? round(v) : v), 1) + "\n");
console.log(`trained on ${writers.length} writers of ${names.join(", ")} -> ${out}`);
