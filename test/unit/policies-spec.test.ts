import { describe, expect, it } from "vitest";
import { DEFAULT_POLICY_SPEC, PolicySpecSchema, canonicalJson, hasEnoughReferences, samePolicySpec } from "../../src/domain/policy";
import {
  DEFAULT_LEARNING_MIN_SCORE,
  DEFAULT_MIN_REFERENCES,
  DEFAULT_QUALITY_FLOOR,
  DEFAULT_THRESHOLDS,
  decide,
} from "../../src/domain/policy-defaults";

describe("PolicySpec", () => {
  it("the built-in default is made of the default rules", () => {
    expect(DEFAULT_POLICY_SPEC).toEqual({
      thresholds: DEFAULT_THRESHOLDS,
      quality_floor: DEFAULT_QUALITY_FLOOR,
      min_references: DEFAULT_MIN_REFERENCES,
      learning: { enabled: true, min_score: DEFAULT_LEARNING_MIN_SCORE },
    });
    expect(decide(0.95, DEFAULT_POLICY_SPEC.thresholds)).toBe("AUTO_APPROVE");
  });

  it("accepts equal thresholds and the bounds 0 and 1", () => {
    expect(PolicySpecSchema.safeParse({ thresholds: { auto_approve: 1, approve: 1, flag: 0 } }).success).toBe(true);
    expect(PolicySpecSchema.safeParse({ thresholds: { auto_approve: 0.5, approve: 0.5, flag: 0.5 } }).success).toBe(true);
  });

  it("refuses thresholds out of order, out of range, non-numbers and unknown members", () => {
    const bad = [
      { thresholds: { auto_approve: 0.5, approve: 0.6, flag: 0.1 } },
      { thresholds: { auto_approve: 0.9, approve: 0.7, flag: 0.4, extra: 0.1 } },
      { quality_floor: 1.01 },
      { quality_floor: Number.NaN },
      { min_references: 21 },
      { learning: { min_score: "0.5" } },
      { name: "x" },
    ];
    for (const b of bad) expect(PolicySpecSchema.safeParse(b).success, JSON.stringify(b)).toBe(false);
  });

  it("compares canonically: member order and number formatting do not matter", () => {
    const a = PolicySpecSchema.parse(JSON.parse('{"thresholds":{"auto_approve":0.90,"approve":0.7,"flag":4e-1},"min_references":1.0}'));
    const b = PolicySpecSchema.parse(JSON.parse('{"min_references":1,"thresholds":{"flag":0.4,"approve":0.70,"auto_approve":0.9}}'));
    expect(samePolicySpec(a, b)).toBe(true);
    expect(samePolicySpec(a, DEFAULT_POLICY_SPEC)).toBe(true);
    expect(samePolicySpec(a, { ...a, quality_floor: 0.36 })).toBe(false);
    expect(canonicalJson({ b: 1, a: { d: -0, c: [2, 1] } })).toBe('{"a":{"c":[2,1],"d":0},"b":1}');
  });

  it("checks a subject only when it has at least min_references usable references", () => {
    const spec = PolicySpecSchema.parse({ min_references: 3 });
    expect(hasEnoughReferences(spec, 2)).toBe(false);
    expect(hasEnoughReferences(spec, 3)).toBe(true);
    expect(hasEnoughReferences(DEFAULT_POLICY_SPEC, 0)).toBe(false);
    expect(hasEnoughReferences(DEFAULT_POLICY_SPEC, 1)).toBe(true);
  });
});
