// Bare signature images checked without an input_type (docs/accuracy.md, "Bare images sent without an
// input_type"): does the locator box the whole signature? Per image of every K-th writer: nothing found,
// several boxes, and the share of the image's ink (Otsu) outside the most confident box. With a margin, each
// image is first cut down to its ink (as a signature_image locates it) plus that many pixels on each side:
// the tight crop a capture app or a user's editor sends (0: ink touching every edge).
// INPUT_TYPE=photo (or scan) in the environment sends that input_type instead of none: a signature alone on
// a photo, searched as a page, or on a scan (which at most 2000 px is asked whether it is bare, as here).
//   node --import tsx bench/experiments/locate-bare.ts <dataset name> [K, default 4] [margin px]
import { readFileSync } from "node:fs";
import { decodePage } from "../../src/verify/decode";
import { locateSignatures } from "../../src/verify/locate";
import { otsu } from "../../src/verify/morphology";
import { cropRaster } from "../../src/verify/render";
import { findDatasetsRoot } from "../lib/lodo";
const root = `${findDatasetsRoot() ?? "../shared/datasets"}/`;
const [ds, strideArg] = process.argv.slice(2);
const stride = Number(strideArg ?? 4);
const margin = process.argv[4] === undefined ? null : Number(process.argv[4]);
const lines = readFileSync(root + ds + "/index.csv", "utf8")
  .trim()
  .split("\n")
  .slice(1);
const writers = [...new Set(lines.map((l) => l.split(",")[1]))].filter((_, i) => i % stride === 0);
let n = 0,
  none = 0,
  multi = 0,
  cut2 = 0,
  cut10 = 0;
const cuts: number[] = [];
for (const l of lines) {
  const [path, writer] = l.split(",");
  if (!writers.includes(writer)) continue;
  let r = await decodePage(new Uint8Array(readFileSync(root + ds + "/" + path)), 0);
  if (margin !== null) {
    const b = locateSignatures([r], { inputType: "signature_image" })[0]?.box;
    if (!b) continue;
    const x = Math.max(0, b.x - margin),
      y = Math.max(0, b.y - margin);
    r = cropRaster(r, { x, y, w: Math.min(r.width - x, b.w + 2 * margin), h: Math.min(r.height - y, b.h + 2 * margin) });
  }
  const t = otsu(r.data);
  let ink = 0;
  for (let i = 0; i < r.data.length; i++) if (r.data[i] <= t) ink++;
  const found = locateSignatures([r], { inputType: process.env.INPUT_TYPE });
  n++;
  if (found.length === 0) {
    none++;
    continue;
  }
  if (found.length > 1) multi++;
  const b = found.reduce((p, q) => (q.confidence > p.confidence ? q : p)).box;
  let inside = 0;
  for (let y = b.y; y < b.y + b.h; y++) for (let x = b.x; x < b.x + b.w; x++) if (r.data[y * r.width + x] <= t) inside++;
  const cut = 1 - inside / Math.max(1, ink);
  cuts.push(cut);
  if (cut > 0.02) cut2++;
  if (cut > 0.1) cut10++;
}
cuts.sort((a, b) => a - b);
console.log(
  ds,
  ...(process.env.INPUT_TYPE ? ["input_type", process.env.INPUT_TYPE] : []),
  "stride",
  stride,
  ...(margin === null ? [] : ["margin", margin]),
  "images",
  n,
  "none",
  none,
  "multi",
  multi,
  "cut>2%",
  cut2,
  "cut>10%",
  cut10,
  "median cut",
  cuts[cuts.length >> 1]?.toFixed(4),
);
