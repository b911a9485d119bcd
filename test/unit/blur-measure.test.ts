// The blur measure that sends a questioned signature to the blurred comparison regime (src/verify/blur-measure.ts,
// compare.ts): sharp captures stay below the threshold, photos out of focus go above it, and nothing to
// measure gives null; questioned features carry the blurred vector only when it will be compared.
import { describe, expect, it } from "vitest";
import { BLURRED_EDGE_WIDTH, edgeWidth } from "../../src/verify/blur-measure";
import { DEFAULT_PARAMS } from "../../src/verify/calibration";
import { extractForCheck } from "../../src/verify/check-features";
import { compareToModel } from "../../src/verify/compare";
import { getCore } from "../../src/verify/core-module";
import { extractFeatures, isBlurred, type SignatureFeatures } from "../../src/verify/features";
import { buildReferenceModel, type ReferenceModel } from "../../src/verify/model";
import { analyseDocument, enrolReference } from "../../src/verify/pipeline";
import type { Raster } from "../../src/verify/types";
import {
  blankPage,
  encodePng,
  makeWriter,
  photoOf,
  renderForm,
  renderSignature,
  resizeRaster,
  scanOf,
  signatureBoxes,
} from "../fixtures/generator";

/** A writer's signature as a 300 dpi crop holds it. */
function signature(seed: number, variant = 1): Raster {
  return renderSignature(makeWriter(seed), { variant, height: 300 });
}

describe("edgeWidth", () => {
  it("reads sharp renderings and scans below the threshold, and photos out of focus above it", () => {
    for (const seed of [3, 11, 27]) {
      const sig = signature(seed);
      const sharp = edgeWidth(sig)!;
      const scanned = edgeWidth(scanOf(sig, { seed }))!;
      const photo = edgeWidth(photoOf(sig, { seed, blur: 1.5, noise: 5 }))!;
      expect(sharp, `writer ${seed} as drawn`).toBeLessThan(BLURRED_EDGE_WIDTH);
      expect(scanned, `writer ${seed} scanned`).toBeLessThan(BLURRED_EDGE_WIDTH);
      expect(photo, `writer ${seed} photographed out of focus`).toBeGreaterThan(BLURRED_EDGE_WIDTH);
      expect(isBlurred(photo)).toBe(true);
      expect(isBlurred(sharp)).toBe(false);
    }
  });

  it("grows with the blur", () => {
    const sig = signature(5);
    const widths = [0.5, 1.5, 3].map((blur) => edgeWidth(photoOf(sig, { seed: 1, blur, noise: 0 }))!);
    expect(widths[0]).toBeLessThan(widths[1]);
    expect(widths[1]).toBeLessThan(widths[2]);
  });

  it("gives null for blank paper, a crop too small to profile an edge in, and ink without contrast", () => {
    expect(edgeWidth(blankPage(400, 200))).toBeNull();
    expect(edgeWidth(blankPage(8, 8, 0))).toBeNull();
    const faint = signature(7);
    const flat: Raster = { ...faint, data: faint.data.map((v) => 240 + Math.round((v / 255) * 10)) };
    expect(edgeWidth(flat)).toBeNull();
    expect(isBlurred(null)).toBe(false);
  });

  it("measures a page-sized crop from a bounded lattice, with the same answer", () => {
    const sig = signature(9);
    const big: Raster = blankPage(sig.width * 4, sig.height * 4);
    for (let ty = 0; ty < 4; ty++)
      for (let tx = 0; tx < 4; tx++)
        for (let y = 0; y < sig.height; y++)
          big.data.set(sig.data.subarray(y * sig.width, (y + 1) * sig.width), (ty * sig.height + y) * big.width + tx * sig.width);
    expect(edgeWidth(big)).toBeCloseTo(edgeWidth(sig)!, 0);
  });
});

describe("questioned features", () => {
  it("carry only the vectors their check compares: both for a sharp capture (the blend), the blurred one for a blurred capture; references carry every regime's", () => {
    const core = getCore();
    const sig = signature(13);
    const reference = extractFeatures(core, sig);
    expect(reference.blurred).toBeDefined();
    const model = buildReferenceModel(core, [{ refId: "r", features: reference }]);
    const sharp = extractForCheck(core, sig, model);
    // Scored as a blend of both regimes (compare.ts blurredShare, the shipped params.blend): both vectors,
    // the same a reference extraction gives.
    expect(sharp.blurred).toBe(reference.blurred);
    expect(sharp.binarised).toBeUndefined();
    expect(sharp.regime).toBeUndefined();
    expect(sharp.edgeWidth).toBeLessThan(BLURRED_EDGE_WIDTH);
    expect(reference.vector).toBe(sharp.vector);
    const blurred = photoOf(sig, { seed: 2, blur: 1.5, noise: 5 });
    const photo = extractForCheck(core, blurred, model);
    expect(photo.regime).toBe("blurred");
    expect(photo.blurred).toBeUndefined();
    // Its one vector is the blurred regime's, the same a reference extraction gives that capture.
    expect(photo.vector).toBe(extractFeatures(core, blurred).blurred);
  });
});

describe("a capture of coarser resolution than its references", () => {
  // A 150 dpi scan against 300 dpi references: resampled to the normalised size, its strokes are as soft
  // as a capture out of focus, and it is compared in the blurred regime (compare.ts, COARSER_RESOLUTION).
  async function model(writer: number) {
    const refs = [];
    for (let v = 1; v <= 4; v++) {
      const e = await enrolReference(
        getCore(),
        encodePng(scanOf(renderSignature(makeWriter(writer), { variant: v, height: 260 }), { seed: v })),
        {
          qualityFloor: 0,
        },
      );
      if (!("features" in e)) throw new Error(e.detail);
      refs.push({ refId: `r${v}`, features: e.features, variantRow: e.variantRow });
    }
    return buildReferenceModel(getCore(), refs);
  }
  const halfScan = (writer: number, variant: number): Raster => {
    const full = renderSignature(makeWriter(writer), { variant, height: 260 });
    return scanOf(resizeRaster(full, Math.round(full.width / 2), Math.round(full.height / 2)), { seed: variant });
  };

  it("approves the writer's own at half the resolution in the blurred regime, and rejects other writers'", async () => {
    const core = getCore();
    const m = await model(21);
    const own = compareToModel(core, extractForCheck(core, halfScan(21, 7), m), m);
    expect(own.regime).toBe("blurred");
    expect(own.score).toBeGreaterThanOrEqual(0.7);
    for (const other of [3, 57, 101]) {
      const c = compareToModel(core, extractForCheck(core, halfScan(other, 7), m), m);
      expect(c.score, `writer ${other}`).toBeLessThan(0.4);
    }
    // At the references' own resolution nothing switches.
    const same = compareToModel(
      core,
      extractForCheck(core, scanOf(renderSignature(makeWriter(21), { variant: 7, height: 260 }), { seed: 7 }), m),
      m,
    );
    expect(same.regime).toBeUndefined();
  });
});

describe("the blurred regime", () => {
  /** The writer's signature on the demo form (README: form-photo.png), photographed or scanned, as a check locates it. */
  /** With `model`, the features a check extracts against it; without, a reference's (every regime's vector). */
  async function onForm(writer: number, variant: number, photographed: boolean, model?: ReferenceModel): Promise<SignatureFeatures> {
    const boxes = signatureBoxes(1240, 1754, 2);
    const filled = renderForm({ signatures: [{ writer: makeWriter(writer), variant, box: boxes[0] }], boxes, seed: 9 }).raster;
    const page = photographed ? photoOf(filled, { seed: 5, rotation: 2 }) : scanOf(filled, { seed: 5, dx: 14, dy: -9, rotation: 1 });
    const a = await analyseDocument(encodePng(page), { inputType: photographed ? "photo" : "scan", qualityFloor: 0, renderCrops: false });
    expect(a.signatures.length).toBeGreaterThan(0);
    const best = a.signatures.reduce((p, q) => (q.confidence > p.confidence ? q : p));
    const crop = a.crops[a.signatures.indexOf(best)];
    return model ? extractForCheck(getCore(), crop, model) : extractFeatures(getCore(), crop);
  }

  async function cleanModel(writer: number, photographed = false) {
    const core = getCore();
    const refs = [];
    for (let v = 0; v < 4; v++) {
      const image = renderSignature(makeWriter(writer), { variant: v, height: 200 });
      const e = await enrolReference(core, encodePng(photographed ? photoOf(image, { seed: v, blur: 1.5, noise: 5 }) : image), {
        qualityFloor: 0,
      });
      if (!("features" in e)) throw new Error(e.detail);
      refs.push({ refId: `r${v}`, features: e.features, variantRow: e.variantRow });
    }
    return buildReferenceModel(core, refs);
  }

  it("approves a writer's own signature photographed on a form against references from clean images", async () => {
    const core = getCore();
    for (const writer of [101, 21]) {
      const model = await cleanModel(writer);
      expect(model.blurred, "the model holds the references' blurred regime").toBeDefined();
      const photo = await onForm(writer, 2, true, model);
      expect(isBlurred(photo.edgeWidth), `writer ${writer}: edge width ${photo.edgeWidth}`).toBe(true);
      const c = compareToModel(core, photo, model);
      expect(c.regime).toBe("blurred");
      expect(c.score, `writer ${writer}`).toBeGreaterThanOrEqual(0.7);
      // As captured, the blurred strokes' texture is no writer's: the regime is what approves it.
      const asCaptured = await onForm(writer, 2, true);
      expect(compareToModel(core, asCaptured, model, { ...DEFAULT_PARAMS, blurred: undefined }).score).toBeLessThan(0.4);
      // The scan of the same form is sharp and compared as it is.
      const scan = compareToModel(core, await onForm(writer, 2, false, model), model);
      expect(scan.regime).toBeUndefined();
      expect(scan.score).toBeGreaterThanOrEqual(0.7);
    }
  });

  it("rejects other writers' signatures photographed on the form", async () => {
    const core = getCore();
    const model = await cleanModel(101);
    // Whichever regime its edges send it to (a thin pen's photo can read sharp), it is rejected.
    const regimes = [];
    for (const other of [202, 21, 57, 8]) {
      const c = compareToModel(core, await onForm(other, 2, true, model), model);
      regimes.push(c.regime);
      expect(c.score, `writer ${other}`).toBeLessThan(0.4);
    }
    expect(regimes).toContain("blurred");
  });

  it("compares a photo as it is when the references are photos too: matched blur needs no second regime", async () => {
    const model = await cleanModel(101, true);
    const photo = await onForm(101, 2, true, model);
    expect(isBlurred(photo.edgeWidth)).toBe(true);
    expect(compareToModel(getCore(), photo, model).regime).toBeUndefined();
  });
});
