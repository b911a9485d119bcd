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
  /**
   * The job id the drop makes (or made) its job under, reserved before the job is created: no two drops
   * of an organisation hold the same one. Null before that, and once a drop ended without a job.
   */
  intendedJobId: string | null;
  waitUntil: string | null;
  /**
   * JSON DropPlan (services/bucket-drops.ts): on a waiting drop, the plan its job is being made from
   * (recorded with intendedJobId); from `submitted` on, the drop's plan.
   */
  plan: string | null;
  /**
   * The delivery submitting the drop now, and until when its lock holds (null: none). On a submitted
   * drop: the delivery that submitted it, until its job's items are queued (or its refusal summarised).
   */
  lockOwner: string | null;
  lockUntil: string | null;
  /** A batch's files not arrived yet; null until its manifest is read (and for a single file). */
  missing: string[] | null;
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
  intended_job_id: string | null;
  wait_until: string | null;
  plan: string | null;
  lock_owner: string | null;
  lock_until: string | null;
  missing: string | null;
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
    intendedJobId: r.intended_job_id,
    waitUntil: r.wait_until,
    plan: r.plan,
    lockOwner: r.lock_owner,
    lockUntil: r.lock_until,
    missing: r.missing === null ? null : (JSON.parse(r.missing) as string[]),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export function dropsRepo(db: D1Database) {
  return {
    /** Records a drop; false when its event was seen before (the row exists). */
    async claim(
      d: Omit<DropRecord, "createdAt" | "updatedAt" | "plan" | "lockOwner" | "lockUntil" | "missing" | "intendedJobId">,
    ): Promise<boolean> {
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

    /** The drop holding the reservation of a job id. */
    async byIntendedJob(orgId: string, jobId: string): Promise<DropRecord | null> {
      const row = await db.prepare("SELECT * FROM bucket_drops WHERE org_id = ? AND intended_job_id = ?").bind(orgId, jobId).first<Row>();
      return row ? toRecord(row) : null;
    },

    /**
     * Reserves a job id for a waiting drop whose lock `owner` holds, with the plan the job is made from,
     * before the job is created. "taken": another drop holds it (the unique index says so, whatever runs
     * at the same time); "lost": the drop is no longer waiting or its lock is no longer the owner's.
     */
    async reserveJob(orgId: string, dropId: string, jobId: string, plan: string, owner: string): Promise<"reserved" | "taken" | "lost"> {
      try {
        const res = await db
          .prepare(
            `UPDATE bucket_drops SET intended_job_id = ?, plan = ?, updated_at = ?
             WHERE org_id = ? AND drop_id = ? AND state = 'waiting' AND lock_owner = ?`,
          )
          .bind(jobId, plan, new Date().toISOString(), orgId, dropId, owner)
          .run();
        return (res.meta.changes ?? 0) > 0 ? "reserved" : "lost";
      } catch (err) {
        if (/UNIQUE/i.test(String((err as Error)?.message ?? err))) return "taken";
        throw err;
      }
    },

    /** Drops of a folder still waiting for their files. */
    async waitingIn(orgId: string, folder: string): Promise<DropRecord[]> {
      const { results } = await db
        .prepare("SELECT * FROM bucket_drops WHERE org_id = ? AND folder = ? AND state = 'waiting'")
        .bind(orgId, folder)
        .all<Row>();
      return results.map(toRecord);
    },

    /**
     * Drops of a folder that `owner` submitted and has not finished submitting (its items not all queued,
     * or its refusal not summarised): what its retry finishes.
     */
    async submittedBy(orgId: string, folder: string, owner: string): Promise<DropRecord[]> {
      const { results } = await db
        .prepare("SELECT * FROM bucket_drops WHERE org_id = ? AND folder = ? AND state = 'submitted' AND lock_owner = ?")
        .bind(orgId, folder, owner)
        .all<Row>();
      return results.map(toRecord);
    },

    /** Submitted drops of a folder whose items are not all queued yet (or whose refusal is not summarised). */
    async unfinishedIn(orgId: string, folder: string): Promise<DropRecord[]> {
      const { results } = await db
        .prepare("SELECT * FROM bucket_drops WHERE org_id = ? AND folder = ? AND state = 'submitted' AND lock_owner IS NOT NULL")
        .bind(orgId, folder)
        .all<Row>();
      return results.map(toRecord);
    },

    /** Waiting drops of a folder whose files are all there (none missing) or whose wait is over. */
    async dueIn(orgId: string, folder: string, now: string): Promise<DropRecord[]> {
      const { results } = await db
        .prepare(
          `SELECT * FROM bucket_drops WHERE org_id = ? AND folder = ? AND state = 'waiting' AND missing IS NOT NULL
             AND (json_array_length(missing) = 0 OR wait_until IS NULL OR wait_until <= ?)`,
        )
        .bind(orgId, folder, now)
        .all<Row>();
      return results.map(toRecord);
    },

    /** A submitted drop's items are queued (or its refusal summarised): no delivery needs to finish it. */
    async submissionFinished(orgId: string, dropId: string): Promise<void> {
      await db
        .prepare("UPDATE bucket_drops SET lock_owner = NULL, lock_until = NULL WHERE org_id = ? AND drop_id = ? AND state = 'submitted'")
        .bind(orgId, dropId)
        .run();
    },

    /**
     * Lists the files of a waiting batch as missing, unless they were listed before: the list as it
     * stands now (files whose events came since are off it). Null when the drop is no longer waiting.
     */
    async listMissing(orgId: string, dropId: string, names: string[]): Promise<string[] | null> {
      const row = await db
        .prepare(
          "UPDATE bucket_drops SET missing = COALESCE(missing, ?), updated_at = ? WHERE org_id = ? AND drop_id = ? AND state = 'waiting' RETURNING missing",
        )
        .bind(JSON.stringify(names), new Date().toISOString(), orgId, dropId)
        .first<{ missing: string }>();
      return row ? (JSON.parse(row.missing) as string[]) : null;
    },

    /**
     * Crosses files off a waiting batch's missing list, in one statement (so concurrent arrivals never
     * undo each other): the list left. Null when the drop is no longer waiting or its list is not made yet.
     */
    async arrived(orgId: string, dropId: string, names: string[]): Promise<string[] | null> {
      const row = await db
        .prepare(
          `UPDATE bucket_drops
           SET missing = (SELECT json_group_array(m.value) FROM json_each(bucket_drops.missing) AS m
                          WHERE m.value NOT IN (SELECT a.value FROM json_each(?) AS a)),
               updated_at = ?
           WHERE org_id = ? AND drop_id = ? AND state = 'waiting' AND missing IS NOT NULL
           RETURNING missing`,
        )
        .bind(JSON.stringify(names), new Date().toISOString(), orgId, dropId)
        .first<{ missing: string }>();
      return row ? (JSON.parse(row.missing) as string[]) : null;
    },

    /**
     * Takes a waiting drop's lock for one delivery (its queue message id) for `seconds`: true when it is
     * now that delivery's, false while another live delivery holds it or the drop is no longer waiting.
     * A lock its owner already held (its redelivery) or whose time ran out (its owner died) is taken.
     */
    async lock(orgId: string, dropId: string, owner: string, seconds: number): Promise<boolean> {
      const now = new Date();
      const res = await db
        .prepare(
          `UPDATE bucket_drops SET lock_owner = ?, lock_until = ?, updated_at = ?
           WHERE org_id = ? AND drop_id = ? AND state = 'waiting' AND (lock_owner IS NULL OR lock_owner = ? OR lock_until <= ?)`,
        )
        .bind(owner, new Date(now.getTime() + seconds * 1000).toISOString(), now.toISOString(), orgId, dropId, owner, now.toISOString())
        .run();
      return (res.meta.changes ?? 0) > 0;
    },

    /**
     * Gives a waiting drop's lock up (its owner failed; its retry or another delivery may go on). A
     * submitted drop keeps naming the delivery that submitted it, for its retry to finish.
     */
    async unlock(orgId: string, dropId: string, owner: string): Promise<void> {
      await db
        .prepare(
          "UPDATE bucket_drops SET lock_owner = NULL, lock_until = NULL WHERE org_id = ? AND drop_id = ? AND lock_owner = ? AND state = 'waiting'",
        )
        .bind(orgId, dropId, owner)
        .run();
    },

    /**
     * Moves a drop from one state to the next, and ends its lock (to `submitted`, the lock stays with
     * `owner` until submissionFinished); false when another delivery moved it first. With `owner`, only
     * while that delivery holds the drop's lock. `releaseJob`: the drop ends without a job, and gives up
     * the job id it reserved.
     */
    async advance(
      orgId: string,
      dropId: string,
      from: DropState,
      to: DropState,
      set: { jobId?: string | null; plan?: string | null; summaryKey?: string; releaseJob?: boolean } = {},
      owner?: string,
    ): Promise<boolean> {
      const keep = to === "submitted" && owner !== undefined;
      const res = await db
        .prepare(
          `UPDATE bucket_drops SET state = ?, job_id = COALESCE(?, job_id), plan = COALESCE(?, plan), summary_key = COALESCE(?, summary_key),
             intended_job_id = ${set.releaseJob ? "NULL" : "intended_job_id"},
             lock_owner = ${keep ? "lock_owner" : "NULL"}, lock_until = ${keep ? "lock_until" : "NULL"}, updated_at = ?
           WHERE org_id = ? AND drop_id = ? AND state = ?${owner === undefined ? "" : " AND lock_owner = ?"}`,
        )
        .bind(
          to,
          set.jobId ?? null,
          set.plan ?? null,
          set.summaryKey ?? null,
          new Date().toISOString(),
          orgId,
          dropId,
          from,
          ...(owner === undefined ? [] : [owner]),
        )
        .run();
      return (res.meta.changes ?? 0) > 0;
    },
  };
}
