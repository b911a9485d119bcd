// A whole A4 form photographed small (docs/accuracy.md, "A table photographed small"): at 700 to 1000 px
// the print of a form is a few pixels high, and rule removal leaves its table's grid in pieces. Per width,
// twelve synthetic forms (a stamp on every other one), photographed with the fixtures' look: how many blank
// ones give a signature (they should give none), and on how many signed ones (one signature, writer
// 100 + seed) the signature is the one box found, overlapping its ink box by more than 0.6.
//   node --import tsx bench/experiments/small-form-photos.ts [widths, default 700,800,900,1000,1240]
import { locateSignatures } from "../../src/verify/locate";
import { boxIoU, makeWriter, photoOf, renderForm, signatureBoxes } from "../../test/fixtures/generator";

const A4 = { width: 1240, height: 1754 };
const widths = (process.argv[2] ?? "700,800,900,1000,1240").split(",").map(Number);
const one = signatureBoxes(A4.width, A4.height, 1);
for (const width of widths) {
  const phantoms: number[] = [];
  const missed: number[] = [];
  for (let seed = 1; seed <= 12; seed++) {
    const stamp = seed % 2 === 0;
    const blank = renderForm({ signatures: [], ...A4, seed, stamp }).raster;
    if (locateSignatures([photoOf(blank, { seed, width })], { inputType: "photo" }).length > 0) phantoms.push(seed);
    const signed = renderForm({
      signatures: [{ writer: makeWriter(100 + seed), variant: 1, box: one[0] }],
      boxes: one,
      ...A4,
      seed,
      stamp,
    });
    const found = locateSignatures([photoOf(signed.raster, { seed, width })], { inputType: "photo" });
    const k = width / A4.width,
      t = signed.signatures[0].inkBox;
    const truth = { x: t.x * k, y: t.y * k, w: t.w * k, h: t.h * k };
    if (found.length !== 1 || boxIoU(found[0].box, truth) <= 0.6) missed.push(seed);
  }
  console.log(
    `${width} px: blank forms with a signature found ${phantoms.length} / 12 [${phantoms.join(" ")}];`,
    `signed forms whose signature is not the one box ${missed.length} / 12 [${missed.join(" ")}]`,
  );
}
