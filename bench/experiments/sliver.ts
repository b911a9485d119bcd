// How far a speck of dust beside a signature moves its score (docs/accuracy.md, "Nothing found on a
// photo", the losses left). Per K-th writer (5 genuine signatures enrolled whole), up to 6 later genuine
// signatures, each cut to its box as a bare image is, on 12 px of white, are compared as they are and with a
// short diagonal sliver (2 px thick, 10 px tall) drawn 6 px left of the ink at mid-height. Prints the
// distribution of the change in score.
//   node --import tsx bench/experiments/sliver.ts <dataset name> [K, default 10]
import { readFileSync } from "node:fs";
import { compareToModel } from "../../src/verify/compare";
import { extractFeatures } from "../../src/verify/features";
import { analyseDocument } from "../../src/verify/pipeline";
import { enrolledSubjects, indexRows } from "../lib/enrolled-model";
import { findDatasetsRoot } from "../lib/lodo";
import { loadNodeCore } from "../lib/node-core";

const root = `${findDatasetsRoot() ?? "../shared/datasets"}/`;
const [ds, strideArg] = process.argv.slice(2);
const dir = `${root}${ds}`;
const core = loadNodeCore();
const deltas: number[] = [];
for await (const { model, questionedGenuine } of enrolledSubjects(core, dir, indexRows(dir), Number(strideArg ?? 10))) {
  for (const r of questionedGenuine.slice(0, 6)) {
    const a = await analyseDocument(new Uint8Array(readFileSync(`${dir}/${r[0]}`)), { inputType: "signature_image", qualityFloor: 0 });
    const crop = a.crops[0];
    if (!crop) continue;
    const pad = 12;
    const w = crop.width + pad;
    const clean = new Uint8Array(w * crop.height).fill(255);
    for (let y = 0; y < crop.height; y++) clean.set(crop.data.subarray(y * crop.width, (y + 1) * crop.width), y * w + pad);
    const dusty = clean.slice();
    const mid = crop.height >> 1;
    for (let t = 0; t < 10; t++) for (let k = 0; k < 2; k++) dusty[(mid - 5 + t) * w + 3 + (t >> 2) + k] = 0;
    const score = (data: Uint8Array) => compareToModel(core, extractFeatures(core, { width: w, height: crop.height, data }), model).score;
    deltas.push(score(dusty) - score(clean));
  }
}
const abs = deltas.map(Math.abs).sort((x, y) => x - y);
const q = (p: number) => abs[Math.min(abs.length - 1, Math.floor(p * abs.length))].toFixed(3);
console.log(
  ds,
  `signatures ${deltas.length}; change in score with the sliver: median ${q(0.5)}, 90th percentile ${q(0.9)}, largest ${q(1)};`,
  `more than 0.05: ${abs.filter((d) => d > 0.05).length}; mean signed ${(deltas.reduce((x, y) => x + y, 0) / Math.max(1, deltas.length)).toFixed(3)}`,
);
