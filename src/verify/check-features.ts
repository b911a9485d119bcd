/**
 * A questioned signature's features, extracted for the one comparison its check makes.
 *
 *   extractForCheck(core, signature: Raster, model, params?): SignatureFeatures
 *
 * A reference carries a vector per regime (features.ts), because any later check may need any of them. A
 * check needs what its comparison reads: the regime is decided by the capture's measures against its
 * references (compare.ts regimeFor), and the measures are known once the crop is preprocessed, before any
 * vector is computed. So the core computes only those vectors (Core.extractOne): a blurred or binarised
 * check reads one vector, its regime's, and the result carries `regime`, so that compareToModel compares
 * it there without deciding again. A check compared as captured reads two, its own and its blurred one,
 * because its score blends the two regimes (compare.ts blurredShare); both come from one preprocessing.
 * So does a soft grey check binarised against bitonal references (binarisedBlurShare): its blurred vector
 * from the crop as preprocessed, and its binarised one from a second preprocessing of the same crop.
 */
import { edgeWidth } from "./blur-measure";
import { DEFAULT_PARAMS, type ScoringParams } from "./calibration";
import { type Regime, regimeFor, vectorKindFor } from "./compare";
import type { CheckVectors, Core, CropMeasures } from "./core";
import { encodeVector, featuresOf, roundMeasure, type SignatureFeatures } from "./features";
import type { ReferenceModel } from "./model";
import type { Raster } from "./types";

export function extractForCheck(
  core: Core,
  signature: Raster,
  model: ReferenceModel,
  params: ScoringParams = DEFAULT_PARAMS,
): SignatureFeatures {
  const width = roundMeasure(edgeWidth(signature));
  let chosen = "sharp" as Regime;
  let wanted = "sharp" as CheckVectors;
  const one = core.extractOne(signature, (m: CropMeasures) => {
    // Decided on the measures as they will be stored, so that compareToModel agrees from the result.
    const q = { edgeWidth: width, greyShare: roundMeasure(m.greyShare), resolution: roundMeasure(m.resolution) };
    const choice = regimeFor(q, model, params);
    chosen = choice.regime;
    const kind = vectorKindFor(chosen, q.greyShare);
    wanted = choice.blurredShare > 0 && kind !== "blurred" ? `${kind}+blurred` : kind;
    return wanted;
  });
  // A binarised rendering without ink comes back as captured (one.kind "sharp"): left without a regime,
  // compareToModel then compares it as captured, as it would any signature lacking the regime's vector.
  const regime = one.inkFound && chosen !== "sharp" && one.kind === wanted.replace("+blurred", "") ? chosen : null;
  return featuresOf(signature, one, width, one.vector, {
    ...(regime ? { regime } : {}),
    ...(one.blurred ? { blurred: encodeVector(one.blurred) } : {}),
  });
}
