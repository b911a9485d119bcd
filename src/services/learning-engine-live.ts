/**
 * What the learning consumer needs from the verification core beyond enrolment: how far a candidate
 * signature lies from the subject's anchors alone, bound to src/verify and the isolate's WASM core.
 */
import { getCore } from "../verify/core-module";
import { compareToModel } from "../verify/compare";
import { buildReferenceModel } from "../verify/model";
import type { SignatureFeatures } from "../verify/features";

export interface LearningEngine {
  /**
   * The candidate against a model of the anchors alone: `distance` is the mean z of its distance to them
   * (0 = as far as a typical genuine signature), `score` the calibrated score. `features` are as
   * enrolReference stores them.
   */
  compareToAnchors(candidate: unknown, anchors: { refId: string; features: unknown }[]): Promise<{ distance: number; score: number }>;
}

interface StoredFeatures {
  signature: SignatureFeatures;
  variantRow: number[] | null;
}

function unpack(f: unknown): { features: SignatureFeatures; variantRow?: number[] | null } {
  const stored = f as StoredFeatures | SignatureFeatures;
  return "signature" in stored ? { features: stored.signature, variantRow: stored.variantRow } : { features: stored };
}

export function liveLearningEngine(): LearningEngine {
  return {
    async compareToAnchors(candidate, anchors) {
      const core = getCore();
      const model = buildReferenceModel(
        core,
        anchors.map((a) => ({ refId: a.refId, ...unpack(a.features) })),
      );
      const c = compareToModel(core, unpack(candidate).features, model);
      return { distance: c.distance, score: c.score };
    },
  };
}
