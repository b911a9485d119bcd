/**
 * Loading the WASM comparison core (wasm/core.ts) and moving pixels and vectors in and out of it.
 *
 *   createCore(module: WebAssembly.Module): Core
 *
 * In workerd the module comes from `import mod from "../../wasm/build/core.wasm"` (src/verify/core-module.ts);
 * in Node (the benches) from `new WebAssembly.Module(readFileSync("wasm/build/core.wasm"))`. One Core per
 * isolate is enough: every call resets the core's arena, and calls are synchronous, so they never interleave.
 */
import type { Raster } from "./types";

interface CoreExports {
  memory: WebAssembly.Memory;
  reset(): void;
  alloc(bytes: number): number;
  featureLength(): number;
  groupCount(): number;
  groupOffset(g: number): number;
  groupKind(g: number): number;
  preprocess(src: number, w: number, h: number): number;
  warp(rot: number, scale: number, shear: number, elastic: number, phase: number): void;
  features(): number;
  inkFound(): number;
  info(i: number): number;
  groupDistances(q: number, refs: number, count: number, out: number): void;
  normPointer(): number;
  setNorm(p: number): void;
}

/** Small geometric and elastic distortion of a signature, for synthetic reference variants. */
export interface Jitter {
  rotation: number; // radians
  scale: number; // 1 = none
  shear: number; // horizontal shear factor
  elastic: number; // amplitude in normalised pixels
  phase: number;
}

export interface Extraction {
  vector: Float32Array;
  /** False when the crop held no ink (the vector is then all zeros). */
  inkFound: boolean;
  /** The ink box in the raster's pixels. */
  inkBox: { x: number; y: number; w: number; h: number };
}

export interface Core {
  readonly featureLength: number;
  readonly groupCount: number;
  /** Start offset of each group, plus the total length at the end (groupCount + 1 entries). */
  readonly groupOffsets: readonly number[];
  /** 0 = chi-square, 1 = squared L2, per group. */
  readonly groupKinds: readonly number[];
  /** Preprocess and extract; with `jitters`, also the features of distorted variants of the same ink. */
  extract(raster: Raster, jitters?: readonly Jitter[]): { main: Extraction; variants: Float32Array[] };
  /** Per-group distances of q to each ref: a Float32Array of refs.length * groupCount (ref-major). */
  groupDistances(q: Float32Array, refs: readonly Float32Array[]): Float32Array;
}

export function createCore(module: WebAssembly.Module): Core {
  const instance = new WebAssembly.Instance(module, {});
  const x = instance.exports as unknown as CoreExports;
  const featureLength = x.featureLength();
  const groupCount = x.groupCount();
  const groupOffsets: number[] = [];
  const groupKinds: number[] = [];
  for (let g = 0; g <= groupCount; g++) groupOffsets.push(x.groupOffset(g));
  for (let g = 0; g < groupCount; g++) groupKinds.push(x.groupKind(g));

  const readVector = (ptr: number): Float32Array =>
    new Float32Array(x.memory.buffer, ptr, featureLength).slice();

  return {
    featureLength,
    groupCount,
    groupOffsets,
    groupKinds,
    extract(raster, jitters = []) {
      if (raster.data.length < raster.width * raster.height || raster.width < 1 || raster.height < 1) {
        throw new RangeError("raster data is smaller than width x height");
      }
      x.reset();
      const n = raster.width * raster.height;
      const src = x.alloc(n);
      // Re-read memory.buffer after every alloc: growing the memory detaches the old buffer.
      new Uint8Array(x.memory.buffer, src, n).set(raster.data.subarray(0, n));
      const found = x.preprocess(src, raster.width, raster.height) === 1;
      const inkBox = { x: x.info(0), y: x.info(1), w: x.info(2), h: x.info(3) };
      const normPtr = x.normPointer();
      const vector = readVector(x.features());
      const variants: Float32Array[] = [];
      if (found) {
        for (const j of jitters) {
          // Each variant distorts the undistorted image: restore the pointer the warp replaced.
          x.setNorm(normPtr);
          x.warp(j.rotation, j.scale, j.shear, j.elastic, j.phase);
          variants.push(readVector(x.features()));
        }
      }
      return { main: { vector, inkFound: found, inkBox }, variants };
    },
    groupDistances(q, refs) {
      x.reset();
      const bytes = featureLength * 4;
      const qp = x.alloc(bytes);
      const rp = x.alloc(bytes * Math.max(1, refs.length));
      const out = x.alloc(refs.length * groupCount * 4);
      const mem = new Float32Array(x.memory.buffer);
      mem.set(q, qp >> 2);
      refs.forEach((r, i) => mem.set(r, (rp >> 2) + i * featureLength));
      x.groupDistances(qp, rp, refs.length, out);
      return new Float32Array(x.memory.buffer, out, refs.length * groupCount).slice();
    },
  };
}
