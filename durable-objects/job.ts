import { DurableObject } from "cloudflare:workers";
import type { Env } from "../src/env";
import { migrate, type SqlMigration } from "./sql-migrations";
import { applyJobEvent, isFinished, type JobEvent, type JobProgress, type JobStatus } from "../src/domain/job";

/**
 * One per check job: the job's status and the set of its completed items. Every method reads and
 * writes synchronously (no await in between), so each call is atomic; an item index is counted once
 * however often its message is delivered, and the job finishes exactly once (finishedNow is true for
 * exactly one call).
 */

export interface JobState extends JobProgress {
  jobId: string;
  orgId: string;
  createdAt: string;
  finishedAt: string | null;
}

export interface ItemCompletion {
  state: JobState;
  /** True when this call counted the item (false: it was counted before). */
  counted: boolean;
  /** True for the one call that moved the job to its final status. */
  finishedNow: boolean;
}

type JobRow = {
  job_id: string;
  org_id: string;
  status: JobStatus;
  item_count: number;
  completed: number;
  errored: number;
  created_at: string;
  finished_at: string | null;
};

/** Migration 1: the schema as it was before migrations were numbered (hence IF NOT EXISTS). */
const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS job (
     id INTEGER PRIMARY KEY CHECK (id = 1),
     job_id TEXT NOT NULL,
     org_id TEXT NOT NULL,
     status TEXT NOT NULL,
     item_count INTEGER NOT NULL,
     completed INTEGER NOT NULL DEFAULT 0,
     errored INTEGER NOT NULL DEFAULT 0,
     created_at TEXT NOT NULL,
     finished_at TEXT
   )`,
  `CREATE TABLE IF NOT EXISTS done_items (
     item_index INTEGER PRIMARY KEY,
     ok INTEGER NOT NULL,
     done_at TEXT NOT NULL
   )`,
];

/** The job's schema, one numbered migration per change: never edit a shipped one, add the next. */
export const MIGRATIONS: readonly SqlMigration[] = [{ id: 1, description: "the job row and its completed items", statements: SCHEMA }];

export class Job extends DurableObject<Env> {
  #sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    // Under blockConcurrencyWhile, so no call reaches the object before its schema is current.
    ctx.blockConcurrencyWhile(async () => {
      migrate(ctx.storage, MIGRATIONS);
    });
  }

  /** Creates the job as `queued` (a second call changes nothing and returns the existing state). */
  init(orgId: string, jobId: string, itemCount: number): JobState {
    this.#sql.exec(
      "INSERT OR IGNORE INTO job (id, job_id, org_id, status, item_count, created_at) VALUES (1, ?, ?, 'queued', ?, ?)",
      jobId,
      orgId,
      itemCount,
      new Date().toISOString(),
    );
    return this.#state()!;
  }

  /** The job's state, or null when it was never created. */
  state(): JobState | null {
    return this.#state();
  }

  /** The first item started: queued -> running. */
  start(): JobState | null {
    return this.#apply({ type: "start" })?.state ?? null;
  }

  /**
   * An item's outcome (decision or error) is stored: count it once; the last one finishes the job.
   * Null when the job does not exist or has no such item.
   */
  completeItem(index: number, ok: boolean): ItemCompletion | null {
    const current = this.#state();
    if (!current) return null;
    // An index outside the job names nothing to count.
    if (!Number.isInteger(index) || index < 0 || index >= current.itemCount) return null;
    if (this.#sql.exec("SELECT 1 FROM done_items WHERE item_index = ?", index).toArray().length > 0) {
      return { state: current, counted: false, finishedNow: false };
    }
    this.#sql.exec("INSERT INTO done_items (item_index, ok, done_at) VALUES (?, ?, ?)", index, ok ? 1 : 0, new Date().toISOString());
    const applied = this.#apply({ type: "item_done", ok })!;
    return { state: applied.state, counted: true, finishedNow: applied.finishedNow };
  }

  /**
   * completeItem for several items in one call (a queue batch's: one round trip instead of one per
   * item). Still atomic: no await in between, so no other call sees a half-counted batch. Null when the
   * job does not exist; `counted` says per item (in order) whether this call counted it, and
   * `finishedNow` is true when one of them finished the job.
   */
  completeItems(items: { index: number; ok: boolean }[]): { state: JobState; counted: boolean[]; finishedNow: boolean } | null {
    let state = this.#state();
    if (!state) return null;
    let finishedNow = false;
    const counted = items.map(({ index, ok }) => {
      const c = this.completeItem(index, ok);
      if (!c) return false;
      state = c.state;
      finishedNow ||= c.finishedNow;
      return c.counted;
    });
    return { state, counted, finishedNow };
  }

  /** The job cannot go on. */
  fail(): ItemCompletion | null {
    const applied = this.#apply({ type: "fail" });
    return applied ? { state: applied.state, counted: false, finishedNow: applied.finishedNow } : null;
  }

  /** Refused before it started (billing or quota). */
  reject(): ItemCompletion | null {
    const applied = this.#apply({ type: "reject" });
    return applied ? { state: applied.state, counted: false, finishedNow: applied.finishedNow } : null;
  }

  /** Forgets the job: its creation was undone (its inputs or its queue messages could not be stored). */
  discard(): void {
    this.#sql.exec("DELETE FROM done_items");
    this.#sql.exec("DELETE FROM job");
  }

  /** Item indexes already completed (for diagnostics and tests). */
  completedItems(): number[] {
    return this.#sql
      .exec<{ item_index: number }>("SELECT item_index FROM done_items ORDER BY item_index")
      .toArray()
      .map((r) => r.item_index);
  }

  #apply(event: JobEvent): { state: JobState; finishedNow: boolean } | null {
    const current = this.#state();
    if (!current) return null;
    const { progress, finishedNow } = applyJobEvent(current, event);
    const finishedAt = finishedNow ? new Date().toISOString() : current.finishedAt;
    this.#sql.exec(
      "UPDATE job SET status = ?, completed = ?, errored = ?, finished_at = ? WHERE id = 1",
      progress.status,
      progress.completed,
      progress.errored,
      finishedAt,
    );
    return { state: { ...current, ...progress, finishedAt }, finishedNow };
  }

  #state(): JobState | null {
    const row = this.#sql.exec<JobRow>("SELECT * FROM job WHERE id = 1").toArray()[0];
    if (!row) return null;
    return {
      jobId: row.job_id,
      orgId: row.org_id,
      status: row.status,
      itemCount: row.item_count,
      completed: row.completed,
      errored: row.errored,
      createdAt: row.created_at,
      finishedAt: row.finished_at,
    };
  }
}

/** Whether a job state is final. */
export function jobFinished(state: Pick<JobState, "status">): boolean {
  return isFinished(state.status);
}
