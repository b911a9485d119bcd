/**
 * Per-stage medians of the verification pipeline in workerd, on generated inputs:
 *   - a one-page A4 scan at 300 dpi (2480 x 3508 JPEG: printed form, ruling lines, stamp, signature),
 *   - a 640 px phone-photo preview frame,
 *   - one comparison against 10 references, and the WASM distance kernels against plain TypeScript.
 * Targets (issue 3): A4 pipeline <= 1 s median; one comparison vs 10 references <= 10 ms;
 * a 640 px frame (quality + locating) <= 50 ms. Issue 15: the A4 pipeline <= 100 ms.
 *
 * The A4 stages are measured twice, interleaved sample by sample so machine noise hits both alike: the
 * page decoded whole (scaledDecode: false, the path before issue 15) and the scaled path (the page at 1/3
 * through the scaled IDCT, the located box decoded again at full resolution). Besides the table, one
 * `BENCH_JSON {"section":"pipeline","rows":[...]}` line carries every row for scripts/bench-speed.mjs.
 */
import { it } from "vitest";
import { DEFAULT_QUALITY_FLOOR, DEFAULT_THRESHOLDS } from "../../src/domain/policy-defaults";
import { extractForCheck } from "../../src/verify/check-features";
import { compareToModel } from "../../src/verify/compare";
import { getCore } from "../../src/verify/core-module";
import { openDocument, type ScaledPage } from "../../src/verify/decode";
import { edgeWidth } from "../../src/verify/blur-measure";
import { extractFeatures, featureVector } from "../../src/verify/features";
import { groupDistancesTs } from "../../src/verify/kernels-ts";
import { locateSignatures } from "../../src/verify/locate";
import { buildReferenceModel } from "../../src/verify/model";
import { analyseDocument, checkDocument, pageDecodeScale } from "../../src/verify/pipeline";
import { analyseFrame } from "../../src/verify/pipeline-frame";
import { assessQuality } from "../../src/verify/quality";
import { cropRaster, paddedBox } from "../../src/verify/render";
import { blur } from "../lib/render";
import {
  blankPage,
  darkenOnto,
  encodeJpeg,
  encodePng,
  inkBounds,
  makeWriter,
  photoOf,
  renderForm,
  renderSignature,
  signatureBoxes,
} from "../../test/fixtures/generator";

const RUNS = 9;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

/**
 * workerd's clock ticks in whole milliseconds, so a stage is repeated until at least 40 ms have passed and
 * the mean per run is one sample; the median of RUNS samples is reported.
 */
async function sample(fn: () => unknown): Promise<number> {
  let n = 0;
  const t = performance.now();
  let dt = 0;
  do {
    await fn();
    n++;
    dt = performance.now() - t;
  } while (dt < 40);
  return dt / n;
}

async function measure(fn: () => unknown, runs = RUNS): Promise<number> {
  await fn(); // warm up
  const xs: number[] = [];
  for (let i = 0; i < runs; i++) xs.push(await sample(fn));
  return median(xs);
}

/** Two ways of doing one stage, sampled alternately (A, B, A, B, ...): the medians of each. */
async function measurePair(a: () => unknown, b: () => unknown, runs = RUNS): Promise<[number, number]> {
  await a();
  await b();
  const xa: number[] = [];
  const xb: number[] = [];
  for (let i = 0; i < runs; i++) {
    xa.push(await sample(a));
    xb.push(await sample(b));
  }
  return [median(xa), median(xb)];
}

interface Row {
  stage: string;
  /** Median milliseconds (null when the stage failed). */
  ms: number | null;
  /** For the A4 stages: the same stage with the page decoded whole, measured interleaved with `ms`. */
  whole_page_ms?: number;
  /** whole_page_ms / ms. */
  speedup?: number;
  target?: string;
  error?: string;
}

const rows: Row[] = [];
function report(name: string, ms: number | string, target = "", wholePageMs?: number) {
  const row: Row = { stage: name, ms: typeof ms === "number" ? round4(ms) : null };
  if (typeof ms === "string") row.error = ms;
  if (wholePageMs !== undefined && typeof ms === "number") {
    row.whole_page_ms = round4(wholePageMs);
    row.speedup = round4(wholePageMs / ms);
  }
  if (target) row.target = target;
  rows.push(row);
}

function round4(v: number): number {
  return Math.round(v * 10000) / 10000;
}

/** A stage that fails (say, scoring data out of step with the code) is reported, not fatal to the rest. */
async function attempt(name: string, fn: () => Promise<number>, target = "") {
  try {
    report(name, await fn(), target);
  } catch (err) {
    report(name, `failed: ${err instanceof Error ? err.message : String(err)}`, target);
  }
}

it("speed", async () => {
  const core = getCore();
  const writer = makeWriter(7);
  const refs = [];
  for (let v = 1; v <= 10; v++) refs.push({ refId: `r${v}`, features: extractFeatures(core, renderSignature(writer, { variant: v })) });
  const model = buildReferenceModel(core, refs);
  const cmpOk = (() => {
    try {
      compareToModel(core, refs[0].features, model);
      return true;
    } catch {
      return false;
    }
  })();
  const policy = { thresholds: DEFAULT_THRESHOLDS, quality_floor: DEFAULT_QUALITY_FLOOR };

  const box = signatureBoxes(2480, 3508, 1)[0];
  const form = renderForm({ signatures: [{ writer, variant: 12, box }], width: 2480, height: 3508, seed: 5, stamp: true });
  const a4 = encodeJpeg(form.raster, 85);
  // A phone held over the signing area of the form: a 4:3 part of the page, 640 x 480.
  const frame = encodeJpeg(photoOf(cropRaster(form.raster, { x: 200, y: 2000, w: 2010, h: 1508 }), { width: 640, seed: 2 }), 85);

  // A4 scan, stage by stage (each stage on the previous stage's output), whole page against scaled page.
  const page = await (await openDocument(a4)).decodePage(0);
  const scaled: ScaledPage = await (await openDocument(a4)).decodePageScaled(0, pageDecodeScale);
  const source = { scale: scaled.scale, width: scaled.width, height: scaled.height };
  const found = locateSignatures([page], { inputType: "scan" });
  const foundScaled = locateSignatures([scaled.raster], { inputType: "scan", scaled: source });
  const sigBox = foundScaled[0]?.box ?? box;
  const crop = cropRaster(page, found[0]?.box ?? box);
  const f = extractFeatures(core, crop);
  const a4Name = `A4 300 dpi JPEG (${a4.length} B, 2480x3508)`;
  const pair = async (name: string, whole: () => unknown, fast: () => unknown, target = "") => {
    const [w, s] = await measurePair(whole, fast);
    report(name, s, target, w);
  };
  await pair(
    `${a4Name}: decode (1/${scaled.scale} scale; whole page)`,
    async () => (await openDocument(a4)).decodePage(0),
    async () => (await openDocument(a4)).decodePageScaled(0, pageDecodeScale),
  );
  await pair(
    "A4: quality (page)",
    () => assessQuality(page, { inputType: "scan", kind: "page" }),
    () => assessQuality(scaled.raster, { inputType: "scan", kind: "page", source }),
  );
  await pair(
    "A4: locate",
    () => locateSignatures([page], { inputType: "scan" }),
    () => locateSignatures([scaled.raster], { inputType: "scan", scaled: source }),
  );
  await pair(
    "A4: crop of the located box, padded (full resolution)",
    () => cropRaster(page, paddedBox(sigBox, page)),
    () => scaled.crop(paddedBox(sigBox, scaled)),
  );
  // A check extracts only the vector its regime compares (check-features.ts); a reference extracts every
  // regime's (the binarised one when grey).
  report("A4: features (one signature, as a check of a sharp scan)", await measure(() => extractForCheck(core, crop, model)));
  const bitonalRefs = { ...model, refs: model.refs.map((r) => ({ ...r, features: { ...r.features, greyShare: 0 } })) };
  // The stage names carry the regime the check actually chose, so a row cannot silently time another case.
  const regimeOf = (f: { regime?: string }) => f.regime ?? "sharp";
  report(
    `A4: features (one signature, as a check of a grey scan against bitonal references: ${regimeOf(extractForCheck(core, crop, bitonalRefs))})`,
    await measure(() => extractForCheck(core, crop, bitonalRefs)),
  );
  // A softer grey scan: binarised, with the blurred regime's share (compare.ts binarisedBlurShare), two vectors.
  const softCrop = blur(crop, 0.6);
  const soft = extractForCheck(core, softCrop, bitonalRefs);
  report(
    `A4: features (one signature, as a check of a soft grey scan against bitonal references: ${regimeOf(soft)}${soft.blurred ? " with its blurred vector" : ""})`,
    await measure(() => extractForCheck(core, softCrop, bitonalRefs)),
  );
  const blurredCrop = photoOf(crop, { seed: 3, blur: 1.5, noise: 4 });
  report(
    `A4: features (one signature, as a check of a capture out of focus: ${regimeOf(extractForCheck(core, blurredCrop, model))})`,
    await measure(() => extractForCheck(core, blurredCrop, model)),
  );
  report("A4: features (one signature, as a reference: every regime)", await measure(() => extractFeatures(core, crop)));
  report("A4: blur measure (edge width of the crop)", await measure(() => edgeWidth(crop)));
  await attempt("A4: compare (10 references)", () => measure(() => compareToModel(core, f, model)));
  if (cmpOk) {
    await pair(
      "A4: whole pipeline (checkDocument, incl. crop PNG)",
      () => checkDocument(core, a4, model, policy, { inputType: "scan", scaledDecode: false }),
      () => checkDocument(core, a4, model, policy, { inputType: "scan" }),
      "<= 100 ms",
    );
  } else {
    // Without a working comparison, the pipeline up to the features: what checkDocument runs before comparing.
    const upTo = (scaledDecode: boolean) => async () => {
      const a = await analyseDocument(a4, { inputType: "scan", qualityFloor: DEFAULT_QUALITY_FLOOR, scaledDecode });
      for (const c of a.crops) extractFeatures(core, c);
    };
    await pair("A4: pipeline up to features (decode, quality, locate, crop PNG, features)", upTo(false), upTo(true), "<= 100 ms");
  }
  // The stage timings checkDocument records itself (spec'd in the check's timings), from one run after
  // the warm-up above: where the pipeline's time goes, decode including the full-resolution crop.
  const timed = await checkDocument(core, a4, model, policy, { inputType: "scan" }).catch(() => null);
  if (timed) for (const [stage, ms] of Object.entries(timed.timings)) report(`A4: checkDocument timings (one run): ${stage}`, ms);

  // A 640 px photo frame: what the live capture guide does per frame.
  const framePage = await (await openDocument(frame)).decodePage(0);
  report("640 px frame: decode (JPEG)", await measure(async () => (await openDocument(frame)).decodePage(0)));
  report("640 px frame: quality", await measure(() => assessQuality(framePage, { inputType: "photo", kind: "frame" })));
  // As the live socket locates (a preview: a sure half-size look is taken as it is).
  report("640 px frame: locate", await measure(() => locateSignatures([framePage], { inputType: "photo", preview: true })));
  report(
    "640 px frame: quality + locate",
    await measure(() => {
      assessQuality(framePage, { inputType: "photo", kind: "frame" });
      locateSignatures([framePage], { inputType: "photo", preview: true });
    }),
    "<= 50 ms",
  );
  // The same image sent to a check as a photo: the half-size look completed at full size.
  report("640 px photo checked: locate", await measure(() => locateSignatures([framePage], { inputType: "photo" })));

  // A name written in two words 1.2 heights apart, photographed: the locator boxes the words apart, and
  // the check also compares their union (name-parts.ts). Sampled alternately with the union left out.
  const words = [renderSignature(writer, { variant: 31 }), renderSignature(makeWriter(9), { variant: 31 })].map((r) =>
    cropRaster(r, inkBounds(r) ?? { x: 0, y: 0, w: r.width, h: r.height }),
  );
  const wordsH = Math.max(words[0].height, words[1].height);
  const sheet = blankPage(words[0].width + Math.round(1.2 * wordsH) + words[1].width + 80, wordsH + 80);
  darkenOnto(sheet, words[0], 40, 40);
  darkenOnto(sheet, words[1], 40 + words[0].width + Math.round(1.2 * wordsH), 40);
  const namePhoto = encodePng(photoOf(sheet, { seed: 3 }));
  const nameBoxes = locateSignatures([await (await openDocument(namePhoto)).decodePage(0)], { inputType: "photo" }).length;
  try {
    const [apart, joined] = await measurePair(
      () => checkDocument(core, namePhoto, model, policy, { inputType: "photo", joinRuns: false }),
      () => checkDocument(core, namePhoto, model, policy, { inputType: "photo" }),
    );
    report(`photo of a name in two words (${nameBoxes} boxes): checkDocument, words compared apart`, apart);
    report(`photo of a name in two words (${nameBoxes} boxes): checkDocument, with their union`, joined);
  } catch (err) {
    report("photo of a name in two words: checkDocument", `failed: ${err instanceof Error ? err.message : String(err)}`);
  }

  report(
    "640 px frame: analyseFrame (decode + quality + locate)",
    await measure(() => analyseFrame(frame, { qualityFloor: DEFAULT_QUALITY_FLOOR })),
  );

  // One comparison against 10 references, and the kernels alone.
  const q = extractFeatures(core, renderSignature(writer, { variant: 30 }));
  await attempt("one comparison vs 10 references (compareToModel)", () => measure(() => compareToModel(core, q, model)), "<= 10 ms");

  const qv = featureVector(q);
  const rv = refs.map((r) => featureVector(r.features));
  const wasm = await measure(() => core.groupDistances(qv, rv), 15);
  const ts = await measure(() => groupDistancesTs(qv, rv, core.groupOffsets, core.groupKinds), 15);
  report(`distance kernels vs 10 refs (${core.featureLength} floats), WASM SIMD`, wasm);
  report("distance kernels vs 10 refs, plain TypeScript", ts);

  report("WASM kernels speed-up over TypeScript (x)", ts / wasm);

  const lines = ["", "Countersign speed benchmark (workerd, medians; A4 rows: scaled page, whole page, ratio)", ""];
  for (const r of rows) {
    if (r.ms === null) {
      lines.push(`${r.stage.padEnd(66)} ${r.error}`);
      continue;
    }
    const fmt = (v: number) => v.toFixed(v < 1 ? 4 : 1).padStart(9);
    const whole = r.whole_page_ms !== undefined ? `  whole page ${fmt(r.whole_page_ms)} ms  x${(r.speedup ?? 0).toFixed(2)}` : "";
    lines.push(`${r.stage.padEnd(66)} ${fmt(r.ms)} ${r.stage.endsWith("(x)") ? "x " : "ms"}${whole}  ${r.target ?? ""}`);
  }
  console.log(lines.join("\n"));
  console.log(`BENCH_JSON ${JSON.stringify({ section: "pipeline", rows })}`);
});
