// Writes sample signature images for trying the API by hand (README walkthrough): three signings of one
// synthetic writer and one of another, as PNGs in demo-images/ (git-ignored).
import { mkdirSync, writeFileSync } from "node:fs";
import { encodePng, makeWriter, renderSignature } from "../test/fixtures/generator";

const out = "demo-images";
mkdirSync(out, { recursive: true });
const alice = makeWriter(101);
for (let v = 0; v < 4; v++) writeFileSync(`${out}/alice-${v + 1}.png`, encodePng(renderSignature(alice, { variant: v, height: 200 })));
writeFileSync(`${out}/mallory-1.png`, encodePng(renderSignature(makeWriter(202), { variant: 0, height: 200 })));
console.log(`wrote ${out}/alice-1..4.png and ${out}/mallory-1.png`);
