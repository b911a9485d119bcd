/**
 * What the learning consumer needs from the verification core beyond enrolment: how far a candidate
 * signature lies from the subject's anchors alone, bound to src/verify and the isolate's WASM core.
 */
import { getCore } from "../verify/core-module";
import { DEFAULT_PARAMS } from "../verify/calibration";
import { compareToModel } from "../verify/compare";
import { buildReferenceModel } from "../verify/model";
import type { SignatureFeatures } from "../verify/features";

export interface LearningEngine {
  /** The model's own outlier bar (mean z over feature groups). */
  readonly outlierZ: number;
  /**
   * Mean z of the candidate's distance to the anchors, against a model of the anchors alone (0 = as far
   * as a typical genuine signature). `features` are as enrolReference stores them.
   */
  distanceToAnchors(candidate: unknown, anchors: { refId: string; features: unknown }[]): Promise<number>;
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
    outlierZ: DEFAULT_PARAMS.outlierZ,
    async distanceToAnchors(candidate, anchors) {
      const core = getCore();
      const model = buildReferenceModel(core, anchors.map((a) => ({ refId: a.refId, ...unpack(a.features) })));
      return compareToModel(core, unpack(candidate).features, model).distance;
    },
  };
}
