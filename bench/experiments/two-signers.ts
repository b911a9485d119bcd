// Two signers side by side (docs/accuracy.md, "A name in words"): does the check's union of neighbouring
// boxes (name-parts.ts) ever take a signer's ink into the subject's comparison? Per K-th writer, the first
// 5 genuine signatures are enrolled whole. Each later genuine signature, and each skilled forgery, is set
// beside a genuine signature of the next writer in the list (the subject's on the left, then on the
// right), `gap` heights apart on white paper, and checked as `photo` with and without the union. Prints
// per gap: how many checks were located in two boxes or more, how many kept a union, how many were
// decided on a box that takes in both signers (and of those, how many approved), and the share at
// `approve` or above with and without the union, for the genuine and for the forged.
//   node --import tsx bench/experiments/two-signers.ts <dataset name> [K, default 4] [gaps, default 0.8,1.2,1.6,2]
import { readFileSync } from "node:fs";
import { DEFAULT_QUALITY_FLOOR, DEFAULT_THRESHOLDS } from "../../src/domain/policy-defaults";
import { decodePage } from "../../src/verify/decode";
import { locateSignatures } from "../../src/verify/locate";
import { checkDocument } from "../../src/verify/pipeline";
import { cropRaster } from "../../src/verify/render";
import type { Raster } from "../../src/verify/types";
import { blankPage, darkenOnto, encodePng } from "../../test/fixtures/generator";
import { enrolledSubjects, indexRows } from "../lib/enrolled-model";
import { findDatasetsRoot } from "../lib/lodo";
import { loadNodeCore } from "../lib/node-core";

const root = `${findDatasetsRoot() ?? "../shared/datasets"}/`;
const [ds, strideArg, gapsArg] = process.argv.slice(2);
const stride = Number(strideArg ?? 4);
const gaps = (gapsArg ?? "0.8,1.2,1.6,2").split(",").map(Number);
const core = loadNodeCore();
const policy = { thresholds: DEFAULT_THRESHOLDS, quality_floor: DEFAULT_QUALITY_FLOOR };
const rows = indexRows(`${root}${ds}`);
const all = [...new Set(rows.map((r) => r[1]))];

/** A dataset image cut to its signature's box. */
async function inkOf(path: string): Promise<Raster> {
  const r = await decodePage(new Uint8Array(readFileSync(`${root}${ds}/${path}`)), 0);
  const b = locateSignatures([r], { inputType: "signature_image" })[0]?.box;
  return b ? cropRaster(r, b) : r;
}

function sideBySide(left: Raster, right: Raster, gap: number): Raster {
  const h = Math.max(left.height, right.height);
  const g = Math.round(gap * h);
  const page = blankPage(left.width + g + right.width + 80, h + 80);
  darkenOnto(page, left, 40, 40 + ((h - left.height) >> 1));
  darkenOnto(page, right, 40 + left.width + g, 40 + ((h - right.height) >> 1));
  return page;
}

type Tally = { n: number; two: number; joined: number; foreign: number; foreignOk: number; ok: number; okApart: number };
const tallies = new Map<string, Tally>();
const tally = (k: string) => {
  let t = tallies.get(k);
  if (!t) tallies.set(k, (t = { n: 0, two: 0, joined: 0, foreign: 0, foreignOk: 0, ok: 0, okApart: 0 }));
  return t;
};

for await (const { writer: w, model, questionedGenuine, forgeries } of enrolledSubjects(core, `${root}${ds}`, rows, stride)) {
  const neighbour = all[(all.indexOf(w) + 1) % all.length];
  const theirs = rows.filter((r) => r[1] === neighbour && r[2] === "genuine");
  const questioned = [...questionedGenuine.slice(0, 4), ...forgeries.slice(0, 4)];
  for (let i = 0; i < questioned.length; i++) {
    const q = questioned[i];
    const subject = await inkOf(q[0]);
    const signer = await inkOf(theirs[i % theirs.length][0]);
    for (const gap of gaps) {
      for (const subjectLeft of [true, false]) {
        const page = subjectLeft ? sideBySide(subject, signer, gap) : sideBySide(signer, subject, gap);
        const bytes = encodePng(page);
        const out = await checkDocument(core, bytes, model, policy, { inputType: "photo" });
        const apart = await checkDocument(core, bytes, model, policy, { inputType: "photo", joinRuns: false });
        const t = tally(`${q[2]} gap ${gap}`);
        t.n++;
        if (apart.signatures.length >= 2) t.two++;
        if (out.signatures.length < apart.signatures.length) t.joined++;
        // The decision's signature takes in more than a tenth of each signer's width: a union of both.
        const best = out.signatures.find((s) => s.index === out.bestSignature);
        const g = Math.round(gap * Math.max(subject.height, signer.height));
        const mineAt = { x0: subjectLeft ? 40 : 40 + signer.width + g, w: subject.width };
        const theirsAt = { x0: subjectLeft ? 40 + subject.width + g : 40, w: signer.width };
        const takes = (r: { x0: number; w: number }) =>
          best !== undefined && Math.min(best.box.x + best.box.w, r.x0 + r.w) - Math.max(best.box.x, r.x0) > 0.1 * r.w;
        if (takes(mineAt) && takes(theirsAt)) {
          t.foreign++;
          if ((out.score ?? 0) >= DEFAULT_THRESHOLDS.approve) t.foreignOk++;
        }
        if ((out.score ?? 0) >= DEFAULT_THRESHOLDS.approve) t.ok++;
        if ((apart.score ?? 0) >= DEFAULT_THRESHOLDS.approve) t.okApart++;
      }
    }
  }
}
const pct = (a: number, b: number) => `${((100 * a) / Math.max(1, b)).toFixed(1)}%`;
for (const [k, t] of tallies)
  console.log(
    ds,
    k,
    `checks ${t.n}, two boxes ${t.two}, union kept ${t.joined}, decided on a box holding both signers ${t.foreign} (approved ${t.foreignOk}), approved ${pct(t.ok, t.n)} (without the union ${pct(t.okApart, t.n)})`,
  );
