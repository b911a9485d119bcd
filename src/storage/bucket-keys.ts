/** Bucket key rows in the home region's D1 (the secret sealed, see domain/bucket-key.ts). */
import { auditStatement, type AuditEntry } from "./audit";

export interface BucketKeyRecord {
  accessKeyId: string;
  orgId: string;
  secretBox: string;
  createdBy: string;
  createdAt: string;
  revokedAt: string | null;
  lastUsedAt: string | null;
  /** When the credential stops working (R2 temporary credentials); null: never. */
  expiresAt: string | null;
}

interface Row {
  access_key_id: string;
  org_id: string;
  secret_box: string;
  created_by: string;
  created_at: string;
  revoked_at: string | null;
  last_used_at: string | null;
  expires_at: string | null;
}

function toRecord(r: Row): BucketKeyRecord {
  return {
    accessKeyId: r.access_key_id,
    orgId: r.org_id,
    secretBox: r.secret_box,
    createdBy: r.created_by,
    createdAt: r.created_at,
    revokedAt: r.revoked_at,
    lastUsedAt: r.last_used_at,
    expiresAt: r.expires_at,
  };
}

export function bucketKeysRepo(db: D1Database) {
  return {
    /** Newest first, revoked keys included. */
    async list(orgId: string): Promise<BucketKeyRecord[]> {
      const { results } = await db
        .prepare("SELECT * FROM bucket_keys WHERE org_id = ? ORDER BY created_at DESC, access_key_id DESC")
        .bind(orgId)
        .all<Row>();
      return results.map(toRecord);
    },

    /** Any tenant's key by its id: the S3 endpoint finds the organisation from the key. */
    async byAccessKeyId(accessKeyId: string): Promise<BucketKeyRecord | null> {
      const row = await db.prepare("SELECT * FROM bucket_keys WHERE access_key_id = ?").bind(accessKeyId).first<Row>();
      return row ? toRecord(row) : null;
    },

    /**
     * Inserts a key unless the tenant already has `maxActive` active keys (neither revoked nor expired at
     * the key's creation time); the count is checked in the same statement, so two concurrent requests
     * cannot both pass it. False when refused.
     */
    async insert(key: BucketKeyRecord, maxActive: number, audit: AuditEntry): Promise<boolean> {
      const [res] = await db.batch([
        db
          .prepare(
            `INSERT INTO bucket_keys (access_key_id, org_id, secret_box, created_by, created_at, expires_at)
             SELECT ?1, ?2, ?3, ?4, ?5, ?7
             WHERE (SELECT COUNT(*) FROM bucket_keys
                    WHERE org_id = ?2 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?5)) < ?6`,
          )
          .bind(key.accessKeyId, key.orgId, key.secretBox, key.createdBy, key.createdAt, maxActive, key.expiresAt),
      ]);
      if ((res.meta.changes ?? 0) === 0) return false;
      await auditStatement(db, audit).run();
      return true;
    },

    /** Revokes an active key of the tenant; returns the key (also when it was revoked before), or null. */
    async revoke(orgId: string, accessKeyId: string, audit: AuditEntry): Promise<BucketKeyRecord | null> {
      const row = await db
        .prepare("UPDATE bucket_keys SET revoked_at = ? WHERE org_id = ? AND access_key_id = ? AND revoked_at IS NULL RETURNING *")
        .bind(new Date().toISOString(), orgId, accessKeyId)
        .first<Row>();
      if (row) {
        await auditStatement(db, audit).run();
        return toRecord(row);
      }
      const existing = await db
        .prepare("SELECT * FROM bucket_keys WHERE org_id = ? AND access_key_id = ?")
        .bind(orgId, accessKeyId)
        .first<Row>();
      return existing ? toRecord(existing) : null;
    },

    /** Notes the key's use, at most once a minute (every signed request would otherwise write). */
    async touch(accessKeyId: string, at: string): Promise<void> {
      await db
        .prepare("UPDATE bucket_keys SET last_used_at = ?1 WHERE access_key_id = ?2 AND (last_used_at IS NULL OR last_used_at < ?3)")
        .bind(at, accessKeyId, new Date(Date.parse(at) - 60_000).toISOString())
        .run();
    },
  };
}
