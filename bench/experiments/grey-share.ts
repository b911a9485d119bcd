// The binarised regime's two measures on the development sets (docs/accuracy.md, "Bitonal and grey
// captures"): per dataset and capture condition of the robustness suite, the spread of the crop's grey
// share (features.ts BITONAL_GREY_SHARE: at most 0.15 is bitonal) and of its resolution (pixels of the crop
// per pixel of the normalised image), over every K-th image.
//   node --import tsx bench/experiments/grey-share.ts [K, default 23]
import { readFileSync } from "node:fs";
import { decodePage } from "../../src/verify/decode";
import type { Raster } from "../../src/verify/types";
import { findDatasetsRoot } from "../lib/lodo";
import { loadNodeCore } from "../lib/node-core";
import { CONDITIONS, rngFor } from "../lib/render";

const core = loadNodeCore();
const root = `${findDatasetsRoot() ?? "../shared/datasets"}/`;
const stride = Number(process.argv[2] ?? 23);
const quantile = (a: number[], p: number) => [...a].sort((x, y) => x - y)[Math.min(a.length - 1, Math.floor(p * a.length))];
const spread = (a: number[]) => [0, 0.05, 0.5, 0.95, 1].map((p) => quantile(a, p).toFixed(2)).join(" / ");

console.log("dataset condition | grey share min / p5 / median / p95 / max | resolution min / p5 / median / p95 / max");
for (const ds of ["sigcomp2011-dutch", "bhsig260-bengali"]) {
  const paths = readFileSync(`${root}${ds}/index.csv`, "utf8")
    .trim()
    .split("\n")
    .slice(1)
    .filter((_, i) => i % stride === 0)
    .map((l) => l.split(",")[0]);
  const images: { path: string; raster: Raster }[] = [];
  for (const path of paths) images.push({ path, raster: await decodePage(new Uint8Array(readFileSync(`${root}${ds}/${path}`)), 0) });
  for (const c of [{ name: "clean", render: (r: Raster) => r }, ...CONDITIONS]) {
    const share: number[] = [];
    const resolution: number[] = [];
    for (const { path, raster } of images) {
      const { main } = core.extract(await c.render(raster, rngFor(`${c.name}|${path}`)), [], { blurred: false });
      share.push(main.greyShare);
      resolution.push(main.resolution);
    }
    console.log(`${ds} ${c.name} (${images.length}) | ${spread(share)} | ${spread(resolution)}`);
  }
}
