/** Grey scans of synthetic writers and reference models built from them, for the comparison regimes' tests. */
import { getCore } from "../../src/verify/core-module";
import { buildReferenceModel, type ReferenceModel } from "../../src/verify/model";
import { enrolReference } from "../../src/verify/pipeline";
import type { Raster } from "../../src/verify/types";
import { encodePng, makeWriter, renderSignature, scanOf } from "../fixtures/generator";

/** Writer `writer`'s signing number `variant` as a grey scan (soft stroke edges, scanner noise). */
export function greyScan(writer: number, variant: number): Raster {
  return scanOf(renderSignature(makeWriter(writer), { variant, height: 260 }), { seed: variant });
}

/** The model of the writer's signings 1 to 4, each captured by `capture` (as scanned by default), enrolled as the API does. */
export async function modelOfScans(writer: number, capture: (r: Raster) => Raster = (r) => r): Promise<ReferenceModel> {
  const core = getCore();
  const refs = [];
  for (let v = 1; v <= 4; v++) {
    const e = await enrolReference(core, encodePng(capture(greyScan(writer, v))), { qualityFloor: 0 });
    if (!("features" in e)) throw new Error(e.detail);
    refs.push({ refId: `r${v}`, features: e.features, variantRow: e.variantRow });
  }
  return buildReferenceModel(core, refs);
}
