// A dataset writer's first genuine signatures enrolled whole, as the pipeline enrols a bare signature image
// (enrolReference, then buildReferenceModel): the subject the end-to-end experiments check against.
import { readFileSync } from "node:fs";
import type { Core } from "../../src/verify/core";
import { buildReferenceModel, type ReferenceInput, type ReferenceModel } from "../../src/verify/model";
import { enrolReference } from "../../src/verify/pipeline";

/**
 * `paths` are image paths under `dir`; each enrolled with no quality floor. Null when fewer than two
 * could be enrolled, too few for a model worth checking against.
 */
export async function enrolledModel(core: Core, dir: string, paths: readonly string[]): Promise<ReferenceModel | null> {
  const refs: ReferenceInput[] = [];
  for (const path of paths) {
    const e = await enrolReference(core, new Uint8Array(readFileSync(`${dir}/${path}`)), { inputType: "signature_image", qualityFloor: 0 });
    if ("features" in e) refs.push({ refId: path, features: e.features, variantRow: e.variantRow ?? undefined });
  }
  return refs.length < 2 ? null : buildReferenceModel(core, refs);
}
