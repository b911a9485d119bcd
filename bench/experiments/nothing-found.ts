// Dataset signatures sent as `photo` that the page search finds nowhere (docs/accuracy.md, "Nothing found on
// a photo"): what the check's last look, the whole ink compared with the references, makes of them. Per K-th
// writer, the first 5 genuine signatures are enrolled whole; each later genuine signature and each skilled
// forgery that is NO_SIGNATURE as `photo` without the last look (`wholeInkIfNone: false`) is checked again
// with it. Prints the decisions, genuine and forged apart.
//   node --import tsx bench/experiments/nothing-found.ts <dataset name> [K, default 4]
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
const tally: Record<string, number> = {};
for await (const { model, questionedGenuine, forgeries } of enrolledSubjects(core, `${root}${ds}`, rows, stride)) {
  for (const r of [...questionedGenuine, ...forgeries]) {
    const bytes = new Uint8Array(readFileSync(`${root}${ds}/${r[0]}`));
    const without = await checkDocument(core, bytes, model, policy, { inputType: "photo", wholeInkIfNone: false });
    if (without.decision !== "NO_SIGNATURE") continue;
    const out = await checkDocument(core, bytes, model, policy, { inputType: "photo" });
    const key = `${r[2]}: NO_SIGNATURE -> ${out.decision}`;
    tally[key] = (tally[key] ?? 0) + 1;
  }
}
console.log(ds, "stride", stride, tally);
