/**
 * The verification pipeline the check and enrolment routes call: bytes in, decisions and figures out.
 * Pure: no HTTP and no bindings. The WASM core, the subject's reference model and a template are passed in.
 *
 *   analyseDocument(bytes, opts)                  decode, judge quality, locate, crop
 *   enrolReference(core, bytes, opts)             one reference file -> features, thumbnail (or a rejection)
 *   checkDocument(core, bytes, model, policy, opts, onEvent?) -> CheckOutcome
 *   learnedCropPng(page, box, inputType)          what a confirmed signature is learned from
 *
 * Pages are decoded one at a time and dropped once their signatures are cropped, so a long queued document
 * never holds more than one page in memory. Decode failures are typed VerifyErrors and propagate; the
 * routes map them to item errors.
 */
import { DEFAULT_THRESHOLDS, decide, type Decision } from "../domain/policy-defaults";
import type { CheckPolicy } from "../domain/policy";
import type { Core } from "./core";
import { openDocument, wholePage, type IdctScale, type ScaledPage } from "./decode";
import { workFactor } from "./ink-mask";
import { eraseRules, ruleWindow } from "./crop-rules";
import { extractForCheck } from "./check-features";
import { extractFeatures, type SignatureFeatures } from "./features";
import { ModelMismatchError, compareToModel } from "./compare";
import { runsOffImage } from "./cut-off";
import { BARE_MAX_SIDE, locateSignatures, wholeInkBox, type LocatedSignature, type LocateTarget } from "./locate";
import { MAX_RUNS, chooseRuns, lineRuns } from "./name-parts";
import { variantDistanceRow, type ReferenceModel } from "./model";
import { assessQuality, type CaptureCue, type QualityReport } from "./quality";
import { CROP_MAX_SIDE, cropRaster, encodeGreyPng, fitWithin, paddedBox, referenceThumbnailPng } from "./render";
import { otsu } from "./morphology";
import type { TemplateModel } from "./template";
import { VerifyError, isVerifyError, type Box, type DecodeLimits, type Raster, type VerifyErrorCode } from "./types";

export interface AnalyseOptions {
  /** The caller's input_type: `photo`, `scan`, `form`, `signature_image`, ... */
  inputType?: string;
  /** `page` is 1-based; `box` is in page pixels. */
  target?: LocateTarget;
  template?: TemplateModel;
  /**
   * A form template given per page of the blank (1-based page -> model). Only those pages of the
   * document are searched, each with its own page's model; a page that does not register is searched
   * without it. A document with none of those pages is searched whole, without a template.
   */
  templatePages?: Record<number, TemplateModel>;
  limits?: Partial<DecodeLimits>;
  /** The policy's quality floor: below it the input is UNREADABLE. */
  qualityFloor: number;
  /** Render the padded grey PNG crop of every located signature (default true). */
  renderCrops?: boolean;
  /**
   * Decode large JPEG pages at a reduced scale for quality and locating, and only the located boxes at
   * full resolution (default true). false decodes every page whole: the reference path the benchmarks
   * compare against.
   */
  scaledDecode?: boolean;
  /**
   * Also cut out the unions of boxes that may be the words of one name (name-parts.ts) as `runs`, for
   * the check to score. Not with a template, a target box or a `signature_image`.
   */
  joinRuns?: boolean;
  /**
   * When a one-page document's page search finds nothing, also cut out its whole ink as `wholeInk`
   * (locate.ts wholeInkBox), for the check to compare: the search may have taken a name for a line of
   * type. Not with a template, a target box or a `signature_image`.
   */
  wholeInkIfNone?: boolean;
}

/** A located signature as the analysis reports it. */
export interface FoundSignature extends LocatedSignature {
  /**
   * The box runs out of its page (cut-off.ts): part of the signature may be missing from what is
   * compared, so a genuine one can score low. Said, not acted on: the decision stays the policy's.
   * Always false for a `signature_image`.
   */
  cutOff: boolean;
}

export interface Analysis {
  pages: number;
  /** Quality of the first page searched (the target page, else page 1), on a downscaled copy. */
  quality: QualityReport;
  signatures: FoundSignature[];
  /** Same order as `signatures`: the quality of each signature's own box. */
  perSignatureQuality: QualityReport[];
  /** The page (or every located signature) is below the quality floor. */
  unreadable?: boolean;
  /** Readable, but nothing that looks like a signature was found. */
  noSignature?: boolean;
  /**
   * Same order as `signatures`: the pixels of each box, what the features are taken from. A signature
   * searched for on a page has the page's printed rules painted out of it (`featureCrop`).
   */
  crops: Raster[];
  /** Same order as `signatures`: grey PNG, box plus 8% padding, at most 640 px (when renderCrops). */
  cropPngs: Uint8Array[];
  /** Milliseconds spent per stage. */
  timings: StageTimings;
  /** With a template: for each page searched with it, whether the page registered to the blank. */
  registration?: { page: number; registered: boolean }[];
  /** With `joinRuns`: neighbouring boxes on one line, and their union cut out as a signature of its own. */
  runs?: JoinedRun[];
  /** With `wholeInkIfNone`, when nothing was found on the document's one page: all its ink, cut out. */
  wholeInk?: Alternative;
}

/** A box the check may take for a signature, cut out as each located signature is. */
export interface Alternative {
  /** `index` is -1 until the check keeps it. */
  signature: FoundSignature;
  quality: QualityReport;
  crop: Raster;
  cropPng?: Uint8Array;
}

/** The union of a run of boxes (name-parts.ts). */
export interface JoinedRun extends Alternative {
  /** Indices into `signatures`, left to right. */
  parts: number[];
}

export interface StageTimings {
  decode: number;
  quality: number;
  locate: number;
  features: number;
  compare: number;
}

/** The stream events of spec 6.1, in their order, for the streamed check. */
export type CheckEvent =
  | { type: "quality"; data: QualityEvent }
  | { type: "located"; data: { signatures: FoundSignature[] } }
  | { type: "comparing"; data: { reference_count: number } };

export interface QualityEvent {
  page: number;
  score: number;
  cue: CaptureCue;
  cues: CaptureCue[];
  figures: QualityReport["figures"];
}

const now = () => performance.now();

/**
 * The pixels a located signature's features are taken from. A bare signature image is taken as it is
 * (its own underline can be as straight as a rule, and there is no form); a signature found on a page
 * loses the printed rules crossing its box, such as the line it was signed on, which its references
 * enrolled elsewhere do not have.
 */
function featureCrop(window: Raster, box: Box, inputType: string | undefined, crop = cropRaster(window, box)): Raster {
  return inputType === "signature_image" ? crop : eraseRules(window, box);
}

/**
 * What a confirmed signature is learned from, as a grey PNG: exactly the pixels the check's features were
 * taken from (`featureCrop`: a page's printed rules crossing the box painted out), on a margin of their
 * own paper as wide as the reviewer crop's padding. Enrolled as a bare signature image it gives the
 * features the check compared: nothing outside the box (the line signed on often runs just below it)
 * and no downscaling. The reviewer's own crop keeps the page as it is.
 */
export async function learnedCropPng(page: Raster, box: Box, inputType: string | null | undefined): Promise<Uint8Array> {
  const padded = paddedBox(box, page);
  const context = inputType === "signature_image" ? padded : ruleWindow(box, padded, page);
  const crop = featureCrop(cropRaster(page, context), within(box, context), inputType ?? undefined);
  const tone = paperTone(crop.data);
  const out: Raster = { width: padded.w, height: padded.h, data: new Uint8Array(padded.w * padded.h).fill(tone) };
  const at = within(box, padded);
  for (let y = 0; y < crop.height; y++)
    out.data.set(crop.data.subarray(y * crop.width, (y + 1) * crop.width), (at.y + y) * out.width + at.x);
  return encodeGreyPng(out);
}

/** The paper's grey level: the median of the pixels lighter than the ink threshold. */
function paperTone(data: Uint8Array): number {
  const t = otsu(data);
  const hist = new Uint32Array(256);
  let n = 0;
  for (let i = 0; i < data.length; i++)
    if (data[i] >= t) {
      hist[data[i]]++;
      n++;
    }
  if (n === 0) return 255;
  let seen = 0;
  for (let v = 255; v >= 0; v--) {
    seen += hist[v];
    if (seen * 2 >= n) return v;
  }
  return 255;
}

/**
 * A box of a page, cut out: the pixels its features are taken from, its quality and the reviewer's crop.
 * Only the padded box is decoded at full resolution (for a scaled page, its MCU rows are decoded again);
 * the box itself is cut from it, the same pixels a crop of the full page would give.
 */
async function cutOut(
  page: ScaledPage,
  box: Box,
  inputType: string | undefined,
  renderCrop: boolean,
  timings: StageTimings,
): Promise<{ crop: Raster; quality: QualityReport; png?: Uint8Array }> {
  let t = now();
  const padded = paddedBox(box, page);
  // Decoded once, wide enough for eraseRules to see a rule run on past the signature; the crop image's
  // padded box and the box itself are cut from it.
  const context = inputType === "signature_image" ? padded : ruleWindow(box, padded, page);
  const wide = page.crop(context);
  const window = context === padded ? wide : cropRaster(wide, within(padded, context));
  const inWide = within(box, context);
  const raw = cropRaster(wide, inWide);
  timings.decode += now() - t;
  t = now();
  const quality = assessQuality(raw, { inputType, kind: "crop" });
  timings.quality += now() - t;
  t = now();
  const crop = featureCrop(wide, inWide, inputType, raw);
  timings.features += now() - t;
  return renderCrop ? { crop, quality, png: await encodeGreyPng(fitWithin(window, CROP_MAX_SIDE)) } : { crop, quality };
}

/**
 * Whether a box runs out of its page. A bare signature image is the signature whole, and is often cut
 * tight to its ink (329 of 330 Dutch development images touch an edge): its edges say nothing of a cut.
 */
function cutOffFor(box: Box, page: { width: number; height: number }, inputType: string | undefined): boolean {
  return inputType !== "signature_image" && runsOffImage(box, { width: page.width, height: page.height });
}

/** `box` in the pixels of `outer`, a box of the same page that holds it. */
function within(box: Box, outer: Box): Box {
  return { x: box.x - outer.x, y: box.y - outer.y, w: box.w, h: box.h };
}

export async function analyseDocument(
  bytes: Uint8Array,
  opts: AnalyseOptions,
  onEvent?: (e: CheckEvent) => void | Promise<void>,
): Promise<Analysis> {
  const timings: StageTimings = { decode: 0, quality: 0, locate: 0, features: 0, compare: 0 };
  let t = now();
  const doc = await openDocument(bytes, opts.limits);
  timings.decode += now() - t;

  const targetPage = opts.target?.page;
  if (targetPage !== undefined && (!Number.isInteger(targetPage) || targetPage < 1 || targetPage > doc.pageCount)) {
    throw new VerifyError("page_out_of_range", `target.page ${targetPage} is outside the document's ${doc.pageCount} page(s)`, targetPage);
  }
  let pageNumbers = targetPage !== undefined ? [targetPage] : Array.from({ length: doc.pageCount }, (_, i) => i + 1);
  const templatePages = opts.templatePages;
  if (templatePages) {
    const withBoxes = pageNumbers.filter((p) => templatePages[p] !== undefined);
    if (withBoxes.length > 0) pageNumbers = withBoxes;
  }
  const registration: { page: number; registered: boolean }[] = [];

  let quality: QualityReport | undefined;
  const signatures: FoundSignature[] = [];
  const perSignatureQuality: QualityReport[] = [];
  const crops: Raster[] = [];
  const cropPngs: Uint8Array[] = [];
  const runs: JoinedRun[] = [];
  let wholeInk: Alternative | undefined;
  let skipped: VerifyError | undefined;

  for (const pageNo of pageNumbers) {
    t = now();
    const template = templatePages ? templatePages[pageNo] : opts.template;
    // A template registers on the page as decoded, and a target box is small: both read the page whole.
    const scaled = opts.scaledDecode !== false && !template && !opts.target?.box;
    let page: ScaledPage;
    try {
      page = scaled ? await doc.decodePageScaled(pageNo - 1, pageDecodeScale) : wholePage(await doc.decodePage(pageNo - 1));
    } catch (err) {
      // A text-only page among scanned ones (a cover letter) is passed over; the document fails only if
      // no page has anything to verify.
      if (isVerifyError(err) && err.code === "no_raster_content" && pageNumbers.length > 1) {
        skipped = err;
        timings.decode += now() - t;
        continue;
      }
      throw err;
    }
    timings.decode += now() - t;
    const raster = page.raster;
    const source = page.scale > 1 ? { scale: page.scale, width: page.width, height: page.height } : undefined;

    if (!quality) {
      t = now();
      quality = assessQuality(raster, { inputType: opts.inputType, kind: "page", source });
      timings.quality += now() - t;
      await onEvent?.({
        type: "quality",
        data: { page: pageNo, score: quality.score, cue: quality.cue, cues: quality.cues, figures: quality.figures },
      });
      if (quality.score < opts.qualityFloor) {
        return {
          pages: doc.pageCount,
          quality,
          signatures: [],
          perSignatureQuality: [],
          unreadable: true,
          crops: [],
          cropPngs: [],
          timings,
          registration,
        };
      }
    }

    t = now();
    const found = locateSignatures([raster], {
      inputType: opts.inputType,
      target: opts.target?.box ? { box: opts.target.box } : undefined,
      template,
      onRegistration: (_, registered) => registration.push({ page: pageNo, registered }),
      scaled: source,
    });
    timings.locate += now() - t;
    for (const s of found) {
      const cut = await cutOut(page, s.box, opts.inputType, opts.renderCrops !== false, timings);
      // Rounded once, here, as `score` is below: every path (inline, queued, streamed, bucket) reports this number.
      signatures.push({
        ...s,
        confidence: round4(s.confidence),
        index: signatures.length,
        page: pageNo,
        cutOff: cutOffFor(s.box, page, opts.inputType),
      });
      perSignatureQuality.push(cut.quality);
      crops.push(cut.crop);
      if (cut.png) cropPngs.push(cut.png);
    }
    // Boxes that may be the words of one name (name-parts.ts): their unions are cut while the page is at
    // hand, and the check decides. A template's zones and a target box say where the signature is.
    if (opts.joinRuns && !template && !opts.target?.box && opts.inputType !== "signature_image") {
      const first = signatures.length - found.length;
      for (const r of lineRuns(found, MAX_RUNS - runs.length)) {
        const parts = r.parts.map((p) => first + p);
        const cut = await cutOut(page, r.box, opts.inputType, opts.renderCrops !== false, timings);
        runs.push({
          parts,
          signature: {
            index: -1,
            page: pageNo,
            box: r.box,
            confidence: Math.max(...parts.map((p) => signatures[p].confidence)),
            cutOff: cutOffFor(r.box, page, opts.inputType),
          },
          quality: cut.quality,
          crop: cut.crop,
          cropPng: cut.png,
        });
      }
    }
    if (
      opts.wholeInkIfNone &&
      found.length === 0 &&
      doc.pageCount === 1 &&
      !template &&
      !opts.target?.box &&
      opts.inputType !== "signature_image" &&
      Math.max(page.width, page.height) <= BARE_MAX_SIDE
    ) {
      t = now();
      // A JPEG of 1650 px or more was decoded scaled for the search; the whole ink is taken at full size,
      // and its box cut from that decode rather than decoded again.
      const full = page.scale === 1 ? page : wholePage(page.crop({ x: 0, y: 0, w: page.width, h: page.height }));
      const whole = wholeInkBox(full.raster);
      timings.locate += now() - t;
      if (whole) {
        const { box } = whole;
        const cut = await cutOut(full, box, opts.inputType, opts.renderCrops !== false, timings);
        const signature: FoundSignature = {
          index: -1,
          page: pageNo,
          box,
          confidence: round4(whole.confidence),
          cutOff: cutOffFor(box, page, opts.inputType),
        };
        wholeInk = { signature, quality: cut.quality, crop: cut.crop, cropPng: cut.png };
      }
    }
  }
  if (!quality) throw skipped ?? new VerifyError("no_raster_content", "the document holds no page with an image to verify");

  await onEvent?.({ type: "located", data: { signatures } });
  const analysis: Analysis = {
    pages: doc.pageCount,
    quality,
    signatures,
    perSignatureQuality,
    crops,
    cropPngs,
    timings,
    registration,
    runs,
    wholeInk,
  };
  if (signatures.length === 0) analysis.noSignature = true;
  else if (perSignatureQuality.every((q) => q.score < opts.qualityFloor)) analysis.unreadable = true;
  return analysis;
}

/**
 * The IDCT scale for a page's page-wide stages: the locator's shrink factor (about long side / 1,100, at
 * most 8). The locator's working copy is then the scaled page itself, the mean of the same squares of full
 * pixels it would average from the full page, and quality's working copy (640 px) a whole multiple of it
 * on an A4 page. An A4 page at 300 dpi decodes at 1/3, at 600 dpi at 1/6; a page under about 1,650 px on
 * its long side is decoded whole.
 */
export function pageDecodeScale(width: number, height: number): IdctScale {
  return Math.min(8, workFactor({ w: width, h: height })) as IdctScale;
}

// ---------------------------------------------------------------------------------------------------------
// Enrolment

export interface EnrolOptions {
  inputType?: string;
  target?: LocateTarget;
  limits?: Partial<DecodeLimits>;
  qualityFloor: number;
}

export interface EnrolledReference {
  features: SignatureFeatures;
  /** Distances to the reference's own synthetic variants (see model.ts variantDistanceRow). */
  variantRow: number[] | null;
  quality: QualityReport;
  /** 1-based page and the box in page pixels the features were taken from. */
  page: number;
  box: Box;
  /** Grey PNG of the file's first page, at most 512 px on the long side. */
  thumbnailPng: Uint8Array;
}

export interface RejectedReference {
  rejected: "no_signature" | "unreadable" | VerifyErrorCode;
  detail: string;
}

/**
 * One reference file: the most confident signature on its first page (or the target page) becomes the
 * reference. Expected failures are returned, not thrown, so one bad file does not sink a batch.
 */
export async function enrolReference(core: Core, bytes: Uint8Array, opts: EnrolOptions): Promise<EnrolledReference | RejectedReference> {
  try {
    const doc = await openDocument(bytes, opts.limits);
    const pageNo = opts.target?.page ?? 1;
    if (!Number.isInteger(pageNo) || pageNo < 1 || pageNo > doc.pageCount) {
      return { rejected: "page_out_of_range", detail: `target.page ${pageNo} is outside the file's ${doc.pageCount} page(s)` };
    }
    const first = await doc.decodePage(0);
    const thumbnailPng = await referenceThumbnailPng(first);
    const page = pageNo === 1 ? first : await doc.decodePage(pageNo - 1);
    const inputType = opts.inputType ?? "signature_image";
    const pageQuality = assessQuality(page, { inputType, kind: "page" });
    if (pageQuality.score < opts.qualityFloor) {
      return {
        rejected: "unreadable",
        detail: `the reference image is too poor to learn from (quality ${pageQuality.score}: ${pageQuality.cue})`,
      };
    }
    const found = locateSignatures([page], { inputType, target: opts.target?.box ? { box: opts.target.box } : undefined });
    if (found.length === 0) return { rejected: "no_signature", detail: "no signature was found in the reference file" };
    const best = found.reduce((a, b) => (b.confidence > a.confidence ? b : a));
    const quality = assessQuality(page, { inputType, region: best.box, kind: "crop" });
    if (quality.score < opts.qualityFloor) {
      return {
        rejected: "unreadable",
        detail: `the signature in the reference is too poor to learn from (quality ${quality.score}: ${quality.cue})`,
      };
    }
    const context = ruleWindow(best.box, paddedBox(best.box, page), page);
    const crop = featureCrop(cropRaster(page, context), within(best.box, context), inputType);
    const features = extractFeatures(core, crop);
    if (!features.inkFound) return { rejected: "no_signature", detail: "the located signature holds no ink" };
    // Computed now, while the crop is at hand: the model needs it when the subject has few references.
    const variantRow = variantDistanceRow(core, crop);
    return { features, variantRow, quality, page: pageNo, box: best.box, thumbnailPng };
  } catch (err) {
    if (isVerifyError(err)) return { rejected: err.code, detail: err.message };
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------------------
// Checks

/**
 * The model holds no usable (non-outlier) reference, so nothing can be compared with. The policy's
 * min_references rule (domain/policy.ts hasEnoughReferences) is applied by the caller, before decoding.
 */
export class InsufficientReferencesError extends Error {
  readonly code = "insufficient_references";
  constructor(
    readonly have: number,
    readonly need: number,
  ) {
    super(`the subject has ${have} usable reference(s); the policy needs at least ${need}`);
    this.name = "InsufficientReferencesError";
  }
}

export interface DeviatingRegion {
  /** In page pixels. */
  box: Box;
  /** Zone distance over the mean zone distance (1 = typical). */
  deviation: number;
}

export interface CheckedSignature extends FoundSignature {
  /** Calibrated similarity to the subject's references, in [0, 1]; null when the crop was unreadable. */
  score: number | null;
  quality: number;
  unreadable?: boolean;
  bestReferenceId?: string;
  regions?: DeviatingRegion[];
}

export interface CheckOutcome {
  decision: Decision;
  /** The best signature's score; null for UNREADABLE and NO_SIGNATURE. */
  score: number | null;
  pages: number;
  signatures: CheckedSignature[];
  /** `index` of the best-matching signature. */
  bestSignature: number | null;
  bestReferenceId: string | null;
  /** The regions of the best signature that deviated most from its best reference. */
  regions: DeviatingRegion[];
  quality: QualityReport;
  referenceCount: number;
  /** Same order as `signatures`: grey PNG crops for reviewers. */
  cropPngs: Uint8Array[];
  timings: StageTimings;
  /** With a template: for each page searched with it, whether the page registered to the blank. */
  registration: { page: number; registered: boolean }[];
}

export async function checkDocument(
  core: Core,
  bytes: Uint8Array,
  model: ReferenceModel,
  policy: CheckPolicy,
  opts: Omit<AnalyseOptions, "qualityFloor">,
  onEvent?: (e: CheckEvent) => void | Promise<void>,
): Promise<CheckOutcome> {
  const active = model.refs.filter((r) => !r.outlier).length;
  if (active < 1) throw new InsufficientReferencesError(active, 1);

  // The located event is held back until the words of one name are joined, or a page where nothing was
  // found has had its last look (below), so that it lists the signatures the result does.
  let locatedHeld = false;
  const a = await analyseDocument(
    bytes,
    { ...opts, joinRuns: opts.joinRuns ?? true, wholeInkIfNone: opts.wholeInkIfNone ?? true, qualityFloor: policy.quality_floor },
    async (e) => {
      if (e.type === "located") locatedHeld = true;
      else await onEvent?.(e);
    },
  );
  const announce = async (signatures: FoundSignature[]) => {
    if (locatedHeld) await onEvent?.({ type: "located", data: { signatures } });
    await onEvent?.({ type: "comparing", data: { reference_count: active } });
  };
  const base = {
    pages: a.pages,
    quality: a.quality,
    referenceCount: active,
    timings: a.timings,
    registration: a.registration ?? [],
    bestReferenceId: null,
    regions: [],
  };
  const checked = (s: FoundSignature, q: QualityReport): CheckedSignature => ({
    ...s,
    score: null,
    quality: q.score,
    ...(q.score < policy.quality_floor ? { unreadable: true } : {}),
  });
  let located = a.signatures.map((s, i) => checked(s, a.perSignatureQuality[i]));
  let cropPngs = a.cropPngs;
  const compare = (s: CheckedSignature, crop: Raster) => {
    if (s.unreadable) return;
    let t = now();
    // Only the vector this model compares it by (check-features.ts).
    const features = extractForCheck(core, crop, model);
    a.timings.features += now() - t;
    t = now();
    const c = compareToModel(core, features, model);
    a.timings.compare += now() - t;
    s.score = round4(c.score);
    s.bestReferenceId = c.bestRefId;
    s.regions = c.regions.map((r) => ({ box: toPageBox(r.box, s.box), deviation: round4(r.deviation) }));
  };
  if (a.noSignature && a.wholeInk && a.wholeInk.quality.score >= policy.quality_floor) {
    // The page search found nothing; its whole ink is a signature only if it is the subject's: at least
    // `flag` against the references, and never less than WHOLE_INK_MIN_SCORE, whatever the policy's `flag`.
    // Below that it stays NO_SIGNATURE, as the search said, so a page of type (free) is never billed.
    const whole = a.wholeInk;
    const s = checked(whole.signature, whole.quality);
    try {
      compare(s, whole.crop);
    } catch (err) {
      // The look is optional: references that cannot be compared leave the search's answer standing.
      if (!(err instanceof ModelMismatchError)) throw err;
      s.score = null;
    }
    if ((s.score ?? 0) >= Math.max(policy.thresholds.flag, WHOLE_INK_MIN_SCORE)) {
      located = [{ ...s, index: 0 }];
      cropPngs = whole.cropPng ? [whole.cropPng] : [];
      await announce(located);
      return outcome(located, cropPngs);
    }
  }
  if (a.unreadable || a.noSignature) {
    if (locatedHeld) await onEvent?.({ type: "located", data: { signatures: a.signatures } });
    return a.unreadable
      ? { ...base, cropPngs, decision: "UNREADABLE", score: null, signatures: located, bestSignature: null }
      : { ...base, cropPngs, decision: "NO_SIGNATURE", score: null, signatures: [], bestSignature: null };
  }

  const runs = (a.runs ?? []).filter((r) => r.parts.some((p) => !located[p].unreadable));
  if (runs.length === 0) {
    await announce(a.signatures);
    located.forEach((s, i) => compare(s, a.crops[i]));
  } else {
    // Parts and unions are compared before the stream hears of them (a few comparisons, each about as much
    // as one signature). Should a comparison fail, the stream still says what was found, as before.
    let chosen: ReturnType<typeof chooseRuns>;
    const unions = runs.map((r) => checked(r.signature, r.quality));
    try {
      located.forEach((s, i) => compare(s, a.crops[i]));
      unions.forEach((u, i) => compare(u, runs[i].crop));
      chosen = chooseRuns(
        runs,
        located.map((s) => s.score),
        unions.map((u) => u.score),
      );
    } catch (err) {
      await announce(a.signatures);
      throw err;
    }
    // Each kept union takes the place of its first part in reading order; its other parts go.
    const at = new Map<number, number>();
    const gone = new Set<number>();
    for (const c of chosen) {
      const parts = runs[c.run].parts;
      at.set(Math.min(...parts), c.run);
      for (const p of parts) gone.add(p);
    }
    const list: CheckedSignature[] = [];
    const pngs: Uint8Array[] = [];
    // Crops are rendered for every box and every union, or for none (`renderCrops`).
    const rendered = a.cropPngs.length > 0;
    for (let i = 0; i < located.length; i++) {
      const run = at.get(i);
      if (run !== undefined) {
        list.push({ ...unions[run], index: list.length });
        if (rendered) pngs.push(runs[run].cropPng ?? missingCrop());
      } else if (!gone.has(i)) {
        list.push({ ...located[i], index: list.length });
        if (rendered) pngs.push(a.cropPngs[i]);
      }
    }
    located = list;
    cropPngs = pngs;
    await announce(located);
  }
  return outcome(located, cropPngs);

  /** The decision on the compared signatures: the best one's score. */
  function outcome(signatures: CheckedSignature[], pngs: Uint8Array[]): CheckOutcome {
    let best: CheckedSignature | undefined;
    for (const s of signatures) if (s.score !== null && (!best || s.score > (best.score ?? 0))) best = s;
    if (!best) return { ...base, cropPngs: pngs, decision: "UNREADABLE", score: null, signatures, bestSignature: null };
    const score = best.score ?? 0;
    return {
      ...base,
      cropPngs: pngs,
      decision: decide(score, policy.thresholds),
      score,
      signatures,
      bestSignature: best.index,
      bestReferenceId: best.bestReferenceId ?? null,
      regions: best.regions ?? [],
    };
  }
}

function missingCrop(): never {
  throw new Error("checkDocument: a joined name has no crop while its parts have one");
}

/**
 * The least score at which a page's whole ink, looked at because the page search found nothing, is taken
 * for the subject's signature: the default `flag`. A policy's lower `flag` (down to 0) would otherwise
 * make a signature, and a billed check, of any page of type.
 */
const WHOLE_INK_MIN_SCORE = DEFAULT_THRESHOLDS.flag;

/** A box in [0, 1] coordinates of a crop, in page pixels. */
function toPageBox(r: Box, crop: Box): Box {
  return {
    x: Math.round(crop.x + r.x * crop.w),
    y: Math.round(crop.y + r.y * crop.h),
    w: Math.max(1, Math.round(r.w * crop.w)),
    h: Math.max(1, Math.round(r.h * crop.h)),
  };
}

function round4(v: number): number {
  return Math.round(v * 10000) / 10000;
}
