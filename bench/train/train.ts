// Trains the shipped scoring parameters (src/verify/data/scoring.json) on every writer of the given
// development datasets. The accuracy bench then refuses to report on those datasets with them, and
// measures them by writer-disjoint cross-validation or cross-dataset instead.
//
//   npm run train:scoring [-- --cache DIR]     every dataset of the nearest shared/datasets
//   node --import tsx bench/train/train.ts [<dataset folder>...] [--out src/verify/data/scoring.json] [--cache DIR]
//
// The file holds the parameters of the three regimes: as captured, blurred (params.blurred) and binarised
// (params.binarised), compare.ts, and the blend of the first two (params.blend).
//
// The file is written through Biome's formatter, as the tree is formatted, so a retrain that changes
// nothing leaves no diff (write-params.ts).
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { loadDataset, type Writer } from "../lib/dataset";
import { datasetFolders, findDatasetsRoot } from "../lib/lodo";
import { loadNodeCore } from "../lib/node-core";
import { fitAll } from "./fit";
import { writeParams } from "./write-params";

const args = process.argv.slice(2);
const outAt = args.indexOf("--out");
const out = outAt >= 0 ? args[outAt + 1] : fileURLToPath(new URL("../../src/verify/data/scoring.json", import.meta.url));
const cacheAt = args.indexOf("--cache");
const cacheDir = cacheAt >= 0 ? args[cacheAt + 1] : undefined;
const named = args.filter((a, i) => !a.startsWith("--") && (outAt < 0 || i !== outAt + 1) && (cacheAt < 0 || i !== cacheAt + 1));
const root = named.length === 0 ? findDatasetsRoot() : undefined;
if (named.length === 0 && !root) throw new Error("no dataset folder given and no shared/datasets found above the working directory");
const folders = named.length > 0 ? named : datasetFolders(root!);

const core = loadNodeCore();
const coreBytes = new Uint8Array(readFileSync(fileURLToPath(new URL("../../wasm/build/core.wasm", import.meta.url))));
const writers: Writer[] = [];
const names: string[] = [];
for (const f of folders) {
  const ds = await loadDataset(core, f, coreBytes, { cacheDir, log: (s) => process.stderr.write(s) });
  // Writer ids are only unique within a dataset.
  writers.push(...ds.writers.map((w) => ({ ...w, id: `${ds.name}/${w.id}` })));
  names.push(ds.name);
}
const params = fitAll(core, writers, { trainedOn: names });
writeParams(out, params);
console.log(`trained on ${writers.length} writers of ${names.join(", ")} -> ${out}`);
