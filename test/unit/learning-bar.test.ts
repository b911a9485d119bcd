import { describe, expect, it } from "vitest";
import {
  AMBIGUITY_MARGIN,
  LEARNING_OUTLIER_Z,
  candidateRefusal,
  confirmRefusal,
  evictions,
  learnedRefId,
  recordRefusal,
  type RecordFacts,
} from "../../src/domain/learning-bar";

const ok: RecordFacts = {
  blocked: false,
  inputAvailable: true,
  signatureScores: [0.9],
  bestSignature: 0,
  score: 0.9,
  quality: 0.8,
  policy: { quality_floor: 0.35, min_score: 0.8 },
  anchors: 3,
  subjectChange: null,
};

describe("the learning entry bar", () => {
  it("lets a clean confirmed item through", () => {
    expect(recordRefusal(ok)).toBeNull();
    expect(candidateRefusal({ quality: 0.8, qualityFloor: 0.35, distanceToAnchors: 0, anchorScore: 0.9, minScore: 0.8 })).toBeNull();
  });

  it.each([
    ["blocked", { blocked: true }],
    ["input_expired", { inputAvailable: false }],
    ["no_signature", { signatureScores: [], bestSignature: null }],
    ["ambiguous_signature", { signatureScores: [0.9, 0.9 - AMBIGUITY_MARGIN / 2], bestSignature: 0 }],
    ["low_quality", { quality: 0.2 }],
    ["low_score", { score: 0.79 }],
    ["low_score", { score: null }],
    ["subject_changed", { subjectChange: "The reference r0 has been replaced since." }],
    ["no_anchors", { anchors: 0 }],
  ] as const)("refuses with %s", (reason, change) => {
    expect(recordRefusal({ ...ok, ...change } as RecordFacts)?.reason).toBe(reason);
  });

  it("takes the best of several signatures when no other comes within the margin", () => {
    expect(recordRefusal({ ...ok, signatureScores: [0.2, 0.9, null], bestSignature: 1 })).toBeNull();
  });

  it("blocks before anything else, so an unlearned check never comes back", () => {
    expect(recordRefusal({ ...ok, blocked: true, inputAvailable: false, score: 0 })?.reason).toBe("blocked");
  });

  it("refuses at confirmation, in the consumer's order, only what no later state can change", () => {
    const settled = { inputAvailable: true, signatures: 1, subjectGone: null };
    expect(confirmRefusal(settled)).toBeNull();
    expect(confirmRefusal({ ...settled, inputAvailable: false, signatures: 0 })?.reason).toBe("input_expired");
    expect(confirmRefusal({ ...settled, signatures: 0, subjectGone: "deleted" })?.reason).toBe("no_signature");
    expect(confirmRefusal({ ...settled, subjectGone: "The subject has been deleted since the check." })).toEqual({
      reason: "subject_changed",
      detail: "The subject has been deleted since the check.",
    });
  });

  it("refuses a candidate that is an outlier against the anchors, or that only learned references vouch for", () => {
    const c = { quality: 0.8, qualityFloor: 0.35, distanceToAnchors: 0, anchorScore: 0.9, minScore: 0.8 };
    expect(candidateRefusal({ ...c, distanceToAnchors: LEARNING_OUTLIER_Z + 0.01 })?.reason).toBe("outlier");
    expect(candidateRefusal({ ...c, distanceToAnchors: Number.NaN })?.reason).toBe("outlier");
    expect(candidateRefusal({ ...c, anchorScore: 0.5 })?.reason).toBe("low_score");
    expect(candidateRefusal({ ...c, quality: 0.1 })?.reason).toBe("low_quality");
  });

  it("evicts the oldest learned references beyond the cap", () => {
    expect(evictions(["a", "b", "c"], 2)).toEqual(["a"]);
    expect(evictions(["a"], 2)).toEqual([]);
  });

  it("derives the learned ref_id from the check id, within the identifier rules", async () => {
    expect(await learnedRefId("chk_1", 3)).toBe("learned-chk_1.3");
    const long = await learnedRefId("x".repeat(128), 12);
    expect(long).toMatch(/^learned-[0-9a-f]{32}$/);
    expect(await learnedRefId("x".repeat(128), 13)).not.toBe(long);
  });
});
