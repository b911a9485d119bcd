// The core's output is pinned to FEATURE_VERSION. Stored references carry the version their vectors were
// extracted with, and are re-extracted only when it differs (docs/feature-upgrades.md). A change to the
// core that moves any vector, however slightly, without a new version would compare new checks against
// old references computed differently. Speed work on the kernels must leave every bit as it was.
import { describe, expect, it } from "vitest";
import coreModule from "../../wasm/build/core.wasm";
import { createCore } from "../../src/verify/core";
import { FEATURE_VERSION } from "../../src/verify/features";
import { JITTERS } from "../../src/verify/model";
import { photoOf, makeWriter, renderSignature } from "../fixtures/generator";

/**
 * SHA-256 of every vector the core gives for a fixed set of renderings, by feature version. When the core
 * is meant to change its features: bump FEATURE_VERSION (src/verify/features.ts), retrain the shipped
 * parameters, and record the new digest here under the new version.
 */
const PINNED: Record<number, string> = {
  5: "4d83d3b4f5b90cb2d87e132164e4ec38ebe502840c0b5c73aaf0d83bdf82c87d",
  // Version 6: paper under uneven light is evened out before the ink threshold (wasm/lib/preprocess.ts flatten).
  6: "6d1426b4b273602d972dda2479b4d5ad3951c79e766a1a227f6ac1f86ccd01dd",
  // Version 7: the vector as captured and the binarised one are the mean over two sampling grids (core.ts phasedVector).
  7: "e767f069a6833a2f62d08895d8344a76acb9ae159d0e7304f99fa87ea809cb12",
  // Version 8: the texture groups are the mean over four sampling grids, the shape groups from one; the
  // orientation and polar sector without trigonometry (wasm/lib/features.ts).
  8: "68b25b8d1d0594fe21806b8133eec32027f84ef94b4d9ba70febb057856c3da3",
  // Version 9: the texture groups are the mean over nine sampling grids (core.ts EXTRA_GRIDS).
  9: "f16cdfe718720f8380718b9f7badab4fd6a0a11a12a4808e01254009a74d9d3f",
  // Version 10: a fifteenth group, the orientation strips, matched by DTW (wasm/lib/features.ts, distance.ts).
  10: "22939a93b7140cbb8b775d19bb5f0daad03142a64bd532b31133741475f4a898",
  // Version 11: the orientation strips split, and the column sequence's contours measured, at the ink centroid
  // of the strips around each point (wasm/lib/features.ts stripSplits).
  11: "b6b813fd66ac06fc2dbf59a3fbbb97def2c3c0f0ad9b455d5d808d78aca8fb56",
  // Version 13 (12 was E71's, given back): whether to even out the paper is decided on the closed paper
  // level, not on tiles (wasm/lib/preprocess.ts flatten); of these renderings only the phone photo is
  // evened out, and it moves.
  13: "768eae9eb96cbc277dd808d52f123ecc316fc9a45980720544b5cc61371058da",
};

/** Four writers at several sizes (one a large crop, one small), one of them as a blurred phone photo. */
function renderings() {
  return [
    renderSignature(makeWriter(3), { height: 220 }),
    renderSignature(makeWriter(8), { width: 1200, height: 400 }),
    renderSignature(makeWriter(11), { height: 90 }),
    photoOf(renderSignature(makeWriter(14), { height: 260 }), { seed: 2, blur: 1.5, noise: 4 }),
  ];
}

async function digestOf(vectors: Float32Array[]): Promise<string> {
  const bytes = new Uint8Array(vectors.reduce((n, v) => n + v.byteLength, 0));
  let at = 0;
  for (const v of vectors) {
    bytes.set(new Uint8Array(v.buffer, v.byteOffset, v.byteLength), at);
    at += v.byteLength;
  }
  const hash = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(hash, (b) => b.toString(16).padStart(2, "0")).join("");
}

describe("the core's features", () => {
  it("are bit for bit those recorded for the current FEATURE_VERSION, in every regime and variant", async () => {
    const core = createCore(coreModule);
    const vectors: Float32Array[] = [];
    for (const raster of renderings()) {
      const { main, variants } = core.extract(raster, JITTERS, { blurred: true, binarised: () => true });
      expect(main.inkFound).toBe(true);
      expect(main.binarised).not.toBeNull();
      vectors.push(main.vector, main.blurred, main.binarised as Float32Array, ...variants);
    }
    expect(vectors).toHaveLength(4 * (3 + JITTERS.length));
    const digest = await digestOf(vectors);
    expect(
      digest,
      `the core's features changed: if that is meant, bump FEATURE_VERSION and record ${digest} for it; if not, a kernel change moved them`,
    ).toBe(PINNED[FEATURE_VERSION]);
  });
});
