// The comparison core: preprocessing, feature extraction and distance kernels over raw pixels in linear
// memory. Protocol (src/verify/core.ts drives it): reset(); p = alloc(w * h); write the grey pixels at p;
// f = extract(p, w, h) (or preprocess + warp + features for synthetic variants); read featureLength()
// f32 at f. Distances: write vectors, call groupDistances. Nothing persists between jobs.
import { arenaAlloc, arenaReset } from "./lib/arena";
import { GROUP_COUNT, G_KIND, featureLength as layoutLength, groupOffset as layoutOffset } from "./lib/layout";
import * as pre from "./lib/preprocess";
import { extractFeatures } from "./lib/features";
export { groupDistances, chi2, l2sq } from "./lib/distance";

export function reset(): void {
  arenaReset();
}

export function alloc(bytes: i32): usize {
  return arenaAlloc(<usize>bytes);
}

export function featureLength(): i32 {
  return layoutLength();
}

export function groupCount(): i32 {
  return GROUP_COUNT;
}

export function groupOffset(g: i32): i32 {
  return layoutOffset(g);
}

export function groupKind(g: i32): i32 {
  return G_KIND[g];
}

/** Threshold, crop and normalise; 1 when there is ink, 0 when the crop is blank. */
export function preprocess(src: usize, w: i32, h: i32): i32 {
  return pre.preprocess(src, w, h) ? 1 : 0;
}

/** Distort the normalised image (see lib/preprocess warp). */
export function warp(rot: f32, scale: f32, shear: f32, elastic: f32, phase: f32): void {
  pre.warp(rot, scale, shear, elastic, phase);
}

/** Features of the current normalised image. */
export function features(): usize {
  const aspect: f32 = pre.inkH > 0 ? <f32>pre.inkW / <f32>pre.inkH : 1;
  return extractFeatures(pre.normPtr, pre.normW, pre.normH, aspect);
}

/** preprocess + features; returns the feature pointer (all zeros for a blank crop: check inkFound()). */
export function extract(src: usize, w: i32, h: i32): usize {
  preprocess(src, w, h);
  return features();
}

export function inkFound(): i32 {
  return pre.normW > 0 ? 1 : 0;
}

/** The ink box in the source crop: 0 x, 1 y, 2 w, 3 h; 4 threshold; 5 normalised width; 6 height. */
export function info(i: i32): i32 {
  switch (i) {
    case 0: return pre.inkX0;
    case 1: return pre.inkY0;
    case 2: return pre.inkW;
    case 3: return pre.inkH;
    case 4: return pre.threshold;
    case 5: return pre.normW;
    case 6: return pre.normH;
  }
  return 0;
}

export function normPointer(): usize {
  return pre.normPtr;
}

/** Point the core back at an earlier normalised image (variants all start from the original). */
export function setNorm(p: usize): void {
  pre.setNormPtr(p);
}
