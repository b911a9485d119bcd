// How far a capture condition (default `shadow`) moves each image's normalised image from the clean one's:
// the ink box, the ink mass, the L1 difference of ink weights over the clean mass (when the sizes agree), and
// whether the core evened out the paper (info 8) for the clean and the rendered image. Feature version 13.
//   node --import tsx bench/experiments/shadow-diag.ts <dataset folder> [stride 20] [condition shadow]
// Writes the first six images' normalised renderings as PNG to /tmp/shd/.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { decodePage } from "../../src/verify/decode/index";
import { CONDITIONS, rngFor, toPng } from "../lib/render";

const set = process.argv[2];
const stride = Number(process.argv[3] ?? 20);
const cond = process.argv[4] ?? "shadow";
const x = new WebAssembly.Instance(new WebAssembly.Module(readFileSync(new URL("../../wasm/build/core.wasm", import.meta.url))), {})
  .exports as any;
const rows = readFileSync(join(set, "index.csv"), "utf8")
  .trim()
  .split("\n")
  .slice(1)
  .map((l) => l.split(","));
const c = CONDITIONS.find((k) => k.name === cond)!;

function pre(r: { width: number; height: number; data: Uint8Array }) {
  x.reset();
  const n = r.width * r.height;
  const src = x.alloc(n);
  new Uint8Array(x.memory.buffer, src, n).set(r.data.subarray(0, n));
  x.preprocess(src, r.width, r.height, 0);
  const W = x.info(5),
    H = x.info(6);
  const img = new Float32Array(x.memory.buffer, x.normPointer(), W * H).slice();
  return { box: [x.info(0), x.info(1), x.info(2), x.info(3)], W, H, img, flat: x.info(8) };
}
mkdirSync("/tmp/shd", { recursive: true });
let k = 0;
const out: string[] = [];
for (let i = 0; i < rows.length; i += stride) {
  const path = rows[i][0];
  const clean = await decodePage(new Uint8Array(readFileSync(join(set, path))), 0);
  const shad = await c.render(clean, rngFor(`${c.name}|${path}`));
  const a = pre(clean),
    b = pre(shad);
  const boxd = a.box.map((v, j) => Math.abs(v - b.box[j])).reduce((s, v) => Math.max(s, v), 0);
  let massA = 0,
    massB = 0,
    l1 = 0;
  for (const v of a.img) massA += v;
  for (const v of b.img) massB += v;
  if (a.W === b.W && a.H === b.H) for (let j = 0; j < a.img.length; j++) l1 += Math.abs(a.img[j] - b.img[j]);
  out.push(
    `${path} flat ${a.flat} ${b.flat} box${a.box} vs ${b.box} maxd ${boxd} mass ${massA.toFixed(0)} ${massB.toFixed(0)} ratio ${(massB / massA).toFixed(3)} l1/mass ${a.W === b.W && a.H === b.H ? (l1 / massA).toFixed(3) : "dims"}`,
  );
  if (k++ < 6) {
    const toR = (p: { W: number; H: number; img: Float32Array }) => ({
      width: p.W,
      height: p.H,
      data: Uint8Array.from(p.img, (v) => 255 - Math.round(255 * v)),
    });
    writeFileSync(`/tmp/shd/${k}-clean.png`, toPng(toR(a)));
    writeFileSync(`/tmp/shd/${k}-${cond}.png`, toPng(toR(b)));
    writeFileSync(`/tmp/shd/${k}-${cond}-src.png`, toPng(shad));
  }
}
console.log(out.join("\n"));
