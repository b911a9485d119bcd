// Whether two builds of the core extract the same features bit for bit: for each image, clean and with the
// stress suite's shadow (so the paper levelling runs too), extracted as a reference is (sharp and blurred),
// without and with the binarised regime; prints the images whose vectors or ink box differ in any bit. For rewrites that
// must not change a feature version (docs/feature-upgrades.md).
//   node --import tsx bench/experiments/core-diff.ts <old core.wasm> <new core.wasm> <image>...
import { readFileSync } from "node:fs";
import { createCore } from "../../src/verify/core";
import { decodePage } from "../../src/verify/decode/index";
import { CONDITIONS, rngFor } from "../lib/render";
const shadow = CONDITIONS.find((k) => k.name === "shadow")!;
const [a, b, ...files] = process.argv.slice(2);
const ca = createCore(new WebAssembly.Module(readFileSync(a)));
const cb = createCore(new WebAssembly.Module(readFileSync(b)));
let diff = 0,
  n = 0;
const same = (x: Float32Array | null, y: Float32Array | null) =>
  x === null || y === null ? x === y : Buffer.compare(Buffer.from(x.buffer), Buffer.from(y.buffer)) === 0;
for (const f of files) {
  const clean = await decodePage(new Uint8Array(readFileSync(f)), 0);
  for (const r of [clean, await shadow.render(clean, rngFor(`shadow|${f}`))])
    for (const hard of [false, true]) {
      const ea = ca.extract(r, [], { blurred: true, binarised: () => hard }).main;
      const eb = cb.extract(r, [], { blurred: true, binarised: () => hard }).main;
      n++;
      if (
        !same(ea.vector, eb.vector) ||
        !same(ea.blurred, eb.blurred) ||
        !same(ea.binarised, eb.binarised) ||
        JSON.stringify(ea.inkBox) !== JSON.stringify(eb.inkBox)
      ) {
        diff++;
        console.log("differs", f, hard);
      }
    }
}
console.log(`${diff} of ${n} extractions differ`);
