/**
 * Image quality: is this page, crop or preview frame good enough to judge a signature on?
 *
 * Everything is measured on a working copy at most WORK_SIDE pixels on its long side, so a 640 px preview
 * frame costs a few milliseconds and a 300 dpi page costs the same as its thumbnail. The figures follow
 * what capture SDKs use (Laplacian variance, mean luminance, RMS contrast, dpi, ink share); the score is
 * built from measures that do not depend on how much ink or contrast the content happens to have:
 *
 * - sharpness: the width of the edges. For an edge blurred by a Gaussian of sigma s, the ratio of Laplacian
 *   energy to gradient energy on the edge is 1/(2 s^2), whatever the edge's contrast, so sqrt of that
 *   ratio gives the blur in working pixels.
 * - exposure: the paper level (a high percentile) and the ink level (a low percentile), not the mean,
 *   because a clean scan of a signature is almost all white and that is not over-exposure.
 * - contrast: the span between paper and ink.
 * - resolution: the stroke width in source pixels (a pen stroke is about 0.5 mm), or the page size for
 *   scans and forms.
 */
import { shrinkScaled } from "./morphology";
import type { Box, Raster } from "./types";

/** `signature_cut_off` comes only from a live frame's located signature (pipeline-frame.ts), never from quality alone. */
export type CaptureCue =
  | "ready"
  | "no_signature_in_view"
  | "too_dark"
  | "too_bright"
  | "low_contrast"
  | "hold_steady"
  | "move_closer"
  | "signature_cut_off";

export interface QualityReport {
  /** In [0, 1]; below the policy's quality floor the decision is UNREADABLE. */
  score: number;
  /** The single cue to show a person capturing, the most pressing first. */
  cue: CaptureCue;
  /** Every cue that applies, most pressing first (["ready"] when none). */
  cues: CaptureCue[];
  figures: QualityFigures;
}

export interface QualityFigures {
  /** Variance of the Laplacian on the working copy (grey levels squared). */
  laplacian_variance: number;
  /** Estimated blur (Gaussian sigma) in working-copy pixels. */
  blur_px: number;
  /** Mean luminance, 0 (black) to 1 (white). */
  exposure: number;
  /** Paper level and ink level (98th and 0.3th percentiles), 0 to 1. */
  paper_level: number;
  ink_level: number;
  /** RMS contrast (standard deviation of luminance, 0 to 1). */
  contrast: number;
  /** Estimated resolution in dots per inch of the source, null when it cannot be told. */
  resolution_dpi: number | null;
  /** Share of ink pixels in the analysed area. */
  ink_share: number;
  /** The component scores the overall score is built from. */
  sharpness_score: number;
  exposure_score: number;
  contrast_score: number;
  resolution_score: number;
}

export interface QualityOptions {
  /** The caller's input_type (`photo`, `scan`, `form`, `signature_image`, ...): guides the dpi estimate. */
  inputType?: string;
  /** Analyse only this part of the raster (a located signature). */
  region?: Box;
  /** "page": a whole document page; "crop": a signature crop; "frame": a live preview frame. */
  kind?: "page" | "crop" | "frame";
  /**
   * The raster is a width x height page decoded at 1/scale (the scaled JPEG decode): figures in source
   * pixels (dpi, stroke width) are reported for the real page.
   */
  source?: { scale: number; width: number; height: number };
}

/** Long side of the working copy. */
export const WORK_SIDE = 640;

/** Typical width of a pen stroke, in inches (about 0.5 mm). */
const STROKE_INCH = 0.5 / 25.4;

export function assessQuality(raster: Raster, opts: QualityOptions = {}): QualityReport {
  const source = opts.source && opts.source.scale > 1 && !opts.region ? opts.source : undefined;
  const region = clampBox(opts.region ?? { x: 0, y: 0, w: raster.width, h: raster.height }, raster);
  // A page decoded at a reduced scale gets the working copy the full page would give (same size).
  const long = source ? Math.max(source.width, source.height) : Math.max(region.w, region.h);
  const factor = Math.max(1, Math.ceil(long / WORK_SIDE));
  const whole = region.x === 0 && region.y === 0 && region.w === raster.width && region.h === raster.height;
  const work = source
    ? shrinkScaled(raster, factor, { x: 0, y: 0, w: source.width, h: source.height }, source.scale)
    : factor === 1 && whole
      ? raster
      : downscale(raster, region, factor);
  const kind = opts.kind ?? (opts.region ? "crop" : "page");
  const { width: w, height: h, data } = work;
  const n = w * h;

  const hist = new Uint32Array(256);
  let sum = 0;
  let sum2 = 0;
  for (let i = 0; i < n; i++) {
    const v = data[i];
    hist[v]++;
    sum += v;
    sum2 += v * v;
  }
  const mean = n > 0 ? sum / n : 255;
  const rms = n > 0 ? Math.sqrt(Math.max(0, sum2 / n - mean * mean)) / 255 : 0;
  const paper = percentile(hist, n, 0.98) / 255;
  // A signature can cover well under 1% of a frame, so the ink level is a low percentile.
  const ink = percentile(hist, n, 0.003) / 255;
  const span = paper - ink;

  // Ink: darker than the midpoint between paper and ink, and only when there is a real span between them.
  const threshold = (percentile(hist, n, 0.98) + percentile(hist, n, 0.005)) / 2;
  let inkPixels = 0;
  if (span > 0.12) for (let i = 0; i < n; i++) if (data[i] < threshold) inkPixels++;
  const inkShare = n > 0 ? inkPixels / n : 0;

  // Sensor noise steepens the gradients of a soft image and hides its blur; at half scale the noise is
  // halved while true blur only halves in pixels, so the larger of the two readings is the honest one.
  const full = sharpnessOf(work);
  // (A reading under 1 px is sharp beyond what noise could fake; the second look is skipped then.)
  const half = w >= 64 && h >= 64 && full.blurPx > 1 ? sharpnessOf(downscale(work, { x: 0, y: 0, w, h }, 2)) : null;
  const { lapVar, edgePixels } = full;
  const blurPx = Math.max(full.blurPx, half && half.edgePixels > 0 ? 2 * half.blurPx : 0);
  const strokePx = strokeWidth(work, threshold, inkPixels) * factor;

  let dpi: number | null = null;
  const type = opts.inputType ?? "";
  if (kind === "page" && (type === "scan" || type === "form")) {
    // The short side of A4 or Letter is about 8.3 to 8.5 inches.
    dpi = Math.min(source?.width ?? raster.width, source?.height ?? raster.height) / 8.4;
  } else if (strokePx > 0 && inkPixels > 20) {
    dpi = strokePx / STROKE_INCH;
  }

  // Without any edge there is nothing to judge sharpness or contrast on: that is an empty view (a cue),
  // not a poor image.
  const hasContent = edgePixels > 0;
  const sharpnessScore = hasContent ? ramp(blurPx, 3.2, 1.8) : 1;
  // Over-exposure: saturated paper and ink lifted to a pale grey (but some structure, unlike a blank page).
  // Judged on the very darkest pixels, so a small but dark signature on white is not mistaken for it.
  const darkest = percentile(hist, n, 0.0005) / 255;
  const washed = darkest > 0.6 && paper > 0.97 && span > 0.06;
  const exposureScore = Math.min(ramp(paper, 0.12, 0.35), washed ? ramp(darkest, 0.85, 0.65) : 1);
  const contrastScore = hasContent ? ramp(span, 0.08, 0.22) : 1;
  const resolutionScore = dpi === null ? 1 : ramp(dpi, 60, 140);
  const score = clamp01(Math.min(sharpnessScore, exposureScore, contrastScore) * (0.6 + 0.4 * resolutionScore));

  const cues: CaptureCue[] = [];
  const minInk = kind === "page" ? 0.0005 : kind === "frame" ? 0.001 : 0.004;
  if (paper < 0.3) cues.push("too_dark");
  if (washed && exposureScore < 0.6) cues.push("too_bright");
  if (sharpnessScore < 0.6) cues.push("hold_steady");
  if (contrastScore < 0.6 && paper >= 0.3 && !washed) cues.push("low_contrast");
  if (inkShare < minInk || !hasContent) cues.push("no_signature_in_view");
  if (resolutionScore < 0.6) cues.push("move_closer");
  if (cues.length === 0) cues.push("ready");

  return {
    score: round3(score),
    cue: cues[0],
    cues,
    figures: {
      laplacian_variance: round3(lapVar),
      blur_px: round3(blurPx),
      exposure: round3(mean / 255),
      paper_level: round3(paper),
      ink_level: round3(ink),
      contrast: round3(rms),
      resolution_dpi: dpi === null ? null : Math.round(dpi),
      ink_share: round3(inkShare),
      sharpness_score: round3(sharpnessScore),
      exposure_score: round3(exposureScore),
      contrast_score: round3(contrastScore),
      resolution_score: round3(resolutionScore),
    },
  };
}

/**
 * Edge width, measured per block of the working copy after a 3x3 smoothing that takes the sensor noise
 * out: within a block that holds an edge, (local range) / (steepest gradient) is about 2.5 sigma for a
 * blurred step and 1.7 sigma for a blurred thin line, whatever the edge's contrast. The sharper half of
 * the edge blocks speaks for the focus (a page also holds soft shadows and stamps).
 * The plain Laplacian variance is reported as well, for comparison with the usual rule of thumb.
 */
function sharpnessOf(r: Raster): { lapVar: number; blurPx: number; edgePixels: number } {
  const { width: w, height: h, data: d } = r;
  if (w < 8 || h < 8) return { lapVar: 0, blurPx: 0, edgePixels: 0 };
  const sm = new Uint16Array(w * h); // 3x3 sums (0..2295)
  let lapSum = 0;
  let lapSum2 = 0;
  for (let y = 1; y < h - 1; y++) {
    for (let x = 1, i = y * w + 1; x < w - 1; x++, i++) {
      sm[i] = d[i - w - 1] + d[i - w] + d[i - w + 1] + d[i - 1] + d[i] + d[i + 1] + d[i + w - 1] + d[i + w] + d[i + w + 1];
      const l = d[i - 1] + d[i + 1] + d[i - w] + d[i + w] - 4 * d[i];
      lapSum += l;
      lapSum2 += l * l;
    }
  }
  const inner = (w - 2) * (h - 2);
  const lapMean = lapSum / inner;
  const lapVar = lapSum2 / inner - lapMean * lapMean;

  const B = 20;
  const widths: number[] = [];
  const ranges: number[] = [];
  for (let by = 2; by + B <= h - 2; by += B) {
    for (let bx = 2; bx + B <= w - 2; bx += B) {
      let mn = 1e9;
      let mx = -1;
      let g2max = 0;
      for (let y = by; y < by + B; y++) {
        for (let x = bx, i = y * w + bx; x < bx + B; x++, i++) {
          const v = sm[i];
          if (v < mn) mn = v;
          if (v > mx) mx = v;
          const gx = sm[i + 1] - sm[i - 1];
          const gy = sm[i + w] - sm[i - w];
          const g2 = gx * gx + gy * gy;
          if (g2 > g2max) g2max = g2;
        }
      }
      const range = (mx - mn) / 9;
      if (range < 24 || g2max === 0) continue;
      const gmax = Math.sqrt(g2max) / 18; // central difference over 2 px, of 9-pixel sums
      ranges.push(range);
      widths.push(range / gmax);
    }
  }
  if (widths.length === 0) return { lapVar, blurPx: 0, edgePixels: 0 };
  // Only the strong edges speak: on faint ones, sensor noise steepens the gradient and hides blur.
  const strongCut = 0.5 * [...ranges].sort((a, b) => a - b)[Math.floor(ranges.length * 0.9)];
  const strong = widths.filter((_, i) => ranges[i] >= strongCut).sort((a, b) => a - b);
  const width = strong[Math.floor(strong.length * 0.25)];
  // The 3x3 smoothing itself adds about 0.8 px of blur; take it out in quadrature.
  const sigma = Math.sqrt(Math.max(0, (width / 2.2) ** 2 - 0.8 ** 2));
  return { lapVar, blurPx: sigma, edgePixels: widths.length };
}

/** Mean stroke width in working pixels: ink area over half the ink boundary length. */
function strokeWidth(r: Raster, threshold: number, inkPixels: number): number {
  if (inkPixels === 0) return 0;
  const { width: w, height: h, data: d } = r;
  let boundary = 0;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      const i = y * w + x;
      if (d[i] >= threshold) continue;
      if (x + 1 < w && d[i + 1] >= threshold) boundary++;
      if (x > 0 && d[i - 1] >= threshold) boundary++;
      if (y + 1 < h && d[i + w] >= threshold) boundary++;
      if (y > 0 && d[i - w] >= threshold) boundary++;
    }
  }
  if (boundary === 0) return 0;
  // A stroke of width s and length L has area s*L and a 4-connected boundary of about 2L * (4/pi).
  return (2 * inkPixels) / (boundary * (Math.PI / 4));
}

/** Area-average the region by an integer factor (factor 1 copies the region). */
export function downscale(r: Raster, region: Box, factor: number): Raster {
  const w = Math.max(1, Math.floor(region.w / factor));
  const h = Math.max(1, Math.floor(region.h / factor));
  const out = new Uint8Array(w * h);
  const src = r.data;
  const stride = r.width;
  const half = (factor * factor) >> 1;
  const area = factor * factor;
  const acc = new Uint32Array(w);
  for (let y = 0; y < h; y++) {
    acc.fill(0);
    for (let dy = 0; dy < factor; dy++) {
      let p = Math.min(r.height - 1, region.y + y * factor + dy) * stride + region.x;
      for (let x = 0; x < w; x++) {
        let sum = 0;
        for (let dx = 0; dx < factor; dx++) sum += src[p++];
        acc[x] += sum;
      }
    }
    const o = y * w;
    for (let x = 0; x < w; x++) out[o + x] = ((acc[x] + half) / area) | 0;
  }
  return { width: w, height: h, data: out };
}

function clampBox(b: Box, r: Raster): Box {
  const x = Math.max(0, Math.min(r.width - 1, Math.floor(b.x)));
  const y = Math.max(0, Math.min(r.height - 1, Math.floor(b.y)));
  const w = Math.max(1, Math.min(r.width - x, Math.round(b.w)));
  const h = Math.max(1, Math.min(r.height - y, Math.round(b.h)));
  return { x, y, w, h };
}

function percentile(hist: Uint32Array, n: number, q: number): number {
  const target = q * n;
  let acc = 0;
  for (let v = 0; v < hist.length; v++) {
    acc += hist[v];
    if (acc >= target) return v;
  }
  return hist.length - 1;
}

/** 0 at `bad`, 1 at `good`, linear between (either direction). */
function ramp(v: number, bad: number, good: number): number {
  return clamp01((v - bad) / (good - bad));
}

function clamp01(v: number): number {
  return v < 0 ? 0 : v > 1 ? 1 : v;
}

function round3(v: number): number {
  return Math.round(v * 1000) / 1000;
}
