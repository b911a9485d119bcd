// How well the locator boxes a signature on a form, clean, scanned and photographed (the test fixtures'
// photo look: 1 px blur, uneven light, noise; level and turned 2 degrees), over twelve synthetic writers:
// the box's width against the signature's ink box, and its overlap. A box is "bad" when no single box is
// found or its width is off by more than 15%. docs/accuracy.md, "Blur", quotes it.
//   node --import tsx bench/experiments/locate-forms.ts
import { locateSignatures } from "../../src/verify/locate";
import type { Raster } from "../../src/verify/types";
import { boxIoU, makeWriter, photoOf, renderForm, scanOf, signatureBoxes } from "../../test/fixtures/generator";

const WRITERS = [101, 3, 7, 12, 44, 5, 9, 21, 33, 57, 61, 77];
const boxes = signatureBoxes(1240, 1754, 2);
let overlap = 0;
let cases = 0;
let bad = 0;
for (const seed of WRITERS) {
  const form = renderForm({ signatures: [{ writer: makeWriter(seed), variant: 2, box: boxes[0] }], boxes, seed: 9 });
  const truth = form.signatures[0].inkBox;
  const pages: [string, Raster][] = [
    ["clean", form.raster],
    ["scan", scanOf(form.raster, { seed: 3, dx: 10, dy: -6, rotation: 1 })],
    ["photo", photoOf(form.raster, { seed: 5, rotation: 0 })],
    ["photo turned", photoOf(form.raster, { seed: 5, rotation: 2 })],
  ];
  const row: string[] = [];
  for (const [name, page] of pages) {
    const found = locateSignatures([page], { inputType: "photo" });
    const w = found.length === 1 ? found[0].box.w / truth.w : 0;
    if (found.length !== 1 || w < 0.85 || w > 1.15) bad++;
    overlap += found.length === 1 ? boxIoU(found[0].box, truth) : 0;
    cases++;
    row.push(`${name}: ${found.length === 1 ? `width ${w.toFixed(2)}` : `${found.length} boxes`}`);
  }
  console.log(`writer ${seed}  ${row.join(", ")}`);
}
console.log(`mean overlap (IoU) ${(overlap / cases).toFixed(3)}; bad boxes ${bad} of ${cases}`);
