// Writes sample signature images for trying the API by hand (README walkthrough): three signings of one
// synthetic writer and one of another, as PNGs in demo-images/ (git-ignored).
import { mkdirSync, writeFileSync } from "node:fs";
import { encodePng, makeWriter, photoOf, renderForm, renderSignature, scanOf, signatureBoxes } from "../test/fixtures/generator";

const out = "demo-images";
mkdirSync(out, { recursive: true });
const alice = makeWriter(101);
for (let v = 0; v < 4; v++) writeFileSync(`${out}/alice-${v + 1}.png`, encodePng(renderSignature(alice, { variant: v, height: 200 })));
writeFileSync(`${out}/mallory-1.png`, encodePng(renderSignature(makeWriter(202), { variant: 0, height: 200 })));
// A blank form with two signature boxes (the first at x 110, y 1368, 430 x 160 px), and a scan and a phone
// photo of it signed by alice in the first box, for the template walkthrough in the README. The scan is
// shifted and turned a little, as a sheet on a scanner is; the photo is also blurred, and is compared in the
// blurred regime against references enrolled from clean images (docs/accuracy.md, "The blurred regime").
const boxes = signatureBoxes(1240, 1754, 2);
writeFileSync(`${out}/form-blank.png`, encodePng(renderForm({ signatures: [], boxes, seed: 9 }).raster));
const filled = renderForm({ signatures: [{ writer: alice, variant: 2, box: boxes[0] }], boxes, seed: 9 }).raster;
writeFileSync(`${out}/form-scan.png`, encodePng(scanOf(filled, { seed: 5, dx: 14, dy: -9, rotation: 1 })));
writeFileSync(`${out}/form-photo.png`, encodePng(photoOf(filled, { seed: 5, rotation: 2 })));
console.log(`wrote ${out}/alice-1..4.png, ${out}/mallory-1.png, ${out}/form-blank.png, ${out}/form-scan.png and ${out}/form-photo.png`);
