import { DEFAULT_POLICY_NAME, PolicySpecSchema, builtinDefaultPolicy, canonicalJson, type Policy } from "../domain/policy";
import type { RegionName } from "../domain/tenancy";
import { and, desc, eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { auditStatement } from "./audit";
import { type PolicyCacheUse, cachedLatestPolicies, forgetPolicies } from "./policy-cache";
import { policies } from "./schema/policies";

/** The organisation a policy belongs to: its id, and its creation time (that of the built-in default). */
export interface PolicyOwner {
  id: string;
  createdAt: string;
}

type PolicyRow = typeof policies.$inferSelect;

function toPolicy(row: Pick<PolicyRow, "name" | "version" | "spec" | "createdBy" | "createdAt">): Policy {
  return {
    name: row.name,
    version: row.version,
    spec: PolicySpecSchema.parse(JSON.parse(row.spec)),
    createdAt: row.createdAt,
    createdBy: row.createdBy,
    builtin: false,
  };
}

/** The latest version of a policy (checks use it), or null when the tenant has no such policy. */
export async function getLatestPolicy(db: D1Database, org: PolicyOwner, name: string): Promise<Policy | null> {
  const row = await drizzle(db)
    .select()
    .from(policies)
    .where(and(eq(policies.orgId, org.id), eq(policies.name, name)))
    .orderBy(desc(policies.version))
    .limit(1)
    .get();
  if (row) return toPolicy(row);
  return name === DEFAULT_POLICY_NAME ? builtinDefaultPolicy(org.createdAt) : null;
}

/** One version of a policy, or null. */
export async function getPolicyVersion(db: D1Database, org: PolicyOwner, name: string, version: number): Promise<Policy | null> {
  if (name === DEFAULT_POLICY_NAME && version === 1) return builtinDefaultPolicy(org.createdAt);
  const row = await drizzle(db)
    .select()
    .from(policies)
    .where(and(eq(policies.orgId, org.id), eq(policies.name, name), eq(policies.version, version)))
    .get();
  return row ? toPolicy(row) : null;
}

/** The latest version of each of the tenant's policies, the built-in default included; newest first. */
export async function listLatestPolicies(db: D1Database, org: PolicyOwner): Promise<Policy[]> {
  const { results } = await db
    .prepare(
      `SELECT p.name, p.version, p.spec, p.created_by AS createdBy, p.created_at AS createdAt FROM policies p
       WHERE p.org_id = ?1 AND p.version = (SELECT MAX(version) FROM policies q WHERE q.org_id = ?1 AND q.name = p.name)
       ORDER BY p.created_at DESC, p.name`,
    )
    .bind(org.id)
    .all<Pick<PolicyRow, "name" | "version" | "spec" | "createdBy" | "createdAt">>();
  const latest = results.map(toPolicy);
  if (!latest.some((p) => p.name === DEFAULT_POLICY_NAME)) latest.push(builtinDefaultPolicy(org.createdAt));
  return latest;
}

/**
 * listLatestPolicies for a read that only shows policies (GET /sig/policies): from the isolate's policy
 * cache when `use.mayUseCache` (storage/policy-cache.ts, at most POLICY_CACHE_TTL_MS old), else from the
 * region's database. Never for a decision: checks, sessions and live capture use getLatestPolicy.
 */
export function latestPoliciesForRead(
  store: { name: RegionName; db: D1Database },
  org: PolicyOwner,
  use: PolicyCacheUse,
): Promise<readonly Policy[]> {
  return cachedLatestPolicies(store.name, org.id, use, () => listLatestPolicies(store.db, org));
}

/**
 * The latest version of one policy, for a read that only shows it (GET /sig/policies/{name}): taken from
 * latestPoliciesForRead's list, which holds what getLatestPolicy would answer for each name (the built-in
 * default included while `default` was never published). Null when there is no such policy.
 */
export async function latestPolicyForRead(
  store: { name: RegionName; db: D1Database },
  org: PolicyOwner,
  name: string,
  use: PolicyCacheUse,
): Promise<Policy | null> {
  return (await latestPoliciesForRead(store, org, use)).find((p) => p.name === name) ?? null;
}

/**
 * Stores a new policy version and its audit entry in one batch. False when the version number is
 * already taken (another publisher won the race); the caller re-reads and decides (services/policies.ts).
 */
export async function insertPolicyVersion(
  db: D1Database,
  org: PolicyOwner,
  policy: Policy,
  audit: { actor: string; requestId?: string; previousVersion: number | null },
): Promise<boolean> {
  try {
    await db.batch([
      db
        .prepare("INSERT INTO policies (org_id, name, version, spec, created_by, created_at) VALUES (?, ?, ?, ?, ?, ?)")
        .bind(org.id, policy.name, policy.version, canonicalJson(policy.spec), policy.createdBy, policy.createdAt),
      auditStatement(db, {
        orgId: org.id,
        actor: audit.actor,
        action: "policy.update",
        target: `policy:${policy.name}`,
        detail: { version: policy.version, previous_version: audit.previousVersion },
        requestId: audit.requestId,
      }),
    ]);
    return true;
  } catch (err) {
    if (/UNIQUE|PRIMARY KEY|constraint/i.test(String(err))) return false;
    throw err;
  } finally {
    // After the write, whatever its outcome: a read of this isolate that starts from here sees it, and one
    // already in flight does not cache what it read (policy-cache.ts's generation).
    forgetPolicies(org.id);
  }
}
