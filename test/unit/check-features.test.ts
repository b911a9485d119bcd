// A check extracts only the vector its comparison reads (src/verify/check-features.ts). These tests hold
// it to what it replaces: for every regime, comparing those features gives exactly the comparison of the
// same crop extracted as a reference (every regime's vector, the regime decided at comparison).
import { describe, expect, it } from "vitest";
import { extractForCheck } from "../../src/verify/check-features";
import { compareToModel, ModelMismatchError } from "../../src/verify/compare";
import { getCore } from "../../src/verify/core-module";
import { extractFeatures } from "../../src/verify/features";
import type { ReferenceModel } from "../../src/verify/model";
import type { Raster } from "../../src/verify/types";
import { blankPage, photoOf, resizeRaster } from "../fixtures/generator";
import { greyScan, modelOfScans as modelOf } from "../helpers/scan-models";

const bitonal = (r: Raster): Raster => ({ width: r.width, height: r.height, data: r.data.map((v) => (v < 128 ? 0 : 255)) });

describe("a check's features", () => {
  it("compare exactly as the crop's reference features do, in every regime", async () => {
    const core = getCore();
    const grey = await modelOf(3, (r) => r);
    const bw = await modelOf(3, bitonal);
    const cases: [string, Raster, ReferenceModel, string | undefined][] = [
      ["grey against grey", greyScan(3, 7), grey, undefined],
      ["another writer, grey against grey", greyScan(21, 7), grey, undefined],
      ["out of focus against sharp", photoOf(greyScan(3, 7), { seed: 2, blur: 1.5, noise: 5 }), grey, "blurred"],
      ["bitonal against grey", bitonal(greyScan(3, 7)), grey, "binarised"],
      // Writer 57 signs smaller than writer 3: below COARSER_RESOLUTION, blurred goes first.
      ["another writer, bitonal and smaller, against grey", bitonal(greyScan(57, 7)), grey, "blurred"],
      ["another writer, bitonal against grey", bitonal(greyScan(21, 7)), grey, "binarised"],
      ["grey against bitonal", greyScan(3, 7), bw, "binarised"],
      ["bitonal against bitonal", bitonal(greyScan(3, 7)), bw, undefined],
      ["grey at half resolution against bitonal", resizeRaster(greyScan(3, 7), 300, 130), bw, "blurred"],
    ];
    for (const [name, q, model, regime] of cases) {
      const check = extractForCheck(core, q, model);
      const reference = extractFeatures(core, q);
      const a = compareToModel(core, check, model);
      const b = compareToModel(core, reference, model);
      expect(a.regime, name).toBe(regime);
      expect(a, name).toEqual(b);
      // One vector, marked with its regime when it is not the capture's own; compared as captured, the
      // blurred one beside it, since the score blends both (compare.ts blurredShare).
      expect(check.regime, name).toBe(regime);
      expect(check.binarised, name).toBeUndefined();
      if (regime === undefined) {
        expect(a.blurredShare, name).toBeGreaterThan(0);
        expect(check.blurred, name).toBe(reference.blurred);
      } else expect(check.blurred, name).toBeUndefined();
    }
  });

  it("of a blank crop score 0, as captured", async () => {
    const core = getCore();
    const model = await modelOf(3, (r) => r);
    const f = extractForCheck(core, blankPage(300, 120), model);
    expect(f.inkFound).toBe(false);
    expect(f.regime).toBeUndefined();
    expect(compareToModel(core, f, model).score).toBe(0);
  });

  it("are refused against a model that would compare them in another regime", async () => {
    const core = getCore();
    const grey = await modelOf(3, (r) => r);
    const bw = await modelOf(3, bitonal);
    const f = extractForCheck(core, greyScan(3, 7), bw);
    expect(f.regime).toBe("binarised");
    expect(() => compareToModel(core, f, grey)).toThrow(ModelMismatchError);
  });
});
