// What one extra sampling grid costs in the core (docs/accuracy.md, "Version 9"): on the first genuine
// signature of every 8th writer of a dataset, the medians over 200 repetitions of preprocessing, a full
// feature pass, a row pass (keepRows), the vertical pass that renormalise runs from it, and the texture
// pass. Node, the raw core from wasm/build/core.wasm or --wasm FILE (another build, to compare; the
// Worker's figures are bench:speed's).
//   node --import tsx bench/experiments/grid-passes.ts [bhsig260-bengali | sigcomp2011-dutch] [--wasm FILE]
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import type { CoreExports } from "../../src/verify/core";
import { decodePage } from "../../src/verify/decode/index";
import { findDatasetsRoot } from "../lib/lodo";

const datasets = findDatasetsRoot();
if (!datasets) throw new Error("no shared/datasets found above the working directory");
const args = process.argv.slice(2);
const wasmAt = args.indexOf("--wasm");
const wasmFile = wasmAt >= 0 ? args[wasmAt + 1] : fileURLToPath(new URL("../../wasm/build/core.wasm", import.meta.url));
const named = args.filter((a, i) => !a.startsWith("--") && (wasmAt < 0 || i !== wasmAt + 1));
const root = join(datasets, named[0] ?? "sigcomp2011-dutch");
const wasm = readFileSync(wasmFile);
const c = new WebAssembly.Instance(new WebAssembly.Module(wasm), {}).exports as unknown as CoreExports;

const times: Record<"preprocess" | "full pass" | "row pass" | "vertical pass" | "texture pass", number[]> = {
  preprocess: [],
  "full pass": [],
  "row pass": [],
  "vertical pass": [],
  "texture pass": [],
};
const timed = (into: number[], fn: () => void) => {
  const t0 = performance.now();
  fn();
  into.push(performance.now() - t0);
};
const writers = readdirSync(root)
  .filter((d) => /^\d+$/.test(d))
  .filter((_, i) => i % 8 === 0);
for (const w of writers) {
  const file = readdirSync(join(root, w))
    .filter((f) => f.startsWith("genuine"))
    .sort()[0];
  const r = await decodePage(new Uint8Array(readFileSync(join(root, w, file))), 0);
  const n = r.width * r.height;
  // preprocess evens out the paper in place: each run gets the crop afresh.
  let found = true;
  for (let rep = 0; rep < 200 && found; rep++) {
    c.reset();
    const src = c.alloc(n);
    new Uint8Array(c.memory.buffer, src, n).set(r.data.subarray(0, n));
    timed(times.preprocess, () => (found = c.preprocess(src, r.width, r.height, 0) === 1));
  }
  if (!found) continue;
  const base = c.mark();
  for (let rep = 0; rep < 200; rep++) {
    c.rewind(base);
    timed(times["full pass"], () => c.features());
    c.rewind(base);
    timed(times["row pass"], () => c.keepRows(1 / 3));
    const afterRows = c.mark();
    timed(times["vertical pass"], () => c.renormalise(1 / 3, 1 / 3));
    timed(times["texture pass"], () => c.texture());
    c.rewind(afterRows);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
console.log(`${root}: ${writers.length} crops, 200 repetitions each (${wasmFile})`);
for (const [name, xs] of Object.entries(times)) console.log(`${name.padEnd(14)} ${median(xs).toFixed(3)} ms`);
