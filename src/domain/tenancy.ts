/**
 * Who calls and in which organisation: the tenancy vocabulary every layer shares. Authentication (http)
 * produces a Caller and a Tenant; storage, services and the Durable Objects only consume them.
 */

/** Every permission a route may declare (spec part 5). */
export const PERMISSIONS = [
  "sig:checks:create",
  "sig:checks:read",
  "sig:subjects:read",
  "sig:references:write",
  "sig:references:delete",
  "sig:settings:manage",
  "org:read",
  "org:children:access",
  // Designed here: managing the archive product's webhook endpoints (docs/webhooks.md).
  "archive:webhooks:manage",
] as const;
export type Permission = (typeof PERMISSIONS)[number];

export type CredentialKind = "api_key" | "user" | "session";

/** Who is calling, as established by authentication. */
export interface Caller {
  kind: CredentialKind;
  /** Audit actor: `key:<key id>`, `user:<user id>` or `session:<session id>`. */
  actor: string;
  /** The organisation the credential belongs to. */
  orgId: string;
  permissions: ReadonlySet<Permission>;
  keyId?: string;
  userId?: string;
  sessionId?: string;
  /** Subject a session token is bound to. */
  subjectReference?: string;
}

export type RegionName = "us" | "eu";

/** The storage of one region (the handles only; storage/regions.ts resolves them from the bindings). */
export interface RegionStore {
  name: RegionName;
  db: D1Database;
  files: R2Bucket;
}

export type BillingState = "active" | "inactive" | "canceled" | "parent";

/** An organisation as held in the directory. */
export interface Org {
  id: string;
  name: string;
  parentId: string | null;
  region: RegionName;
  /** Region the organisation is being moved to, while a move runs. */
  movingTo: RegionName | null;
  billing: BillingState;
  pinnedVersion: string;
  learning: boolean;
  allowHosts: string[];
  allowBuckets: string[];
  monthlyQuota: number | null;
  inboxTtlSeconds: number;
  suspended: boolean;
  createdAt: string;
}

/** The organisation a request acts in, with its region's storage. */
export interface Tenant {
  org: Org;
  store: RegionStore;
  /** True when the caller acts in a descendant through Service-Org. */
  actingAs: boolean;
}
