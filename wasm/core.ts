// The comparison core: preprocessing, feature extraction and distance kernels over raw pixels in linear
// memory. Protocol (src/verify/core.ts drives it): reset(); p = alloc(w * h); write the grey pixels at p;
// f = extract(p, w, h) (or preprocess + warp + features for synthetic variants); read featureLength()
// f32 at f. Distances: write vectors, call groupDistances. Nothing persists between jobs. Several passes
// over one crop (regimes, variants) rewind the arena to a mark between them once each vector is read.
import { arenaAlloc, arenaMark, arenaReset, arenaRewind } from "./lib/arena";
import { GROUP_COUNT, G_KIND, featureLength as layoutLength, groupOffset as layoutOffset } from "./lib/layout";
import * as pre from "./lib/preprocess";
import { ALL_GROUPS, TEXTURE_GROUPS, extractFeatures, foldedAngle, polarSector, textureFeatures } from "./lib/features";
import { normaliseWidth, skeletonLength, strokeWidth } from "./lib/stroke";
export { groupDistances, chi2, l2sq } from "./lib/distance";

export function reset(): void {
  pre.forgetRowsFrom(0);
  arenaReset();
}

export function alloc(bytes: i32): usize {
  return arenaAlloc(<usize>bytes);
}

/** The arena's top now, for rewind. */
export function mark(): usize {
  return arenaMark();
}

/**
 * Give back what was reserved since `m` (mark): the scratch of a feature pass whose vector the host has
 * copied out. A reference's three passes then peak at the largest of them rather than at their sum.
 */
export function rewind(m: usize): void {
  pre.forgetRowsFrom(m);
  arenaRewind(m);
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

/**
 * Threshold, crop and normalise; 1 when there is ink, 0 when the crop is blank. `hard` = 1 renders the
 * crop as a bitonal scanner would (the binarised comparison regime).
 */
export function preprocess(src: usize, w: i32, h: i32, hard: i32): i32 {
  return pre.preprocess(src, w, h, hard != 0) ? 1 : 0;
}

/** Normalise the last preprocessed crop again on a grid moved by (px, py) pixels (lib/preprocess renormalise). */
export function renormalise(px: f32, py: f32): void {
  pre.renormalise(px, py);
}

/** Keep the last crop's row pass at x phase px for the renormalise calls that follow (lib/preprocess keepRows). */
export function keepRows(px: f32): void {
  pre.keepRows(px);
}

/** The x phase of the row pass renormalise would reuse, or -1 (lib/preprocess rowsPhase). */
export function rowsPhase(): f32 {
  return pre.rowsPhase();
}

/** Distort the normalised image (see lib/preprocess warp). */
export function warp(rot: f32, scale: f32, shear: f32, elastic: f32, phase: f32): void {
  pre.warp(rot, scale, shear, elastic, phase);
}

/**
 * Mean stroke width, in pixels of the normalised image, that the shape features see (lib/stroke.ts).
 * The development sets' medians are 2.4 px (Dutch) and 3.5 px (Bengali).
 */
const STROKE_WIDTH: f32 = 2.0;
/**
 * Groups computed on the width-normalised image (bit g = group g of lib/layout.ts): HOG (0-3), ink mass
 * (8), profiles (9), orientation co-occurrence (11, 12), the column sequence (13) and the orientation
 * strips (14). LBP (4-7) reads the stroke's texture and the global shape (10) the ink box, so they stay
 * on the original (TEXTURE_GROUPS, lib/features.ts).
 */
const SHAPE_GROUPS: i32 = ALL_GROUPS & ~TEXTURE_GROUPS;

/**
 * Features of the current normalised image: the texture groups from it, the shape groups from it redrawn
 * at STROKE_WIDTH, each pass computing only its own groups.
 */
export function features(): usize {
  const aspect: f32 = pre.inkH > 0 ? <f32>pre.inkW / <f32>pre.inkH : 1;
  if (pre.normW == 0) return extractFeatures(pre.normPtr, pre.normW, pre.normH, aspect);
  const even = normaliseWidth(pre.normPtr, pre.normW, pre.normH, STROKE_WIDTH);
  // Too little ink to measure the pen: every group from the image as it is.
  if (even == pre.normPtr) return extractFeatures(pre.normPtr, pre.normW, pre.normH, aspect, ALL_GROUPS);
  // The texture groups by the pass that visits only the ink (bit for bit extractFeatures' with that mask).
  const f = textureFeatures(pre.normPtr, pre.normW, pre.normH, aspect);
  const g = extractFeatures(even, pre.normW, pre.normH, aspect, SHAPE_GROUPS);
  for (let k = 0; k < GROUP_COUNT; k++) {
    if (((SHAPE_GROUPS >> k) & 1) == 0) continue;
    const at = <usize>layoutOffset(k) << 2;
    memory.copy(f + at, g + at, <usize>(layoutOffset(k + 1) - layoutOffset(k)) << 2);
  }
  return f;
}

/**
 * Only the texture groups (TEXTURE_GROUPS) of the current normalised image, the others left zero: the
 * extra sampling grids' pass (src/verify/core.ts phasedVector). It skips the width normalisation and the
 * gradients, and visits only the ink pixels (lib/features textureFeatures): about a tenth of what
 * features() costs.
 */
export function texture(): usize {
  const aspect: f32 = pre.inkH > 0 ? <f32>pre.inkW / <f32>pre.inkH : 1;
  return textureFeatures(pre.normPtr, pre.normW, pre.normH, aspect);
}

/** The groups texture() computes, as a bit mask (bit g = group g). */
export function textureGroups(): i32 {
  return TEXTURE_GROUPS;
}

/**
 * The last width normalisation: 0 = mean stroke width before it (x 1000), 1 = skeleton length. After an
 * averaged vector (src/verify/core.ts phasedVector) that is the first sampling grid's image's: the other
 * grids compute only the texture groups, which do not normalise the width.
 */
export function strokeInfo(i: i32): i32 {
  return i == 0 ? <i32>(strokeWidth * 1000) : skeletonLength;
}

/** preprocess + features; returns the feature pointer (all zeros for a blank crop: check inkFound()). */
export function extract(src: usize, w: i32, h: i32): usize {
  preprocess(src, w, h, 0);
  return features();
}

export function inkFound(): i32 {
  return pre.normW > 0 ? 1 : 0;
}

/**
 * The ink box in the source crop: 0 x, 1 y, 2 w, 3 h; 4 threshold; 5 normalised width; 6 height;
 * 7 the share of grey levels among the crop's ink (x 10000, lib/preprocess greyShare).
 */
export function info(i: i32): i32 {
  switch (i) {
    case 0: return pre.inkX0;
    case 1: return pre.inkY0;
    case 2: return pre.inkW;
    case 3: return pre.inkH;
    case 4: return pre.threshold;
    case 5: return pre.normW;
    case 6: return pre.normH;
    case 7: return <i32>(pre.greyShare * 10000);
    case 8: return pre.flattened ? 1 : 0;
  }
  return 0;
}

export function normPointer(): usize {
  return pre.normPtr;
}

/** Blur the normalised image (see lib/preprocess blurNorm): the blurred comparison regime. */
export function blurNorm(sigma: f32): void {
  pre.blurNorm(sigma);
}

/** Point the core back at an earlier normalised image (variants all start from the original). */
export function setNorm(p: usize): void {
  pre.setNormPtr(p);
}

/** The gradient orientation the HOG and co-occurrence groups bin (lib/features foldedAngle), for the kernel tests. */
export function orientation(gx: f32, gy: f32): f32 {
  return foldedAngle(gx, gy);
}

/** The polar sector, 0 to 7, of an offset from the ink centroid (lib/features polarSector), for the kernel tests. */
export function sectorOf(dx: f32, dy: f32): i32 {
  return polarSector(dx, dy);
}
