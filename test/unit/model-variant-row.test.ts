// A stored reference has no raster when its subject's model is rebuilt: the variant distances kept at
// enrolment must give the same model as the raster would.
import { describe, expect, it } from "vitest";
import { getCore } from "../../src/verify/core-module";
import { extractFeatures } from "../../src/verify/features";
import { buildReferenceModel, variantDistanceRow } from "../../src/verify/model";
import { liveEngine } from "../../src/services/engine-live";
import { encodePng, makeWriter, renderSignature } from "../fixtures/generator";

const core = getCore();

describe("variant rows for few references", () => {
  it("a model from stored variant rows equals the model from the rasters", () => {
    const raster = renderSignature(makeWriter(300), { variant: 1 });
    const features = extractFeatures(core, raster);
    const fromRaster = buildReferenceModel(core, [{ refId: "r1", features, raster }]);
    const row = variantDistanceRow(core, raster);
    expect(row).not.toBeNull();
    const fromRow = buildReferenceModel(core, [{ refId: "r1", features, variantRow: row }]);
    expect(fromRow.stats).toEqual(fromRaster.stats);
    expect(fromRow.basis.variants).toBeGreaterThan(0);
    // The blurred regime's sub-model rests on the same row.
    expect(fromRaster.blurred).toBeDefined();
    expect(fromRow.blurred!.stats).toEqual(fromRaster.blurred!.stats);
    expect(fromRow.blurred!.basis.variants).toBeGreaterThan(0);
    // So does the binarised regime's (the rendering is grey: its references carry the binarised vector).
    expect(fromRaster.binarised).toBeDefined();
    expect(fromRow.binarised!.stats).toEqual(fromRaster.binarised!.stats);
    expect(fromRow.binarised!.basis.variants).toBeGreaterThan(0);
    // Without either, the model rests on the population prior alone.
    const priorOnly = buildReferenceModel(core, [{ refId: "r1", features }]);
    expect(priorOnly.basis.variants).toBe(0);
  });

  it("enrolment through the engine keeps the variant row, and its model uses it", async () => {
    const engine = liveEngine();
    const enrolled = await engine.enrolReference(encodePng(renderSignature(makeWriter(301), { variant: 2, height: 200 })));
    expect(enrolled.ok).toBe(true);
    if (!enrolled.ok) return;
    // What enrolment stores goes through JSON.
    const stored = JSON.parse(JSON.stringify(enrolled.features));
    const { model } = await engine.buildModel([{ refId: "only", features: stored }]);
    expect((model as { basis: { variants: number } }).basis.variants).toBeGreaterThan(0);
  });
});
