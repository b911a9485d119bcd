// Print and nothing else, checked (docs/accuracy.md, "Nothing found on a photo"): does the check's last
// look, the whole ink compared with the references, ever make a signature of type? Blank forms (scanned,
// and photographed at 1000 and 800 px), lines of type (plain and photographed) and level lines of separate letters
// (fixtures), each checked against five synthetic writers' models, with and without the last look
// (`wholeInkIfNone`). Prints how often each kind of image went from which decision to which.
//   node --import tsx bench/experiments/print-only-checks.ts
import { DEFAULT_QUALITY_FLOOR, DEFAULT_THRESHOLDS } from "../../src/domain/policy-defaults";
import { buildReferenceModel, type ReferenceModel } from "../../src/verify/model";
import { checkDocument, enrolReference } from "../../src/verify/pipeline";
import {
  encodeJpeg,
  encodePng,
  lettersApart,
  makeWriter,
  photoOf,
  printedLine,
  renderForm,
  renderSignature,
} from "../../test/fixtures/generator";
import { loadNodeCore } from "../lib/node-core";

const core = loadNodeCore();
const policy = { thresholds: DEFAULT_THRESHOLDS, quality_floor: DEFAULT_QUALITY_FLOOR };
const models: ReferenceModel[] = [];
for (const seed of [3, 7, 11, 19, 23]) {
  const refs = [];
  for (let v = 1; v <= 4; v++) {
    const e = await enrolReference(core, encodePng(renderSignature(makeWriter(seed), { variant: v })), { qualityFloor: 0 });
    if (!("rejected" in e)) refs.push({ refId: `r${v}`, features: e.features });
  }
  models.push(buildReferenceModel(core, refs));
}
const images: [string, Uint8Array, string][] = [];
for (let s = 1; s <= 6; s++) {
  const form = renderForm({ signatures: [], width: 1240, height: 1754, seed: s, stamp: s % 2 === 0 }).raster;
  images.push(["blank form, scanned", encodeJpeg(form, 85), "scan"]);
  images.push(["blank form, photographed", encodeJpeg(photoOf(form, { seed: s, width: 1000 }), 85), "photo"]);
  images.push(["blank form, photographed at 800 px", encodeJpeg(photoOf(form, { seed: s, width: 800 }), 85), "photo"]);
  images.push(["line of type, photographed", encodePng(photoOf(printedLine(900, 200, 5, s), { seed: s })), "photo"]);
  images.push(["line of type", encodePng(printedLine(1100, 300, 6, s)), "photo"]);
  images.push(["level line of separate letters", encodePng(lettersApart(s, 0)), "photo"]);
}
const tally: Record<string, number> = {};
for (const [kind, bytes, inputType] of images) {
  for (const model of models) {
    const out = await checkDocument(core, bytes, model, policy, { inputType });
    const without = await checkDocument(core, bytes, model, policy, { inputType, wholeInkIfNone: false });
    const key = `${kind}: ${without.decision} -> ${out.decision}`;
    tally[key] = (tally[key] ?? 0) + 1;
  }
}
console.log(tally);
