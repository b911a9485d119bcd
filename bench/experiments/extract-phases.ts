// Where a reference's extraction (src/verify/core.ts extract: every regime) spends its time, per crop, in
// Node: the core's calls in the order extract makes them, each timed on its own, medians of 7 rounds of 10
// passes over the given images.
//   node --import tsx bench/experiments/extract-phases.ts <core.wasm> <image.png>...
import { readFileSync } from "node:fs";
import { BLUR_SIGMA, EXTRA_GRIDS } from "../../src/verify/core";
import { decodePage } from "../../src/verify/decode/index";

const files = process.argv.slice(3);
// biome-ignore lint/suspicious/noExplicitAny: the core's raw exports
const x = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(process.argv[2])), {}).exports as any;
const rasters = [];
for (const f of files) rasters.push(await decodePage(new Uint8Array(readFileSync(f)), 0));

const phases = new Map<string, number[]>();
const timed = <T>(name: string, fn: () => T): T => {
  const t0 = performance.now();
  const v = fn();
  const list = phases.get(name) ?? [];
  list.push(performance.now() - t0);
  phases.set(name, list);
  return v;
};

/** phasedVector's calls: the features, then the texture of every extra grid. */
function phased(tag: string): void {
  const base = x.mark();
  timed(`${tag} features`, () => x.features());
  if (x.inkFound() !== 1) return;
  let keptX = x.rowsPhase();
  let afterRows = base;
  for (const [gx, gy] of EXTRA_GRIDS) {
    if (gx !== keptX) {
      x.rewind(base);
      timed(`${tag} keepRows`, () => x.keepRows(gx));
      keptX = gx;
      afterRows = x.mark();
    } else x.rewind(afterRows);
    timed(`${tag} renormalise`, () => x.renormalise(gx, gy));
    timed(`${tag} texture`, () => x.texture());
  }
  x.rewind(base);
}

const rounds = new Map<string, number[]>();
for (let rep = 0; rep < 7; rep++) {
  phases.clear();
  for (let k = 0; k < 10; k++)
    for (const r of rasters) {
      x.reset();
      const n = r.width * r.height;
      const src = x.alloc(n);
      new Uint8Array(x.memory.buffer, src, n).set(r.data.subarray(0, n));
      const mark = x.mark();
      timed("preprocess", () => x.preprocess(src, r.width, r.height, 0));
      const normPtr = x.normPointer();
      const after = x.mark();
      phased("sharp");
      x.rewind(after);
      x.setNorm(normPtr);
      timed("blurNorm", () => x.blurNorm(BLUR_SIGMA));
      timed("blurred features", () => x.features());
      x.rewind(mark);
      timed("preprocess hard", () => x.preprocess(src, r.width, r.height, 1));
      phased("binarised");
    }
  for (const [name, list] of phases) {
    const per = list.reduce((a, b) => a + b, 0) / (10 * rasters.length);
    rounds.set(name, [...(rounds.get(name) ?? []), per]);
  }
}
let total = 0;
for (const [name, list] of rounds) {
  list.sort((a, b) => a - b);
  total += list[3];
  console.log(`${name.padEnd(24)} ${list[3].toFixed(3)} ms per crop`);
}
console.log(`${"total".padEnd(24)} ${total.toFixed(3)} ms per crop`);
