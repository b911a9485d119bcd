// Which feature groups a change of pen, blur, resolution or tail moves (docs/accuracy.md, "Where the pen's width
// goes"): per group, the distance between a writer's first genuine signature and the same image re-rendered
// (bench/lib/render.ts), over the mean distance between that signature and the writer's next three genuine
// ones. Every 4th writer of one dataset, with the core in wasm/build.
//
//   node --import tsx bench/experiments/pen-groups.ts [sigcomp2011-dutch | bhsig260-bengali]
import { join } from "node:path";
import type { Raster } from "../../src/verify/types";
import { firstGenuine } from "../lib/first-genuine";
import { findDatasetsRoot } from "../lib/lodo";
import { loadNodeCore } from "../lib/node-core";
import { blur as blurR, cropTail, fadeTail, morph3, resampleToDpi, scaleTail } from "../lib/render";

const core = loadNodeCore();
const datasets = findDatasetsRoot();
if (!datasets) throw new Error("no shared/datasets found above the working directory");
const root = join(datasets, process.argv[2] ?? "sigcomp2011-dutch");
const conds: Record<string, (r: Raster) => Raster> = {
  thick: (r) => morph3(r, "min"),
  thin: (r) => morph3(r, "max"),
  blur: (r) => blurR(r, 1.5),
  dpi150: (r) => resampleToDpi(r, 150),
  tailLong: (r) => scaleTail(r, 1.5),
  tailCut: (r) => cropTail(r),
  tailFade: (r) => fadeTail(r),
};
const G = core.groupCount;
const sums: Record<string, number[]> = { genuine: new Array(G).fill(0) };
for (const c of Object.keys(conds)) sums[c] = new Array(G).fill(0);
for await (const w of firstGenuine(core, root)) {
  for (let g = 0; g < G; g++) sums.genuine[g] += w.genuine[g];
  for (const [c, fn] of Object.entries(conds)) {
    const v = core.extract(fn(w.first)).main.vector;
    const d = core.groupDistances(w.vector, [v]);
    for (let g = 0; g < G; g++) sums[c][g] += d[g];
  }
}
const names = ["hog1", "hog24", "hog48", "hogP", "lbp1", "lbp24", "lbp48", "lbpP", "mass", "prof", "glob", "co1", "co24", "seq"];
console.log(
  "group  " +
    Object.keys(conds)
      .map((c) => c.padStart(8))
      .join(""),
  " (ratio to genuine-genuine distance)",
);
for (let g = 0; g < G; g++)
  console.log(
    names[g].padEnd(7) +
      Object.keys(conds)
        .map((c) => (sums[c][g] / sums.genuine[g]).toFixed(2).padStart(8))
        .join(""),
  );
