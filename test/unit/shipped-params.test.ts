// The shipped scoring and forgeability parameters are fitted on feature vectors of one version of the core.
// Parameters fitted on another version would score nonsense without any error, so a change to the
// features must come with retrained files (npm run train:scoring, npm run train:forgeability).
import { describe, expect, it } from "vitest";
import { FEATURE_VERSION } from "../../src/verify/features";
import scoring from "../../src/verify/data/scoring.json";
import forgeability from "../../src/verify/data/forgeability.json";

describe("shipped parameters", () => {
  it("were fitted on the features the core extracts today", () => {
    expect(scoring.featureVersion).toBe(FEATURE_VERSION);
    expect(forgeability.featureVersion).toBe(FEATURE_VERSION);
    // The other regimes' parameters (compare.ts) are fitted with them, on the same writers.
    expect(scoring.blurred.featureVersion).toBe(FEATURE_VERSION);
    expect(scoring.blurred.trainedOn).toEqual(scoring.trainedOn);
    // And the binarised regime's.
    expect(scoring.binarised.featureVersion).toBe(FEATURE_VERSION);
    expect(scoring.binarised.trainedOn).toEqual(scoring.trainedOn);
    // And the blend of the first two: a share, and a shift per classifier band (calibration.ts).
    expect(scoring.blend.share).toBeGreaterThan(0);
    expect(scoring.blend.share).toBeLessThan(1);
    expect(scoring.blend.shift).toHaveLength(scoring.classifiers.length);
  });

  it("were fitted on both development datasets", () => {
    expect([...scoring.trainedOn].sort()).toEqual(["bhsig260-bengali", "sigcomp2011-dutch"]);
  });
});
