/**
 * Finding signatures on a page.
 *
 * Without a template, the page is shrunk to a working copy (long side about WORK_SIDE px), its paper is
 * flattened (so a phone photo's uneven light reads as an even page), it is binarised and levelled if
 * askew, and classify.ts sorts its ink into print, rules, stamps and handwriting and proposes scored
 * boxes. A bare `signature_image` is all signature: the box is around all its ink. With a template,
 * template.ts registers the page to the blank; a page that does not register is searched without it.
 *
 * Conventions: `page` (in the target and in results) is 1-based, as people and documents number pages;
 * `index` is 0-based across the document, in reading order (page, then top to bottom, then left to right).
 * `target.box` is in page pixels and applies to the target page, or to every page when no page is given.
 */
import { classifyPage, Kind, MIN_CONFIDENCE, type PageClassification } from "./classify";
import { labelComponents } from "./components";
import { clip, inkMask, isFrameEdge, overlaps, toPage, unionBox, withFaintInk, workFactor, type Found } from "./ink-mask";
import { locateWithTemplate, type TemplateModel } from "./template";
import { VerifyError, type Box, type Raster } from "./types";

export type InputType = "photo" | "scan" | "form" | "signature_image" | "other";

export interface LocateTarget {
  /** 1-based page number. */
  page?: number;
  /** A rectangle in page pixels. */
  box?: Box;
}

export interface LocateOptions {
  /**
   * The caller's input_type: `signature_image` takes all the ink as one signature; anything else searches.
   * None given, or `scan`: an image no larger than BARE_MAX_SIDE that `looksBare` (no print, no stamp of a
   * stamp's size, a signature there) is taken as a bare signature image too. A scan's frame is the platen's
   * white; a `photo`'s can hold the table, fingers and shadows, so a photo is always searched.
   */
  inputType?: string;
  target?: LocateTarget;
  template?: TemplateModel;
  /** Told, for each page searched with a template, whether the page registered to the blank. */
  onRegistration?: (page: number, registered: boolean) => void;
  /**
   * The pages are decoded at 1/scale of a width x height page (the scaled JPEG decode). The working copies
   * are the ones the full page would give, and boxes (and target.box) are in full-page pixels.
   * Not with a template (template registration works on the page as decoded).
   */
  scaled?: PageScale;
  /**
   * A live preview frame (pipeline-frame.ts): it is followed by the next within a fraction of a second,
   * and its box only guides the person holding the phone; the capture itself is checked without this.
   * So the cheap path: when nothing is found, no second look for faint ink (until the user holds up the
   * paper most frames have no signature, and the second look, another sorting of the page's ink, would
   * be paid on most frames for nothing); and what a half-size look is sure of is taken as it is, not
   * completed at full size (locateOnPage), which on the speed bench's 640 px frame takes 17 ms instead of 3.
   */
  preview?: boolean;
}

export interface PageScale {
  scale: number;
  width: number;
  height: number;
}

export interface LocatedSignature {
  /** 0-based across the document, in reading order. */
  index: number;
  /** 1-based page number. */
  page: number;
  /** In page pixels. */
  box: Box;
  /** 0..1: how sure the locator is that this box holds a signature. */
  confidence: number;
  /** With a registered template: the index of the template box (in `TemplateModel.boxes`) it was found in. */
  zone?: number;
}

export function locateSignatures(pages: Raster[], opts: LocateOptions = {}): LocatedSignature[] {
  const target = opts.target ?? {};
  if (target.page !== undefined && (!Number.isInteger(target.page) || target.page < 1 || target.page > pages.length)) {
    throw new VerifyError("page_out_of_range", `target.page ${target.page} is outside the document's ${pages.length} page(s)`, target.page);
  }
  const pageNumbers = target.page !== undefined ? [target.page] : pages.map((_, i) => i + 1);
  const found: Array<Omit<LocatedSignature, "index">> = [];
  if (opts.scaled && opts.template) throw new Error("locateSignatures: a template needs the page at full resolution");
  for (const pageNo of pageNumbers) {
    const page = pages[pageNo - 1];
    const view: PageView = opts.scaled
      ? { raster: page, ...opts.scaled }
      : { raster: page, scale: 1, width: page.width, height: page.height };
    const region = clip(target.box ?? { x: 0, y: 0, w: view.width, h: view.height }, view);
    if (!region) continue;
    // A page that will not register to the template is still searched, without it.
    const templated = opts.template ? locateWithTemplate(page, opts.template, region) : null;
    if (opts.template) opts.onRegistration?.(pageNo, templated !== null);
    const boxes: Array<Found & { zone?: number }> =
      templated ??
      (opts.inputType === "signature_image"
        ? locateWholeInk(view, region)
        : locateOnPage(
            view,
            region,
            opts.preview ?? false,
            (opts.inputType === undefined || opts.inputType === "scan") && Math.max(region.w, region.h) <= BARE_MAX_SIDE,
          ));
    boxes.sort(readingOrder);
    for (const b of boxes)
      found.push({ page: pageNo, box: b.box, confidence: b.confidence, ...(b.zone !== undefined ? { zone: b.zone } : {}) });
  }
  return found.map((f, index) => ({ index, ...f }));
}

/** Top to bottom; side by side (centres within half a height) left to right. */
function readingOrder(a: Found, b: Found): number {
  const dy = a.box.y + a.box.h / 2 - (b.box.y + b.box.h / 2);
  return Math.abs(dy) < 0.5 * Math.min(a.box.h, b.box.h) ? a.box.x - b.box.x : dy;
}

/** A page as decoded (possibly at 1/scale) and the size of the full page. */
interface PageView extends PageScale {
  raster: Raster;
}

/** A bare signature image: the signature is all the ink there is, less specks and frame lines. */
function locateWholeInk(view: PageView, region: Box): Found[] {
  const page = { width: view.width, height: view.height };
  // No line removal: a signature's underline can be as long and straight as a rule. Frame edges go below.
  const m = inkMask(view.raster, region, { pageScale: view.scale });
  const { labels, components } = labelComponents(m.mask, m.w, m.h, 3);
  const biggest = components.reduce((a, c) => Math.max(a, c.area), 0);
  const kept = components.filter((c) => c.area >= Math.max(4, biggest * 0.01) && !isFrameEdge(c, labels, m.w, m.h));
  if (kept.length === 0) return [];
  const b = unionBox(kept);
  const ink = kept.reduce((s, c) => s + c.area, 0);
  const share = ink / (m.w * m.h);
  const confidence = biggest < 30 ? 0.3 : share < 0.001 ? 0.5 : share > 0.5 ? 0.4 : 0.9;
  return [{ box: toPage(b, m, region, page), confidence }];
}

/**
 * The longest side (px) of an image that, sent without an input_type and holding no print or stamp, is taken
 * for a bare signature image: a signature cut out at 300 dpi, not a page.
 */
export const BARE_MAX_SIDE = 2000;

/**
 * All the ink of a small image in one box, as a bare signature image is taken (less specks and frame
 * lines), with the confidence a bare image's box gets, or null when there is none worth a look. For the
 * check's last look (pipeline.ts): a page search that found nothing may have taken a name for a line of
 * type, which only the subject's references can tell apart. Only for images up to BARE_MAX_SIDE, where the
 * whole can be one signature.
 */
export function wholeInkBox(page: Raster): Found | null {
  if (Math.max(page.width, page.height) > BARE_MAX_SIDE) return null;
  const view: PageView = { raster: page, scale: 1, width: page.width, height: page.height };
  const found = locateWholeInk(view, { x: 0, y: 0, w: page.width, h: page.height }).filter((f) => f.confidence >= MIN_CONFIDENCE);
  return found[0] ?? null;
}

/**
 * A signature's loops can fit the ring test, and take the pieces inside them along as a "stamp": up to 0.2
 * of the ink on the development images (every 4th Dutch and every 10th Bengali writer, at most 0.16 and
 * 0.20). A real stamp beside a signature is more: 0.32 to 0.58 of the ink in a window around the signature
 * on the test forms.
 */
const STAMP_SPECKS = 0.25;

/**
 * Sent without an input_type, is this small image a bare signature, all its ink the signature? The page
 * search's cuts would otherwise leave parts of it out, or find nothing. Yes when nothing on it was taken
 * for print, and no stamp holds more than STAMP_SPECKS of its ink; and the signature is there: something
 * was proposed, or one piece of ink spans a good part of the image (a tight crop, where the signature is
 * too wide for a candidate). A name written in separate letters, which lines up like a row of type, is
 * told from it by classify.ts (`findTextRows`, a line of letters alone on an image).
 */
function looksBare(c: PageClassification, m: { w: number; h: number }): boolean {
  let ink = 0,
    stamp = 0,
    spans = false;
  for (let i = 0; i < c.components.length; i++) {
    const comp = c.components[i],
      k = c.kinds[i];
    if (k === Kind.Text) return false;
    if (k === Kind.Line) {
      // A thin-pen signature that runs to the image's edges can pass for a sparse frame line; a frame's
      // edge lies along a side, where a signature spreads over the image. locateWholeInk reads the image
      // unlevelled and keeps it where it does not touch the frame there (15 of the 18 Dutch development
      // images that found nothing for this reason); where it does, it is dropped there too.
      if (Math.min(comp.w, comp.h) >= 0.15 * Math.max(comp.w, comp.h) && comp.w >= 0.5 * m.w && comp.h >= 0.25 * m.h) spans = true;
      continue;
    }
    ink += comp.area;
    if (k === Kind.Stamp) stamp += comp.area;
    if (comp.w >= 0.5 * m.w || comp.h >= 0.5 * m.h) spans = true;
  }
  if ((ink === 0 && !spans) || stamp > STAMP_SPECKS * ink) return false;
  return c.found.length > 0 || spans;
}

/**
 * A page or crop of a page that may hold print, lines, stamps and any number of signatures. With
 * `bareIfUnprinted` (no input_type or `scan`, a small image) an image that `looksBare` is a bare signature: searched
 * as a page, the search's cuts (a first letter standing apart, an underline taken for a rule) would leave
 * part of it out (a third of the Dutch development images lost more than 2% of their ink).
 */
function locateOnPage(view: PageView, region: Box, preview: boolean, bareIfUnprinted = false): Found[] {
  const page = { width: view.width, height: view.height };
  const pageScale = view.scale;
  // A small image (a live-capture frame, a close-up photo) is looked at half size first: close up, a
  // signature is big and sure there (a name written in separate letters joins up), and the full size then
  // completes it (below).
  let sure: Found[] | null = null;
  if (workFactor(region) === 1 && Math.max(region.w, region.h) >= 400) {
    const half = inkMask(view.raster, region, { factor: 2, deskew: true, pageScale });
    const looked = classifyPage(half).found;
    if (looked.length > 0 && looked.every((f) => f.box.h >= 40 && f.confidence >= 0.8)) {
      sure = looked.map((f) => ({ box: toPage(f.box, half, region, page), confidence: f.confidence }));
      if (preview && !bareIfUnprinted) return sure;
    }
  }
  const m = inkMask(view.raster, region, { deskew: true, pageScale });
  const strict = classifyPage(m);
  // Whether an image is bare is the full-size look's call: at half size a loop's specks pass for a stamp
  // more often, a tight crop's letters for print, and a photographed line of type for a line of writing.
  // Bare, its whole ink is the signature, unless all it holds is specks (or one blot), which the page
  // search may still read.
  if (bareIfUnprinted && looksBare(strict, m)) {
    const whole = locateWholeInk(view, region).filter((f) => f.confidence >= MIN_CONFIDENCE);
    if (whole.length > 0) return whole;
  }
  if (sure) {
    // What the half size is sure of, the full size completes: at half size a thin pen's strokes go as
    // ruling lines and frame edges and its words fall apart (its boxes alone left out more than 2% of the
    // ink on 41 of 440 Dutch signatures photographed alone, completed on 3: docs/accuracy.md, "A lone
    // signature sent as a photo"), and at full size a name can fall apart into its words instead. So each
    // sure box takes in the full size's boxes that cross it. The full size's other finds are dropped:
    // there, a blurred photo's title can merge into word-sized blobs that pass for handwriting.
    const fine = strict.found.map((f) => toPage(f.box, m, region, page));
    return joinCrossing(sure.map((s) => ({ box: unionBox([s.box, ...fine.filter((b) => overlaps(b, s.box))]), confidence: s.confidence })));
  }
  let found = strict.found;
  let used = m;
  if (found.length === 0 && !preview) {
    // Nothing there, or a thin pen photographed out of focus: most of its strokes are paler than the
    // threshold allows, and what is left reads as specks. Look again keeping the faint ink that continues
    // ink. Only then, because on a page that has a signature the faint halos would just thicken print;
    // and only where the first look did not already take the ink for print or a stamp, whose halos can
    // join marks into shapes that pass for handwriting.
    used = withFaintInk(m);
    found = classifyPage(used).found.filter((f) => !mostlyPrinted(f.box, strict));
  }
  return found.map((f) => ({ box: toPage(f.box, used, region, page), confidence: f.confidence }));
}

/** Boxes that cross are one: two sure boxes that one full-size box joined (a name the half size split). */
function joinCrossing(found: Found[]): Found[] {
  const out = [...found];
  // Until none cross: a union can come to cross a box that neither of its parts crossed.
  for (let merged = true; merged; ) {
    merged = false;
    for (let i = 0; i < out.length && !merged; i++) {
      for (let j = i + 1; j < out.length; j++) {
        if (!overlaps(out[i].box, out[j].box)) continue;
        out[i] = { box: unionBox([out[i].box, out[j].box]), confidence: Math.max(out[i].confidence, out[j].confidence) };
        out.splice(j, 1);
        merged = true;
        break;
      }
    }
  }
  return out;
}

/** Most of the ink the strict look saw in `box` (by component centre) it took for print or a stamp. */
function mostlyPrinted(box: Box, c: PageClassification): boolean {
  let printed = 0,
    all = 0;
  c.components.forEach((comp, i) => {
    const cx = comp.x + comp.w / 2,
      cy = comp.y + comp.h / 2;
    if (cx < box.x || cx > box.x + box.w || cy < box.y || cy > box.y + box.h) return;
    all += comp.area;
    if (c.kinds[i] === Kind.Text || c.kinds[i] === Kind.Stamp) printed += comp.area;
  });
  return printed > 0.3 * all;
}
