import { z } from "zod";
import { DEFAULT_LEARNING_MIN_SCORE, DEFAULT_MIN_REFERENCES, DEFAULT_QUALITY_FLOOR, DEFAULT_THRESHOLDS } from "./policy-defaults";

/**
 * A policy: how checks turn scores into decisions. PolicySpec is designed here (the spec leaves it
 * unshown). Every member is optional on input and filled from the built-in default, so the stored
 * spec is always complete and two bodies that mean the same thing compare equal.
 */

export const DEFAULT_POLICY_NAME = "default";
/** The largest accepted PolicySpec body. */
export const MAX_POLICY_BODY_BYTES = 64 * 1024;
/** Upper bound on min_references: a subject never needs more references than enrolment can hold. */
export const MAX_MIN_REFERENCES = 20;

const score = z.number().min(0, "must be at least 0").max(1, "must be at most 1");

const Thresholds = z
  .strictObject({
    auto_approve: score,
    approve: score,
    flag: score,
  })
  .superRefine((t, ctx) => {
    if (t.approve > t.auto_approve) ctx.addIssue({ code: "custom", path: ["approve"], message: "must not exceed auto_approve" });
    if (t.flag > t.approve) ctx.addIssue({ code: "custom", path: ["flag"], message: "must not exceed approve" });
  });

const Learning = z.strictObject({
  /** Learn confirmed items as references (the organisation's learning switch must also be on). */
  enabled: z.boolean().default(true),
  /** A confirmed item is learned only when its score reaches this bar. */
  min_score: score.default(DEFAULT_LEARNING_MIN_SCORE),
  /** Learned references kept per subject when learning from this policy's checks (default 20); the oldest learned goes first. */
  max_references: z.number().int("must be an integer").min(1, "must be at least 1").max(200, "must be at most 200").optional(),
});

export const PolicySpecSchema = z.strictObject({
  /** Score bars: >= auto_approve AUTO_APPROVE, >= approve APPROVE, >= flag FLAG, else FAILED. */
  thresholds: Thresholds.default({ ...DEFAULT_THRESHOLDS }),
  /** An input whose quality score falls below this floor is UNREADABLE. */
  quality_floor: score.default(DEFAULT_QUALITY_FLOOR),
  /** A subject with fewer live references cannot be checked. */
  min_references: z
    .number()
    .int("must be an integer")
    .min(1, "must be at least 1")
    .max(MAX_MIN_REFERENCES, `must be at most ${MAX_MIN_REFERENCES}`)
    .default(DEFAULT_MIN_REFERENCES),
  learning: Learning.default({ enabled: true, min_score: DEFAULT_LEARNING_MIN_SCORE }),
});

export type PolicySpec = z.output<typeof PolicySpecSchema>;
export type PolicySpecInput = z.input<typeof PolicySpecSchema>;

/** The built-in policy every tenant has as version 1 of `default`. */
export const DEFAULT_POLICY_SPEC: PolicySpec = PolicySpecSchema.parse({});

/** The parts of a policy one check applies to its scores; the verification core takes only these. */
export type CheckPolicy = Pick<PolicySpec, "thresholds" | "quality_floor">;

/** The minimum-references rule: a subject is checked only with at least min_references usable references. */
export function hasEnoughReferences(spec: Pick<PolicySpec, "min_references">, usable: number): boolean {
  return usable >= spec.min_references;
}

/** A published policy version. Versions are immutable. */
export interface Policy {
  name: string;
  version: number;
  spec: PolicySpec;
  createdAt: string;
  /** Audit actor who published it; null for the built-in default. */
  createdBy: string | null;
  builtin: boolean;
}

/** JSON with object keys sorted at every level: equal specs give equal strings. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") {
    // -0 and 0 are the same threshold.
    return JSON.stringify(typeof value === "number" && Object.is(value, -0) ? 0 : value);
  }
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

/** Two specs are the same policy when their canonical forms are equal. */
export function samePolicySpec(a: PolicySpec, b: PolicySpec): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/** The built-in default policy of a tenant created at `createdAt`. */
export function builtinDefaultPolicy(createdAt: string): Policy {
  return { name: DEFAULT_POLICY_NAME, version: 1, spec: DEFAULT_POLICY_SPEC, createdAt, createdBy: null, builtin: true };
}
