// Dataset signatures checked as a capture session sends them, `photo` (docs/accuracy.md, "A lone signature
// sent as a photo"): what the locator's box does to the decision. Per K-th writer, the first 5 genuine
// signatures are enrolled whole (`signature_image`); the other genuine signatures and the skilled forgeries
// are checked through the whole pipeline (checkDocument: decode, quality, locate, features, compare) as
// `photo`, and again as `signature_image` (the box the accuracy benches score). Prints, per input type, the
// share of genuine and of forged signatures at `approve` or above, and how often the two input types'
// scores differ by more than 0.05.
//   node --import tsx bench/experiments/photo-checks.ts <dataset name> [K, default 4]
import { readFileSync } from "node:fs";
import { DEFAULT_QUALITY_FLOOR, DEFAULT_THRESHOLDS } from "../../src/domain/policy-defaults";
import { checkDocument } from "../../src/verify/pipeline";
import { enrolledSubjects, indexRows } from "../lib/enrolled-model";
import { findDatasetsRoot } from "../lib/lodo";
import { loadNodeCore } from "../lib/node-core";

const root = `${findDatasetsRoot() ?? "../shared/datasets"}/`;
const [ds, strideArg] = process.argv.slice(2);
const stride = Number(strideArg ?? 4);
const core = loadNodeCore();
const policy = { thresholds: DEFAULT_THRESHOLDS, quality_floor: DEFAULT_QUALITY_FLOOR };
const rows = indexRows(`${root}${ds}`);
const tally = { photo: { g: 0, gOk: 0, f: 0, fOk: 0 }, signature_image: { g: 0, gOk: 0, f: 0, fOk: 0 } };
let differ = 0,
  pairs = 0;
for await (const { model, questionedGenuine, forgeries } of enrolledSubjects(core, `${root}${ds}`, rows, stride)) {
  for (const r of [...questionedGenuine, ...forgeries]) {
    const bytes = new Uint8Array(readFileSync(`${root}${ds}/${r[0]}`));
    const scores: Record<string, number> = {};
    for (const inputType of ["photo", "signature_image"] as const) {
      const out = await checkDocument(core, bytes, model, policy, { inputType });
      const score = out.score ?? 0;
      scores[inputType] = score;
      const t = tally[inputType];
      const ok = score >= DEFAULT_THRESHOLDS.approve;
      if (r[2] === "genuine") {
        t.g++;
        if (ok) t.gOk++;
      } else {
        t.f++;
        if (ok) t.fOk++;
      }
    }
    pairs++;
    if (Math.abs(scores.photo - scores.signature_image) > 0.05) differ++;
  }
}
const pct = (a: number, b: number) => `${((100 * a) / Math.max(1, b)).toFixed(1)}%`;
for (const [k, t] of Object.entries(tally))
  console.log(
    ds,
    "stride",
    stride,
    k,
    "genuine approved",
    `${t.gOk}/${t.g}`,
    pct(t.gOk, t.g),
    "forgeries approved",
    `${t.fOk}/${t.f}`,
    pct(t.fOk, t.f),
  );
console.log("scores differing by more than 0.05 between photo and signature_image:", differ, "of", pairs);
