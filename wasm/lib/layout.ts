// The feature vector's layout: groups of f32, each a multiple of 4 long so the distance kernels can
// run four lanes at a time. src/verify/features.ts mirrors these numbers through the exported getters.

export const HOG_BINS: i32 = 12;
export const LBP_BINS: i32 = 59;
export const POLAR_SECTORS: i32 = 8;
export const POLAR_RINGS: i32 = 2;
export const POLAR_ZONES: i32 = POLAR_SECTORS * POLAR_RINGS;
export const PROFILE_X: i32 = 32;
export const PROFILE_Y: i32 = 16;
// Direction-pair histogram of the skeleton-free contour: 8 gradient sectors x 8 sectors a few pixels on.
export const COOC_BINS: i32 = 64;

/** Column sequence for elastic matching: SEQ_LEN steps across the ink box, SEQ_DIM values each. */
export const SEQ_LEN: i32 = 64;
export const SEQ_DIM: i32 = 4;
/** DTW band half-width, in steps. */
export const SEQ_BAND: i32 = 8;

/**
 * Orientation strips for elastic matching: the ink box cut into STRIP_LEN column strips, each with its
 * gradient orientations in STRIP_BINS sectors, weighted by magnitude, above and below the ink centroid of
 * the strips around it (features.ts stripSplits).
 */
export const STRIP_LEN: i32 = 32;
export const STRIP_BINS: i32 = 8;
export const STRIP_DIM: i32 = 2 * STRIP_BINS;
/** DTW band half-width, in strips: an eighth of the ink box, as SEQ_BAND is. */
export const STRIP_BAND: i32 = 4;

export const GROUP_COUNT: i32 = 15;

// Distance kinds: 0 = chi-square, 1 = squared L2, 2 = dynamic time warping of a column sequence (L1 step
// cost), 3 = dynamic time warping of the orientation strips (chi-square step cost).
// Groups: 0 hog 1x1, 1 hog 2x4, 2 hog 4x8, 3 hog polar, 4 lbp 1x1, 5 lbp 2x4, 6 lbp 4x8, 7 lbp polar,
// 8 ink mass per zone, 9 projection profiles, 10 global shape, 11 orientation co-occurrence 1x1,
// 12 orientation co-occurrence 2x4, 13 column sequence (upper and lower contour, ink density, transitions),
// 14 orientation strips.
function pad4(n: i32): i32 {
  return (n + 3) & ~3;
}

export const G_LEN: StaticArray<i32> = [
  HOG_BINS,
  8 * HOG_BINS,
  32 * HOG_BINS,
  POLAR_ZONES * HOG_BINS,
  60,
  8 * LBP_BINS,
  32 * LBP_BINS,
  POLAR_ZONES * LBP_BINS,
  32 + POLAR_ZONES,
  PROFILE_X + PROFILE_Y,
  4,
  COOC_BINS,
  8 * COOC_BINS,
  SEQ_LEN * SEQ_DIM,
  STRIP_LEN * STRIP_DIM,
];

export const G_KIND: StaticArray<i32> = [0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 2, 3];

export function groupOffset(g: i32): i32 {
  let o = 0;
  for (let i = 0; i < g; i++) o += pad4(unchecked(G_LEN[i]));
  return o;
}

export function featureLength(): i32 {
  return groupOffset(GROUP_COUNT);
}
