/**
 * The drop area of a tenant in its regional bucket, and the bucket_drops rows that make each drop start
 * at most one job however often its event is delivered.
 */
import { orgFilePrefix } from "./regions";

/** Everything a tenant may write or read through S3 lies under this prefix. */
export function dropPrefix(orgId: string): string {
  return `${orgFilePrefix(orgId)}drops/`;
}

/** The organisation whose drop area holds a key, or null for any other key. */
export function orgOfDropKey(key: string): string | null {
  const m = /^orgs\/(org_[0-9A-Z]{26})\/drops\//.exec(key);
  return m ? m[1] : null;
}

export type DropState = "waiting" | "submitted" | "summarised";

export interface DropRecord {
  orgId: string;
  dropId: string;
  objectKey: string;
  folder: string;
  summaryKey: string;
  state: DropState;
  jobId: string | null;
  waitUntil: string | null;
  /** JSON DropPlan once submitted (services/bucket-drops.ts). */
  plan: string | null;
  createdAt: string;
  updatedAt: string;
}

interface Row {
  org_id: string;
  drop_id: string;
  object_key: string;
  folder: string;
  summary_key: string;
  state: DropState;
  job_id: string | null;
  wait_until: string | null;
  plan: string | null;
  created_at: string;
  updated_at: string;
}

function toRecord(r: Row): DropRecord {
  return {
    orgId: r.org_id,
    dropId: r.drop_id,
    objectKey: r.object_key,
    folder: r.folder,
    summaryKey: r.summary_key,
    state: r.state,
    jobId: r.job_id,
    waitUntil: r.wait_until,
    plan: r.plan,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export function dropsRepo(db: D1Database) {
  return {
    /** Records a drop; false when its event was seen before (the row exists). */
    async claim(d: Omit<DropRecord, "createdAt" | "updatedAt" | "plan">): Promise<boolean> {
      const now = new Date().toISOString();
      const res = await db
        .prepare(
          `INSERT INTO bucket_drops (org_id, drop_id, object_key, folder, summary_key, state, job_id, wait_until, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (org_id, drop_id) DO NOTHING`,
        )
        .bind(d.orgId, d.dropId, d.objectKey, d.folder, d.summaryKey, d.state, d.jobId, d.waitUntil, now, now)
        .run();
      return (res.meta.changes ?? 0) > 0;
    },

    async get(orgId: string, dropId: string): Promise<DropRecord | null> {
      const row = await db.prepare("SELECT * FROM bucket_drops WHERE org_id = ? AND drop_id = ?").bind(orgId, dropId).first<Row>();
      return row ? toRecord(row) : null;
    },

    async byJob(orgId: string, jobId: string): Promise<DropRecord | null> {
      const row = await db.prepare("SELECT * FROM bucket_drops WHERE org_id = ? AND job_id = ?").bind(orgId, jobId).first<Row>();
      return row ? toRecord(row) : null;
    },

    /** Drops of a folder still waiting for their files. */
    async waitingIn(orgId: string, folder: string): Promise<DropRecord[]> {
      const { results } = await db
        .prepare("SELECT * FROM bucket_drops WHERE org_id = ? AND folder = ? AND state = 'waiting'")
        .bind(orgId, folder)
        .all<Row>();
      return results.map(toRecord);
    },

    /** Moves a drop from one state to the next; false when another delivery moved it first. */
    async advance(
      orgId: string,
      dropId: string,
      from: DropState,
      to: DropState,
      set: { jobId?: string | null; plan?: string | null; summaryKey?: string } = {},
    ): Promise<boolean> {
      const res = await db
        .prepare(
          "UPDATE bucket_drops SET state = ?, job_id = COALESCE(?, job_id), plan = COALESCE(?, plan), summary_key = COALESCE(?, summary_key), updated_at = ? WHERE org_id = ? AND drop_id = ? AND state = ?",
        )
        .bind(to, set.jobId ?? null, set.plan ?? null, set.summaryKey ?? null, new Date().toISOString(), orgId, dropId, from)
        .run();
      return (res.meta.changes ?? 0) > 0;
    },
  };
}
