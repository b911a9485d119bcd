// How far the features move when only the sampling changes (docs/accuracy.md, "Sampling phase"): per
// group, the distance between a writer's first genuine signature and the same image rendered otherwise,
// over the mean distance between that signature and the writer's next three genuine ones. Every 4th
// writer. The renderings: a 20-pixel sliver 8 px left of the ink (it moves the ink box: a speck of dust),
// the same sliver inside the box (it does not), and the image resampled to 297 and 291 dpi (1% and 3%
// coarser: another scanner). Then, per rendering, the median, 90th percentile and largest of the summed
// distances over the summed genuine ones.
//   node --import tsx bench/experiments/sampling-phase.ts <bhsig260-bengali | sigcomp2011-dutch>
import { join } from "node:path";
import type { Raster } from "../../src/verify/types";
import { firstGenuine } from "../lib/first-genuine";
import { findDatasetsRoot } from "../lib/lodo";
import { loadNodeCore } from "../lib/node-core";
import { resampleToDpi } from "../lib/render";

const core = loadNodeCore();
const datasets = findDatasetsRoot();
if (!datasets) throw new Error("no shared/datasets found above the working directory");
const root = join(datasets, process.argv[2] ?? "bhsig260-bengali");
const G = core.groupCount;

/** The image 12 px wider on the left, with a 2 px wide, 10 px tall diagonal sliver `off` px left of the ink. */
function withSliver(r: Raster, off: number): Raster {
  let x0 = r.width,
    y0 = r.height,
    y1 = 0;
  for (let y = 0; y < r.height; y++) {
    for (let x = 0; x < r.width; x++) {
      if (r.data[y * r.width + x] >= 128) continue;
      x0 = Math.min(x0, x);
      y0 = Math.min(y0, y);
      y1 = Math.max(y1, y);
    }
  }
  const pad = 12,
    w = r.width + pad;
  const out = new Uint8Array(w * r.height).fill(255);
  for (let y = 0; y < r.height; y++) out.set(r.data.subarray(y * r.width, (y + 1) * r.width), y * w + pad);
  const mid = (y0 + y1) >> 1,
    sx = x0 + pad - off;
  for (let t = 0; t < 10; t++) for (let k = 0; k < 2; k++) out[(mid - 5 + t) * w + sx + (t >> 2) + k] = 0;
  return { width: w, height: r.height, data: out };
}

const renderings: Record<string, (r: Raster) => Raster> = {
  sliver: (r) => withSliver(r, 8),
  inside: (r) => withSliver(r, -30),
  dpi297: (r) => resampleToDpi(r, 297),
  dpi291: (r) => resampleToDpi(r, 291),
};
const sums: Record<string, number[]> = { genuine: new Array(G).fill(0) };
const ratios: Record<string, number[]> = {};
for (const c of Object.keys(renderings)) {
  sums[c] = new Array(G).fill(0);
  ratios[c] = [];
}
for await (const w of firstGenuine(core, root)) {
  let genuine = 0;
  for (let g = 0; g < G; g++) {
    sums.genuine[g] += w.genuine[g];
    genuine += w.genuine[g];
  }
  for (const [c, render] of Object.entries(renderings)) {
    const d = core.groupDistances(w.vector, [core.extract(render(w.first)).main.vector]);
    let moved = 0;
    for (let g = 0; g < G; g++) {
      sums[c][g] += d[g];
      moved += d[g];
    }
    ratios[c].push(moved / genuine);
  }
}
const names = ["hog1", "hog24", "hog48", "hogP", "lbp1", "lbp24", "lbp48", "lbpP", "mass", "prof", "glob", "co1", "co24", "seq"];
console.log(
  `group  ${Object.keys(renderings)
    .map((c) => c.padStart(8))
    .join("")}  (over the genuine-to-genuine distance)`,
);
for (let g = 0; g < G; g++) {
  console.log(
    (names[g] ?? `g${g}`).padEnd(7) +
      Object.keys(renderings)
        .map((c) => (sums[c][g] / sums.genuine[g]).toFixed(3).padStart(8))
        .join(""),
  );
}
for (const c of Object.keys(renderings)) {
  const s = ratios[c].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))].toFixed(3);
  console.log(
    `${c}: all groups, over the genuine distance: median ${at(0.5)}, 90th percentile ${at(0.9)}, largest ${at(1)} (${s.length} writers)`,
  );
}
