/**
 * Printed rules through a located signature, painted out before its features are taken.
 *
 * The locator removes a form's lines from its working copy to find the signature, but the crop is cut
 * from the page as scanned, so the line the person signed on crosses it from edge to edge. The
 * features see that line as a long, dead-straight stroke through the lower part of the signature,
 * which the same writer's references (enrolled bare, or signed on another form) do not have.
 *
 * A rule is told from a pen stroke in two ways. It is straight and unbroken over most of the box's
 * width: it covers nearly every column of one or two rows in each of several consecutive strips, and
 * those rows lie on one straight line (a scan's skew tilts it). And it runs on past the signature, on
 * both sides or far on one: the box is the signature's ink, so a stroke of the signature ends inside it.
 * Some writers strike a line through the name as straight as print (one Dutch writer in twenty), and a
 * long straight tail can be taken for a rule by the locator and cut at the box; those strokes stay.
 * Only columns where the ink across the rule is no thicker than the rule itself are painted out; where a
 * stroke crosses it the ink is longer than that and stays whole. Vertical rules are left: a signature is
 * rarely crossed by one, and a frame beside it lies outside the box.
 */
import { otsu } from "./morphology";
import { cropRaster } from "./render";
import type { Box, Raster } from "./types";

/** Width of a strip in pixels (at least four strips per box). */
const STRIP = 64;
/** Share of a strip's columns with ink in a row (or the row below) for that row to be a rule's. */
const COVER = 0.9;
/**
 * A rule spans at least this share of the box's width, and at least three strips: a signing line is
 * longer than the signature, and a hand's long stroke stays that straight only over part of its length.
 */
const MIN_SPAN = 0.8;
/** Distance in pixels from the fitted line that a strip's rule row may lie (skew within a strip, JPEG). */
const MAX_RESIDUAL = 2;
/** Steepest rule kept: about 4 degrees, past any scan's skew. */
const MAX_SLOPE = 0.07;
/** Least contrast between paper and ink (grey levels) for there to be anything to paint out. */
const MIN_CONTRAST = 40;
/** Thickest rule painted out, as a share of the box's height (at least 4 px). */
const MAX_THICK = 0.06;
/** Least margin beside the box, in pixels, over which a rule must be seen to carry on past it. */
const MIN_BEYOND = 12;
/** How far past the box a rule runs on both sides (share of the box's width, at least MIN_BEYOND)... */
const BOTH_SIDES = 0.1;
/** ...or on one side. */
const ONE_SIDE = 0.5;
/** How far to each side of the box `ruleWindow` reaches, as a share of its width: past ONE_SIDE. */
const REACH = 0.6;

interface Candidate {
  strip: number;
  y: number;
}

/**
 * The box's pixels with the printed horizontal rules that run through it painted over with the paper. `window`
 * is the page around the box (`ruleWindow`), `box` is in window pixels; a rule is only recognised by
 * running on past the box into it.
 */
export function eraseRules(window: Raster, box: Box): Raster {
  const { width: w, height: h, data } = window;
  const strips = Math.floor(w / STRIP);
  if (box.w < 4 * STRIP || h < 8) return cropRaster(window, box);
  const t = otsu(data);
  if (!hasContrast(data, t)) return cropRaster(window, box);
  const ink = new Uint8Array(data.length);
  for (let i = 0; i < data.length; i++) ink[i] = data[i] < t ? 1 : 0;

  // A printed rule is thin against the signature; a shadow across a photo is not.
  const maxThick = Math.max(4, Math.round(MAX_THICK * box.h));
  const candidates = ruleRows(ink, w, h, strips, maxThick);
  const lines = chains(candidates, strips, w, box).filter((l) => runsPast(ink, w, h, l, box));
  if (lines.length === 0) return cropRaster(window, box);
  const out = data.slice();
  for (const line of lines)
    paintOut(out, ink, w, h, { ...line, x0: Math.max(line.x0, box.x), x1: Math.min(line.x1, box.x + box.w) }, maxThick);
  return cropRaster({ width: w, height: h, data: out }, box);
}

/**
 * The window `eraseRules` needs around a located box: the padded box, widened to each side by REACH of
 * the box's width (clipped to the page), so that a rule can be seen running on past the signature.
 */
export function ruleWindow(box: Box, padded: Box, page: { width: number; height: number }): Box {
  const x0 = Math.max(0, Math.min(padded.x, Math.floor(box.x - REACH * box.w)));
  const x1 = Math.min(page.width, Math.max(padded.x + padded.w, Math.ceil(box.x + box.w + REACH * box.w)));
  return { x: x0, y: padded.y, w: x1 - x0, h: padded.h };
}

function hasContrast(data: Uint8Array, t: number): boolean {
  let dark = 0,
    nDark = 0,
    light = 0,
    nLight = 0;
  for (let i = 0; i < data.length; i += 7) {
    if (data[i] < t) {
      dark += data[i];
      nDark++;
    } else {
      light += data[i];
      nLight++;
    }
  }
  return nDark > 0 && nLight > 0 && light / nLight - dark / nDark >= MIN_CONTRAST;
}

/** Per strip, the centre of each run of rows whose ink (with the row below) covers nearly every column. */
function ruleRows(ink: Uint8Array, w: number, h: number, strips: number, maxThick: number): Candidate[] {
  const out: Candidate[] = [];
  const sw = Math.floor(w / strips);
  const need = Math.ceil(COVER * sw);
  for (let s = 0; s < strips; s++) {
    const x0 = s * sw;
    let runStart = -1;
    for (let y = 0; y <= h; y++) {
      let on = false;
      if (y < h - 1) {
        let n = 0;
        const a = y * w + x0,
          b = a + w;
        for (let x = 0; x < sw; x++) n += ink[a + x] | ink[b + x];
        on = n >= need;
      }
      if (on && runStart < 0) runStart = y;
      else if (!on && runStart >= 0) {
        if (y - runStart <= maxThick) out.push({ strip: s, y: (runStart + y) / 2 });
        runStart = -1;
      }
    }
  }
  return out;
}

interface RuleLine {
  /** y = a + b * x, x in window pixels. */
  a: number;
  b: number;
  x0: number;
  x1: number;
}

/** Straight chains of rule rows across consecutive strips, each a line fitted through them. */
function chains(cands: Candidate[], strips: number, w: number, box: Box): RuleLine[] {
  const sw = Math.floor(w / strips);
  const byStrip: Candidate[][] = Array.from({ length: strips }, () => []);
  for (const c of cands) byStrip[c.strip].push(c);
  const used = new Set<Candidate>();
  const lines: RuleLine[] = [];
  const reach = MAX_RESIDUAL + MAX_SLOPE * sw;
  for (let s = 0; s < strips; s++) {
    for (const start of byStrip[s]) {
      if (used.has(start)) continue;
      const chain = [start];
      let last = start;
      // One strip may be missing between two of the chain's: where a stroke lies along the rule, the
      // ink there is thicker than a rule.
      for (let n = s + 1; n < strips && n - last.strip <= 2; n++) {
        let next: Candidate | undefined;
        const within = reach * (n - last.strip);
        for (const c of byStrip[n])
          if (!used.has(c) && Math.abs(c.y - last.y) <= within && (!next || Math.abs(c.y - last.y) < Math.abs(next.y - last.y))) next = c;
        if (!next) continue;
        chain.push(next);
        last = next;
      }
      // The chain covers most of the box's width (it may run on past it).
      const inBox = Math.min(box.x + box.w, (last.strip + 1) * sw) - Math.max(box.x, start.strip * sw);
      if (last.strip - start.strip + 1 < 3 || inBox < MIN_SPAN * box.w) continue;
      const fit = fitLine(chain.map((c) => [(c.strip + 0.5) * sw, c.y]));
      if (Math.abs(fit.b) > MAX_SLOPE) continue;
      if (chain.some((c) => Math.abs(fit.a + fit.b * (c.strip + 0.5) * sw - c.y) > MAX_RESIDUAL)) continue;
      for (const c of chain) used.add(c);
      // A chain that starts or ends in the first or last strip runs on to the window's edge.
      const x0 = chain[0].strip === 0 ? 0 : chain[0].strip * sw;
      const x1 = last.strip === strips - 1 ? w : (last.strip + 1) * sw;
      lines.push({ ...fit, x0, x1 });
    }
  }
  return lines;
}

/**
 * The rule carries on past the signature: on both sides (a line longer than the name signed on it), or
 * on one side for at least half the box's width (a line the signature starts at the end of). The box is
 * the signature's ink as the locator found it, so a stroke of the signature ends inside it; a long pen
 * stroke the locator took for a rule and cut runs on past one side only, and not that far.
 */
function runsPast(ink: Uint8Array, w: number, h: number, line: RuleLine, box: Box): boolean {
  const marginL = box.x,
    marginR = w - (box.x + box.w);
  const left = line.x0 <= box.x ? runOn(ink, w, h, line, box.x - 1, -1) : 0;
  const right = line.x1 >= box.x + box.w ? runOn(ink, w, h, line, box.x + box.w, 1) : 0;
  const some = Math.max(MIN_BEYOND, BOTH_SIDES * box.w);
  const both = marginL >= MIN_BEYOND && marginR >= MIN_BEYOND && left >= Math.min(some, marginL) && right >= Math.min(some, marginR);
  return both || Math.max(left, right) >= ONE_SIDE * box.w;
}

/** Columns from `from` (stepping by `dir`) to the last with ink on the line, across gaps of up to 3 px. */
function runOn(ink: Uint8Array, w: number, h: number, line: RuleLine, from: number, dir: 1 | -1): number {
  let last = from - dir,
    gap = 0;
  for (let x = from; x >= 0 && x < w; x += dir) {
    const yc = Math.round(line.a + line.b * x);
    let on = false;
    for (let y = Math.max(0, yc - MAX_RESIDUAL - 1); y <= Math.min(h - 1, yc + MAX_RESIDUAL + 1) && !on; y++) on = ink[y * w + x] === 1;
    if (on) {
      last = x;
      gap = 0;
    } else if (++gap > 3) break;
  }
  return (last - from) * dir + 1;
}

function fitLine(points: number[][]): { a: number; b: number } {
  const n = points.length;
  let sx = 0,
    sy = 0,
    sxx = 0,
    sxy = 0;
  for (const [x, y] of points) {
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const d = n * sxx - sx * sx;
  const b = d === 0 ? 0 : (n * sxy - sx * sy) / d;
  return { a: (sy - b * sx) / n, b };
}

/**
 * Paints the rule out column by column, between its x0 and x1 (the box: nothing else is kept). The rule's thickness is the median length of the ink run it
 * lies in; a column whose run is longer than that (plus a pixel each side for the scan's blur) is a
 * stroke crossing the rule and is kept. Painted pixels take the lighter of the paper just above and
 * just below, so the crop's paper tone is kept.
 */
function paintOut(out: Uint8Array, ink: Uint8Array, w: number, h: number, line: RuleLine, maxThick: number): void {
  const runs: Array<[number, number, number]> = [];
  for (let x = line.x0; x < line.x1; x++) {
    const yc = Math.round(line.a + line.b * x);
    let y = -1;
    for (let d = 0; d <= MAX_RESIDUAL && y < 0; d++) {
      if (yc - d >= 0 && yc - d < h && ink[(yc - d) * w + x]) y = yc - d;
      else if (yc + d >= 0 && yc + d < h && ink[(yc + d) * w + x]) y = yc + d;
    }
    if (y < 0) continue;
    let top = y,
      bottom = y;
    while (top > 0 && ink[(top - 1) * w + x]) top--;
    while (bottom < h - 1 && ink[(bottom + 1) * w + x]) bottom++;
    runs.push([x, top, bottom]);
  }
  if (runs.length === 0) return;
  const lengths = runs.map(([, t, b]) => b - t + 1).sort((p, q) => p - q);
  const thick = lengths[lengths.length >> 1];
  if (thick > maxThick) return;
  for (const [x, top, bottom] of runs) {
    if (bottom - top + 1 > thick + 2) continue;
    const above = out[Math.max(0, top - 2) * w + x];
    const below = out[Math.min(h - 1, bottom + 2) * w + x];
    const paper = Math.max(above, below);
    for (let y = Math.max(0, top - 1); y <= Math.min(h - 1, bottom + 1); y++) if (out[y * w + x] < paper) out[y * w + x] = paper;
  }
}
