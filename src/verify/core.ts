/**
 * Loading the WASM comparison core (wasm/core.ts) and moving pixels and vectors in and out of it.
 *
 *   createCore(module: WebAssembly.Module): Core
 *
 * In workerd the module comes from `import mod from "../../wasm/build/core.wasm"` (src/verify/core-module.ts);
 * in Node (the benches) from `new WebAssembly.Module(readFileSync("wasm/build/core.wasm"))`. One Core per
 * isolate is enough: every call resets the core's arena, and calls are synchronous, so they never interleave.
 *
 * Memory. A WebAssembly memory can grow but never shrink, so what one large call takes would stay held for
 * the isolate's life (a 7000x5700 crop once left 41 MiB). Three bounds keep it small:
 * - what goes in is capped: a raster over CORE_MAX_PIXELS or CORE_MAX_SIDE is area-averaged down before it
 *   is copied (the features work on a size-normalised image of about 48,000 pixels, so nothing is lost
 *   but the ink box's last pixel of precision, which is scaled back);
 * - the module is built with a maximum memory (scripts/build-wasm.mjs), so a bug cannot grow it further;
 * - after a call that left the memory above CORE_RETAINED_BYTES, the instance is dropped and the next call
 *   instantiates a fresh one (cheap: the module is compiled once), which is the only way to give memory back.
 *   A fresh instance grows its memory again page by page, which is not cheap, so the passes over one crop
 *   (a reference's three regimes, its variants) rewind the arena between them and an ordinary reference
 *   stays under the bound.
 */
import { areaResample } from "./resample";
import { VerifyError, type Raster } from "./types";

/** Largest raster copied into the core; larger ones are area-averaged down first. */
export const CORE_MAX_PIXELS = 2048 * 2048;
export const CORE_MAX_SIDE = 4096;
/** Linear memory an idle core may keep between calls. */
export const CORE_RETAINED_BYTES = 4 * 1024 * 1024;
/** Feature vectors copied in per groupDistances call; more references are done in batches. */
const DISTANCE_BATCH = 256;

/** The core's raw exports (wasm/core.ts) that the wrapper below uses; tests and experiments reach them too. */
export interface CoreExports {
  memory: WebAssembly.Memory;
  reset(): void;
  alloc(bytes: number): number;
  mark(): number;
  rewind(m: number): void;
  featureLength(): number;
  groupCount(): number;
  groupOffset(g: number): number;
  groupKind(g: number): number;
  preprocess(src: number, w: number, h: number, hard: number): number;
  warp(rot: number, scale: number, shear: number, elastic: number, phase: number): void;
  renormalise(px: number, py: number): void;
  keepRows(px: number): void;
  rowsPhase(): number;
  features(): number;
  texture(): number;
  textureGroups(): number;
  inkFound(): number;
  info(i: number): number;
  groupDistances(q: number, refs: number, count: number, out: number): void;
  normPointer(): number;
  setNorm(p: number): void;
  blurNorm(sigma: number): void;
}

/** Small geometric and elastic distortion of a signature, for synthetic reference variants. */
export interface Jitter {
  rotation: number; // radians
  scale: number; // 1 = none
  shear: number; // horizontal shear factor
  elastic: number; // amplitude in normalised pixels
  phase: number;
}

/** Gaussian sigma, in pixels of the normalised image, of the blurred comparison regime (compare.ts). */
export const BLUR_SIGMA = 1.0;
/**
 * The sampling grids besides the one the crop falls on, as offsets (x, y) in pixels of the normalised
 * image: every combination of 0, a third and two thirds of a pixel along each axis (phasedVector; nine
 * grids with the crop's own, feature version 9). Grids next to each other with the same x share one row
 * pass, those at x = 0 the one preprocess kept, and the means sum the grids in this order.
 */
export const EXTRA_GRIDS: readonly (readonly [number, number])[] = [
  [0, 1 / 3],
  [0, 2 / 3],
  [1 / 3, 0],
  [1 / 3, 1 / 3],
  [1 / 3, 2 / 3],
  [2 / 3, 0],
  [2 / 3, 1 / 3],
  [2 / 3, 2 / 3],
];

export interface Extraction {
  vector: Float32Array;
  /** The features of the normalised image blurred by BLUR_SIGMA (`vector` itself for a blank crop, or when not asked for). */
  blurred: Float32Array;
  /**
   * The features of the crop as a bitonal scanner would have made it (every level darker than the Otsu
   * threshold full ink, every other paper): null when not asked for, or when that rendering holds no ink.
   */
  binarised: Float32Array | null;
  /** Of the crop's ink, the share at intermediate grey levels (wasm/lib/preprocess greyShare): about 0 when bitonal. */
  greyShare: number;
  /**
   * Pixels of the caller's raster per pixel of the normalised image, along each side (the square root of
   * the areas' ratio): how much resolution the ink had to spare. 0 for a blank crop.
   */
  resolution: number;
  /** False when the crop held no ink (the vector is then all zeros). */
  inkFound: boolean;
  /** The ink box in the raster's pixels. */
  inkBox: { x: number; y: number; w: number; h: number };
}

/**
 * Which rendering of the crop a vector is read from: as captured, its normalised image blurred by
 * BLUR_SIGMA, or the crop binarised as a bitonal scanner would have made it (compare.ts's regimes).
 */
export type VectorKind = "sharp" | "blurred" | "binarised";

/**
 * What a check extracts (Core.extractOne): one vector, or with its blurred one beside it, for a capture
 * whose score blends in the blurred regime's: as captured (compare.ts blurredShare) or binarised against
 * bitonal references (binarisedBlurShare).
 */
export type CheckVectors = VectorKind | "sharp+blurred" | "binarised+blurred";

/** What the core has measured of a crop by the time a check must choose its vector (Core.extractOne). */
export interface CropMeasures {
  greyShare: number;
  resolution: number;
}

/** One vector of a crop, with the crop's measures (Core.extractOne). */
export interface OneExtraction extends CropMeasures {
  vector: Float32Array;
  /**
   * The kind asked for ("sharp" for "sharp+blurred", "binarised" for "binarised+blurred"), or "sharp" when
   * that was binarised and the binarised rendering held no ink.
   */
  kind: VectorKind;
  /** With "sharp+blurred" or "binarised+blurred" (and ink): the blurred regime's vector beside `vector`. */
  blurred?: Float32Array;
  inkFound: boolean;
  inkBox: { x: number; y: number; w: number; h: number };
}

export interface Core {
  readonly featureLength: number;
  readonly groupCount: number;
  /** Start offset of each group, plus the total length at the end (groupCount + 1 entries). */
  readonly groupOffsets: readonly number[];
  /** 0 = chi-square, 1 = squared L2, per group. */
  readonly groupKinds: readonly number[];
  /**
   * Preprocess and extract; with `jitters`, also the features of distorted variants of the same ink. The
   * blurred regime's vector is extracted unless `opts.blurred` is false (`blurred` is then `vector`
   * itself); the binarised regime's only when `opts.binarised` says so for the crop's grey share.
   */
  extract(
    raster: Raster,
    jitters?: readonly Jitter[],
    opts?: { blurred?: boolean; binarised?: (greyShare: number) => boolean },
  ): { main: Extraction; variants: Float32Array[] };
  /**
   * Preprocess and extract the one vector a check compares: `choose` sees the crop's measures once it is
   * preprocessed and names the kind, and only that vector is computed (the sharp one, all zeros, for a
   * blank crop). "sharp+blurred" computes both from the one preprocessing; "binarised+blurred" the blurred
   * vector from it, then the binarised one from a second preprocessing of the same crop (kind "binarised").
   */
  extractOne(raster: Raster, choose: (m: CropMeasures) => CheckVectors): OneExtraction;
  /** Per-group distances of q to each ref: a Float32Array of refs.length * groupCount (ref-major). */
  groupDistances(q: Float32Array, refs: readonly Float32Array[]): Float32Array;
  /** Bytes of linear memory the core holds now (0 between calls once a large call was released). */
  memoryBytes(): number;
  /** The most linear memory any call has used since the core was created (for tests and metrics). */
  readonly peakMemoryBytes: number;
}

/**
 * The raster the core may see: unchanged when within the caps, else area-averaged down by one factor for
 * both sides, so that both caps hold. Returns the factor (source pixels per core pixel, per side).
 */
export function fitForCore(raster: Raster): { raster: Raster; scale: number } {
  const { width: w, height: h } = raster;
  const scale = Math.max(1, Math.sqrt((w * h) / CORE_MAX_PIXELS), w / CORE_MAX_SIDE, h / CORE_MAX_SIDE);
  if (scale === 1) return { raster, scale };
  const W = Math.max(1, Math.min(CORE_MAX_SIDE, Math.floor(w / scale)));
  const H = Math.max(1, Math.min(CORE_MAX_SIDE, Math.floor(h / scale)));
  const out = areaResample(raster, W, H);
  return { raster: out, scale: w / out.width };
}

export function createCore(module: WebAssembly.Module): Core {
  let x: CoreExports | undefined;
  let peak = 0;
  const core = (): CoreExports => {
    x ??= new WebAssembly.Instance(module, {}).exports as unknown as CoreExports;
    return x;
  };
  // Every call goes through here: a trap (the memory maximum reached) drops the instance and becomes a
  // typed error, and a call that left the memory large gives it back by dropping the instance.
  const call = <T>(fn: (x: CoreExports) => T): T => {
    const c = core();
    try {
      return fn(c);
    } catch (err) {
      x = undefined;
      if (err instanceof WebAssembly.RuntimeError) {
        throw new VerifyError("too_many_pixels", "the signature crop needs more memory than the comparison core allows");
      }
      throw err;
    } finally {
      const bytes = c.memory.buffer.byteLength;
      peak = Math.max(peak, bytes);
      if (bytes > CORE_RETAINED_BYTES && x === c) x = undefined;
    }
  };
  const first = core();
  const featureLength = first.featureLength();
  const groupCount = first.groupCount();
  const groupOffsets: number[] = [];
  const groupKinds: number[] = [];
  for (let g = 0; g <= groupCount; g++) groupOffsets.push(first.groupOffset(g));
  for (let g = 0; g < groupCount; g++) groupKinds.push(first.groupKind(g));

  const readVector = (c: CoreExports, ptr: number): Float32Array => new Float32Array(c.memory.buffer, ptr, featureLength).slice();
  // Per feature index, whether texture() computes it (the groups in its mask).
  const textureMask = first.textureGroups();
  const isTexture = new Uint8Array(featureLength);
  for (let g = 0; g < groupCount; g++) if ((textureMask >> g) & 1) isTexture.fill(1, groupOffsets[g], groupOffsets[g + 1]);
  /**
   * The vector of the image preprocess just normalised, its texture groups averaged over nine sampling
   * grids (feature version 9; docs/accuracy.md "Sampling phase"). Where the grid falls decides the grey
   * levels of the stroke edges, and the LBP codes read from them, so a scan at 297 instead of 300 dpi, or
   * a speck that moves the ink box by 2 px, moved those groups by a third of a genuine-to-genuine distance.
   * The shape groups are read once, from the crop's own grid: averaging them over a second grid too moved
   * no EER by more than 0.3 point (E55b), and would cost a full feature pass (width normalisation,
   * gradients), about four times an extra grid's resample and texture pass. Nine grids rather than four
   * (E55d) took up to 0.4 point off the skilled EER at 5 of 8 points of the headline protocol, and lost
   * none. The blurred vector and the
   * variants stay on the one grid: blur takes the phase out already, and the variants only measure the
   * spread. Leaves the first image as the normalised one, and the arena where it found it.
   */
  const phasedVector = (c: CoreExports): Float32Array => {
    const normPtr = c.normPointer();
    const base = c.mark();
    const v = readVector(c, c.features());
    if (c.inkFound() !== 1) return v;
    const sum = v.slice();
    // Grids that share an x phase share the row pass (keepRows); the rewind keeps it between them. The
    // grids at x = 0 reuse the pass preprocess kept (rowsPhase).
    let keptX = c.rowsPhase();
    let afterRows = base;
    for (const [x, y] of EXTRA_GRIDS) {
      if (x !== keptX) {
        c.rewind(base);
        c.keepRows(x);
        keptX = x;
        afterRows = c.mark();
      } else c.rewind(afterRows);
      c.renormalise(x, y);
      const at = c.texture();
      // Read after the pass: memory growth there detaches an earlier view of the buffer.
      const moved = new Float32Array(c.memory.buffer, at, featureLength);
      for (let i = 0; i < featureLength; i++) if (isTexture[i]) sum[i] += moved[i];
    }
    const grids = 1 + EXTRA_GRIDS.length;
    for (let i = 0; i < featureLength; i++) if (isTexture[i]) v[i] = sum[i] / grids;
    c.rewind(base);
    c.setNorm(normPtr);
    return v;
  };

  const distances = (q: Float32Array, refs: readonly Float32Array[]): Float32Array =>
    call((c) => {
      c.reset();
      const bytes = featureLength * 4;
      const qp = c.alloc(bytes);
      const rp = c.alloc(bytes * Math.max(1, refs.length));
      const out = c.alloc(refs.length * groupCount * 4);
      const mem = new Float32Array(c.memory.buffer);
      mem.set(q, qp >> 2);
      for (let i = 0; i < refs.length; i++) mem.set(refs[i], (rp >> 2) + i * featureLength);
      c.groupDistances(qp, rp, refs.length, out);
      return new Float32Array(c.memory.buffer, out, refs.length * groupCount).slice();
    });

  interface Measured extends CropMeasures {
    inkFound: boolean;
    inkBox: OneExtraction["inkBox"];
  }
  /** The crop as copied into the core (after fitForCore), for preprocessing it again. */
  interface Copied {
    src: number;
    width: number;
    height: number;
    /** The arena's top right after the copy: rewinding there keeps the crop and frees everything else. */
    mark: number;
  }
  // Copy the crop in and preprocess it; `then` reads vectors from the normalised image it leaves.
  const run = <T>(original: Raster, then: (c: CoreExports, m: Measured, crop: Copied) => T): T => {
    if (original.data.length < original.width * original.height || original.width < 1 || original.height < 1) {
      throw new RangeError("raster data is smaller than width x height");
    }
    const { raster, scale } = fitForCore(original);
    return call((c) => {
      c.reset();
      const n = raster.width * raster.height;
      const src = c.alloc(n);
      // Re-read memory.buffer after every alloc: growing the memory detaches the old buffer.
      new Uint8Array(c.memory.buffer, src, n).set(raster.data.subarray(0, n));
      const mark = c.mark();
      const inkFound = c.preprocess(src, raster.width, raster.height, 0) === 1;
      const greyShare = c.info(7) / 10000;
      const box = { x: c.info(0), y: c.info(1), w: c.info(2), h: c.info(3) };
      // The ink box in the caller's pixels, clamped to its raster.
      const inkBox =
        scale === 1
          ? box
          : {
              x: Math.min(original.width - 1, Math.floor(box.x * scale)),
              y: Math.min(original.height - 1, Math.floor(box.y * scale)),
              w: Math.max(1, Math.min(original.width - Math.floor(box.x * scale), Math.round(box.w * scale))),
              h: Math.max(1, Math.min(original.height - Math.floor(box.y * scale), Math.round(box.h * scale))),
            };
      const normArea = c.info(5) * c.info(6);
      const resolution = inkFound && normArea > 0 ? Math.sqrt((inkBox.w * inkBox.h) / normArea) : 0;
      return then(c, { greyShare, resolution, inkFound, inkBox }, { src, width: raster.width, height: raster.height, mark });
    });
  };
  // The crop preprocessed again as a bitonal scanner would have made it (the pixels at crop.src are still
  // in the arena, unchanged); null when that rendering holds no ink. Replaces the normalised image, and
  // gives back the arena the earlier passes used.
  const binarisedVector = (c: CoreExports, crop: Copied): Float32Array | null => {
    c.rewind(crop.mark);
    return c.preprocess(crop.src, crop.width, crop.height, 1) === 1 ? phasedVector(c) : null;
  };

  return {
    featureLength,
    groupCount,
    groupOffsets,
    groupKinds,
    get peakMemoryBytes() {
      return peak;
    },
    memoryBytes: () => x?.memory.buffer.byteLength ?? 0,
    extract(original, jitters = [], opts = {}) {
      const withBlurred = opts.blurred ?? true;
      return run(original, (c, m, crop) => {
        const normPtr = c.normPointer();
        // Each pass below starts from the normalised image and leaves its scratch behind once its vector
        // is copied out: rewinding here keeps a reference's peak memory (three passes, and variants) at
        // one pass's, under CORE_RETAINED_BYTES, so the instance is kept for the next call.
        const afterPreprocess = c.mark();
        const vector = phasedVector(c);
        let blurred = vector;
        if (m.inkFound && withBlurred) {
          c.rewind(afterPreprocess);
          c.setNorm(normPtr);
          c.blurNorm(BLUR_SIGMA);
          blurred = readVector(c, c.features());
        }
        const variants: Float32Array[] = [];
        if (m.inkFound) {
          for (const j of jitters) {
            // Each variant distorts the undistorted image: restore the pointer the warp replaced.
            c.rewind(afterPreprocess);
            c.setNorm(normPtr);
            c.warp(j.rotation, j.scale, j.shear, j.elastic, j.phase);
            variants.push(readVector(c, c.features()));
          }
        }
        // Last: preprocessing again replaces the normalised image the variants start from.
        const binarised = m.inkFound && opts.binarised?.(m.greyShare) ? binarisedVector(c, crop) : null;
        return { main: { ...m, vector, blurred, binarised }, variants };
      });
    },
    extractOne(original, choose) {
      return run(original, (c, m, crop) => {
        const kind = m.inkFound ? choose(m) : "sharp";
        if (kind === "sharp+blurred") {
          const normPtr = c.normPointer();
          const afterPreprocess = c.mark();
          const vector = phasedVector(c);
          c.rewind(afterPreprocess);
          c.setNorm(normPtr);
          c.blurNorm(BLUR_SIGMA);
          return { ...m, kind: "sharp", vector, blurred: readVector(c, c.features()) };
        }
        if (kind === "binarised" || kind === "binarised+blurred") {
          let blurred: Float32Array | undefined;
          if (kind === "binarised+blurred") {
            // First: binarising preprocesses the crop again, which replaces the normalised image.
            c.blurNorm(BLUR_SIGMA);
            blurred = readVector(c, c.features());
          }
          const vector = binarisedVector(c, crop);
          if (vector) return { ...m, kind: "binarised", vector, ...(blurred ? { blurred } : {}) };
          // No ink once binarised (Extraction.binarised null): the crop as captured, preprocessed again.
          c.rewind(crop.mark);
          c.preprocess(crop.src, crop.width, crop.height, 0);
          return { ...m, kind: "sharp", vector: phasedVector(c) };
        }
        if (kind === "blurred") {
          c.blurNorm(BLUR_SIGMA);
          return { ...m, kind, vector: readVector(c, c.features()) };
        }
        return { ...m, kind, vector: phasedVector(c) };
      });
    },
    groupDistances(q, refs) {
      if (refs.length <= DISTANCE_BATCH) return distances(q, refs);
      const out = new Float32Array(refs.length * groupCount);
      for (let i = 0; i < refs.length; i += DISTANCE_BATCH) out.set(distances(q, refs.slice(i, i + DISTANCE_BATCH)), i * groupCount);
      return out;
    },
  };
}
