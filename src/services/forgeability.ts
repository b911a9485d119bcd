/**
 * The subject's forgeability estimate as the API shows it (docs/forgeability.md): computed with the
 * reference model at the approve threshold of the organisation's `default` policy, stored on the subject
 * row as JSON, and read back as is by the subject view and the enrolment result.
 */
import { DEFAULT_POLICY_NAME } from "../domain/policy";
import { DEFAULT_THRESHOLDS } from "../domain/policy-defaults";
import type { Forgeability } from "../verify/forgeability";
import { getLatestPolicy } from "../storage/policies";

export interface ForgeabilityRecord {
  estimated_far_at_approve: number;
  approve_threshold: number;
  /** `<name>@<version>` of the policy whose approve threshold it was computed at. */
  policy: string;
  level: Forgeability["level"];
  advice: string | null;
  consistency: number;
  complexity: number;
  basis: { references: number; variants: number };
  version: number;
  computed_at: string;
}

/** The policy a subject's estimate is computed for: the organisation's `default` policy, latest version. */
export async function forgeabilityPolicy(db: D1Database, orgId: string): Promise<{ ref: string; approveThreshold: number }> {
  // The owner's creation time only dates the built-in default, which is not shown here.
  const policy = await getLatestPolicy(db, { id: orgId, createdAt: "" }, DEFAULT_POLICY_NAME);
  // getLatestPolicy falls back to the built-in default, so the fallbacks here only satisfy the types.
  const approveThreshold = policy?.spec.thresholds.approve ?? DEFAULT_THRESHOLDS.approve;
  return { ref: `${policy?.name ?? DEFAULT_POLICY_NAME}@${policy?.version ?? 1}`, approveThreshold };
}

export function forgeabilityRecord(f: Forgeability, policy: string, now: string): ForgeabilityRecord {
  return {
    estimated_far_at_approve: f.estimatedFarAtApprove,
    approve_threshold: f.approveThreshold,
    policy,
    level: f.level,
    advice: f.advice,
    consistency: f.consistency,
    complexity: f.complexity,
    basis: f.basis,
    version: f.version,
    computed_at: now,
  };
}

/** The stored estimate, or null when none was computed (no live reference, or a model older than estimates). */
export function parseForgeability(json: string | null | undefined): ForgeabilityRecord | null {
  if (!json) return null;
  try {
    return JSON.parse(json) as ForgeabilityRecord;
  } catch {
    return null;
  }
}
