// The core's preprocessing alone (flatten, the ink table, the box and the normalised image), per crop, in
// Node: the median of 7 rounds of 20 passes over the given images. Compare two builds of the core:
//   node --import tsx bench/experiments/preprocess-time.ts <core.wasm> <image.png>...
import { readFileSync } from "node:fs";
import { decodePage } from "../../src/verify/decode/index";
const files = process.argv.slice(3);
const x = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(process.argv[2])), {}).exports as any;
const rs = [];
for (const f of files) rs.push(await decodePage(new Uint8Array(readFileSync(f)), 0));
const times: number[] = [];
for (let rep = 0; rep < 7; rep++) {
  const t0 = performance.now();
  for (let k = 0; k < 20; k++)
    for (const r of rs) {
      x.reset();
      const n = r.width * r.height;
      const src = x.alloc(n);
      new Uint8Array(x.memory.buffer, src, n).set(r.data.subarray(0, n));
      x.preprocess(src, r.width, r.height, 0);
    }
  times.push((performance.now() - t0) / (20 * rs.length));
}
times.sort((a, b) => a - b);
console.log(process.argv[2], "median ms per preprocess", times[3].toFixed(3));
