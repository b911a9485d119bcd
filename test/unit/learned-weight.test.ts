// Anchors stay in charge: a learned reference (even a forgery confirmed by mistake) cannot carry a match alone.
import { describe, expect, it } from "vitest";
import { getCore } from "../../src/verify/core-module";
import { compareToModel } from "../../src/verify/compare";
import { extractFeatures } from "../../src/verify/features";
import { buildReferenceModel } from "../../src/verify/model";
import { makeWriter, renderSignature } from "../fixtures/generator";

const core = getCore();
const sig = (writer: number, variant: number) => extractFeatures(core, renderSignature(makeWriter(writer), { variant }));
const anchors = [1, 2, 3].map((v) => ({ refId: `a${v}`, features: sig(700, v) }));

describe("learned references in the model", () => {
  it("flags a learned reference far from the anchors and never flags an anchor because of learned ones", () => {
    const model = buildReferenceModel(core, [...anchors, { refId: "learned-x", features: sig(701, 1), learned: true }]);
    expect(model.refs.filter((r) => r.outlier).map((r) => r.refId)).toEqual(["learned-x"]);
    expect(model.refs.find((r) => r.refId === "learned-x")!.learned).toBe(true);
  });

  it("lets a mistaken learned forgery lower the forger's distance only down to the floor, unlike an anchor", () => {
    const forgery = sig(701, 1);
    const asAnchor = buildReferenceModel(core, [...anchors, { refId: "f", features: forgery }]);
    const asLearned = buildReferenceModel(core, [...anchors, { refId: "f", features: forgery, learned: true }]);
    // Suppose the entry bar had let it in: force it active in both models.
    for (const m of [asAnchor, asLearned]) m.refs.forEach((r) => (r.outlier = false));
    const next = sig(701, 2);
    const scoreAnchor = compareToModel(core, next, asAnchor).score;
    const scoreLearned = compareToModel(core, next, asLearned).score;
    expect(scoreLearned).toBeLessThan(scoreAnchor);
    expect(scoreLearned).toBeLessThan(0.7);
    // Not even the learned forgery itself: its distance to the learned reference is 0, and the nearest
    // reference's distance is floored like the k-nearest one.
    expect(compareToModel(core, forgery, asLearned).score).toBeLessThan(0.7);
    // Genuine signatures still score as before.
    const genuine = sig(700, 9);
    expect(compareToModel(core, genuine, asLearned).score).toBeGreaterThan(0.7);
  });
});
