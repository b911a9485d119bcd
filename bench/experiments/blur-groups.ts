// The "Blur" section of docs/accuracy.md: how far a phone photo of a signed form moves each feature group
// of the signature, against how far two genuine signings of its writer are apart, and what the photo scores.
//   node --import tsx bench/experiments/blur-groups.ts [--params FILE]
// --params: scoring parameters to use instead of the shipped ones (e.g. from bench/train/train.ts --out FILE).
import { readFileSync } from "node:fs";
import { DEFAULT_PARAMS, type ScoringParams } from "../../src/verify/calibration";
import { compareToModel } from "../../src/verify/compare";
import { extractFeatures, featureVector } from "../../src/verify/features";
import { locateSignatures } from "../../src/verify/locate";
import { buildReferenceModel } from "../../src/verify/model";
import { cropRaster } from "../../src/verify/render";
import { makeWriter, photoOf, renderForm, renderSignature, scanOf, signatureBoxes } from "../../test/fixtures/generator";
import { loadNodeCore } from "../lib/node-core";

const core = loadNodeCore();
const paramsAt = process.argv.indexOf("--params");
const params: ScoringParams = paramsAt >= 0 ? JSON.parse(readFileSync(process.argv[paramsAt + 1], "utf8")) : DEFAULT_PARAMS;
const alice = makeWriter(101);
const boxes = signatureBoxes(1240, 1754, 2);
const form = renderForm({ signatures: [{ writer: alice, variant: 2, box: boxes[0] }], boxes, seed: 9 });
const box = form.signatures[0].inkBox;
const vec = (r: Parameters<typeof extractFeatures>[1]) => featureVector(extractFeatures(core, r));
const clean = vec(cropRaster(form.raster, box));
const photo = vec(cropRaster(photoOf(form.raster, { seed: 5, rotation: 0 }), box));
const g0 = vec(renderSignature(alice, { variant: 0, height: 200 }));
const g1 = vec(renderSignature(alice, { variant: 1, height: 200 }));
const moved = core.groupDistances(photo, [clean]);
const genuine = core.groupDistances(g1, [g0]);
const names = [
  "hog 1x1",
  "hog 2x4",
  "hog 4x8",
  "hog polar",
  "lbp 1x1",
  "lbp 2x4",
  "lbp 4x8",
  "lbp polar",
  "ink mass",
  "profiles",
  "global",
  "cooc 1x1",
  "cooc 2x4",
  "columns",
];
console.log("group      photo vs scan / genuine vs genuine");
for (let g = 0; g < core.groupCount; g++) console.log(`${(names[g] ?? String(g)).padEnd(10)} ${(moved[g] / genuine[g]).toFixed(2)}`);

const refs = [0, 1, 2, 3].map((v) => {
  const raster = renderSignature(alice, { variant: v, height: 200 });
  return { refId: `alice-${v + 1}`, features: extractFeatures(core, raster), raster };
});
const model = buildReferenceModel(core, refs, params);
const pages = {
  scan: scanOf(form.raster, { seed: 5, dx: 14, dy: -9, rotation: 1 }),
  "photo, level": photoOf(form.raster, { seed: 5, rotation: 0 }),
  "photo, turned 2 degrees": photoOf(form.raster, { seed: 5, rotation: 2 }),
};
for (const [name, page] of Object.entries(pages)) {
  for (const s of locateSignatures([page], { inputType: "form" })) {
    const q = extractFeatures(core, cropRaster(page, s.box));
    const c = compareToModel(core, q, model, params);
    console.log(
      `${name}: located box ${s.box.w} x ${s.box.h} (signature ${box.w} x ${box.h}), score ${c.score.toFixed(4)}, edge width ${q.edgeWidth ?? "-"} px, regime ${c.regime ?? "as captured"}`,
    );
  }
}
