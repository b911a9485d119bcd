import { and, desc, eq, isNull } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import type { BillingState, Org, Permission, RegionName } from "../domain/tenancy";
import { newId } from "../domain/ids";
import { apiKeys, orgs, type ApiKeyRow, type OrgRow } from "./schema/directory";
import { forgetApiKey, forgetOrgs } from "./directory-cache";

/** What an organisation is created with (defaults applied by the caller's schema). */
export interface NewOrg {
  name: string;
  region: RegionName;
  parentId: string | null;
  billing: BillingState;
  pinnedVersion: string;
  learning: boolean;
  allowHosts: string[];
  allowBuckets: string[];
  monthlyQuota: number | null;
  inboxTtlSeconds: number;
}

export interface ApiKeyRecord {
  keyId: string;
  orgId: string;
  name: string | null;
  prefix: string;
  secretHash: string;
  permissions: Permission[];
  createdBy: string;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
}

export type NewApiKey = Omit<ApiKeyRecord, "createdAt" | "revokedAt">;

function toOrg(row: OrgRow): Org {
  return {
    id: row.id,
    name: row.name,
    parentId: row.parentId,
    region: row.region,
    movingTo: row.movingTo,
    billing: row.billing,
    pinnedVersion: row.pinnedVersion,
    learning: row.learning,
    allowHosts: row.allowHosts,
    allowBuckets: row.allowBuckets,
    monthlyQuota: row.monthlyQuota,
    inboxTtlSeconds: row.inboxTtlSeconds,
    suspended: row.suspended,
    createdAt: row.createdAt,
  };
}

function toKey(row: ApiKeyRow): ApiKeyRecord {
  return {
    keyId: row.id,
    orgId: row.orgId,
    name: row.name,
    prefix: row.prefix,
    secretHash: row.secretHash,
    permissions: row.permissions as Permission[],
    createdBy: row.createdBy,
    createdAt: row.createdAt,
    expiresAt: row.expiresAt,
    revokedAt: row.revokedAt,
  };
}

/** Raw row of the recursive ancestor query (snake_case, as SQLite returns it). */
interface RawOrgRow {
  id: string;
  name: string;
  parent_id: string | null;
  region: RegionName;
  moving_to: RegionName | null;
  moving_since: string | null;
  billing: BillingState;
  pinned_version: string;
  learning: number;
  allow_hosts: string;
  allow_buckets: string;
  monthly_quota: number | null;
  inbox_ttl_seconds: number;
  suspended: number;
  created_at: string;
  depth: number;
}

function rawToOrg(r: RawOrgRow): Org {
  return {
    id: r.id,
    name: r.name,
    parentId: r.parent_id,
    region: r.region,
    movingTo: r.moving_to,
    billing: r.billing,
    pinnedVersion: r.pinned_version,
    learning: r.learning === 1,
    allowHosts: JSON.parse(r.allow_hosts) as string[],
    allowBuckets: JSON.parse(r.allow_buckets) as string[],
    monthlyQuota: r.monthly_quota,
    inboxTtlSeconds: r.inbox_ttl_seconds,
    suspended: r.suspended === 1,
    createdAt: r.created_at,
  };
}

/** Organisations and API keys in the global directory D1. */
export class Directory {
  readonly #raw: D1Database;
  readonly #db;

  constructor(db: D1Database) {
    this.#raw = db;
    this.#db = drizzle(db);
  }

  async createOrg(input: NewOrg): Promise<Org> {
    const row = { id: newId("org"), ...input, createdAt: new Date().toISOString() };
    await this.#db.insert(orgs).values(row);
    return (await this.getOrg(row.id))!;
  }

  async getOrg(id: string): Promise<Org | null> {
    const row = await this.#db.select().from(orgs).where(eq(orgs.id, id)).get();
    return row ? toOrg(row) : null;
  }

  /** The organisation followed by its ancestors up to the root, in one query; empty when unknown. */
  async orgWithAncestors(id: string): Promise<Org[]> {
    const { results } = await this.#raw
      .prepare(
        `WITH RECURSIVE chain AS (
           SELECT orgs.*, 0 AS depth FROM orgs WHERE id = ?1
           UNION ALL
           SELECT o.*, chain.depth + 1 FROM orgs o JOIN chain ON o.id = chain.parent_id WHERE chain.depth < 64
         )
         SELECT * FROM chain ORDER BY depth`,
      )
      .bind(id)
      .all<RawOrgRow>();
    return results.map(rawToOrg);
  }

  async setSuspended(id: string, suspended: boolean): Promise<void> {
    await this.#db.update(orgs).set({ suspended }).where(eq(orgs.id, id));
    forgetOrgs();
  }

  async setBilling(id: string, billing: BillingState): Promise<void> {
    await this.#db.update(orgs).set({ billing }).where(eq(orgs.id, id));
    forgetOrgs();
  }

  async updateSettings(id: string, changes: { name?: string; learning?: boolean; inboxTtlSeconds?: number }): Promise<void> {
    if (Object.keys(changes).length === 0) return;
    await this.#db.update(orgs).set(changes).where(eq(orgs.id, id));
    forgetOrgs();
  }

  /** Changes the organisation's pinned version (callers check the upgrade and rollback rules). */
  async setPinnedVersion(id: string, version: string): Promise<void> {
    await this.#db.update(orgs).set({ pinnedVersion: version }).where(eq(orgs.id, id));
    forgetOrgs();
  }

  /** Marks the organisation as moving; false when it is already moving (or unknown). */
  async beginMove(id: string, to: RegionName): Promise<boolean> {
    const res = await this.#db
      .update(orgs)
      .set({ movingTo: to, movingSince: new Date().toISOString() })
      .where(and(eq(orgs.id, id), isNull(orgs.movingTo)))
      .run();
    forgetOrgs();
    return res.meta.changes === 1;
  }

  /** Flips the home region to the move's target and ends the move. */
  async completeMove(id: string, to: RegionName): Promise<void> {
    await this.#db.update(orgs).set({ region: to, movingTo: null, movingSince: null }).where(eq(orgs.id, id));
    forgetOrgs();
  }

  async insertApiKey(key: NewApiKey): Promise<ApiKeyRecord> {
    const row = {
      id: key.keyId,
      orgId: key.orgId,
      name: key.name,
      prefix: key.prefix,
      secretHash: key.secretHash,
      permissions: key.permissions,
      createdBy: key.createdBy,
      createdAt: new Date().toISOString(),
      expiresAt: key.expiresAt,
    };
    await this.#db.insert(apiKeys).values(row);
    return toKey({ ...row, revokedAt: null });
  }

  async getApiKey(keyId: string): Promise<ApiKeyRecord | null> {
    const row = await this.#db.select().from(apiKeys).where(eq(apiKeys.id, keyId)).get();
    return row ? toKey(row) : null;
  }

  async listApiKeys(orgId: string): Promise<ApiKeyRecord[]> {
    const rows = await this.#db
      .select()
      .from(apiKeys)
      .where(eq(apiKeys.orgId, orgId))
      .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id))
      .all();
    return rows.map(toKey);
  }

  /** Revokes a key of the organisation; false when the organisation has no such key. Revoking twice is fine. */
  async revokeApiKey(orgId: string, keyId: string): Promise<boolean> {
    const key = await this.getApiKey(keyId);
    if (!key || key.orgId !== orgId) return false;
    if (!key.revokedAt) {
      await this.#db.update(apiKeys).set({ revokedAt: new Date().toISOString() }).where(eq(apiKeys.id, keyId));
    }
    forgetApiKey(keyId);
    return true;
  }
}

export function directory(db: D1Database): Directory {
  return new Directory(db);
}
