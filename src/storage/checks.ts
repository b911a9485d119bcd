import { and, asc, desc, eq, gt, inArray, isNull, lte, sql, type SQL } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { checkItems, checkJobs, type CheckItemRow, type CheckJobRow } from "./schema/checks";
import { subjects } from "./schema/subjects";
import type { JobStatus } from "../domain/job";
import type { DailyDecisionCount } from "../domain/usage";

/** `decision` filter of a results page: a decision, or ERROR for items without one. */
export type DecisionFilter = string | "ERROR" | null;

/** What finishing an item stores. */
export interface ItemOutcome {
  decision: string | null;
  score: number | null;
  billable: boolean;
  result: string;
  completedAt: string;
  pageCount: number | null;
}

/** Check jobs and items in one region's D1, always scoped by organisation. */
export function checksRepo(d1: D1Database) {
  const db = drizzle(d1);
  const jobScope = (orgId: string, jobId: string) => and(eq(checkJobs.orgId, orgId), eq(checkJobs.jobId, jobId));
  const itemScope = (orgId: string, jobId: string) => and(eq(checkItems.orgId, orgId), eq(checkItems.jobId, jobId));
  const decisionCond = (filter: DecisionFilter): SQL | undefined =>
    filter === null ? undefined : filter === "ERROR" ? isNull(checkItems.decision) : eq(checkItems.decision, filter);

  const finishQuery = (orgId: string, jobId: string, index: number, outcome: ItemOutcome) =>
    db
      .update(checkItems)
      .set({
        state: "done",
        decision: outcome.decision,
        score: outcome.score,
        billable: outcome.billable ? 1 : 0,
        result: outcome.result,
        completedAt: outcome.completedAt,
        pageCount: outcome.pageCount,
      })
      .where(and(itemScope(orgId, jobId), eq(checkItems.itemIndex, index), eq(checkItems.state, "pending")))
      .returning({ i: checkItems.itemIndex });

  return {
    /** Inserts a job and its items atomically; throws on an existing job id (PRIMARY KEY). */
    async insertJob(job: CheckJobRow, items: CheckItemRow[]): Promise<void> {
      await db.batch([db.insert(checkJobs).values(job), ...items.map((i) => db.insert(checkItems).values(i))] as never);
    },

    async deleteJob(orgId: string, jobId: string): Promise<void> {
      await db.batch([db.delete(checkItems).where(itemScope(orgId, jobId)), db.delete(checkJobs).where(jobScope(orgId, jobId))]);
    },

    async job(orgId: string, jobId: string): Promise<CheckJobRow | null> {
      return (await db.select().from(checkJobs).where(jobScope(orgId, jobId)).limit(1))[0] ?? null;
    },

    async item(orgId: string, jobId: string, index: number): Promise<CheckItemRow | null> {
      return (
        (
          await db
            .select()
            .from(checkItems)
            .where(and(itemScope(orgId, jobId), eq(checkItems.itemIndex, index)))
            .limit(1)
        )[0] ?? null
      );
    },

    /** Several items of a job in one query (a queue batch's), in item_index order; absent ones are left out. */
    async items(orgId: string, jobId: string, indexes: number[]): Promise<CheckItemRow[]> {
      if (indexes.length === 0) return [];
      return db
        .select()
        .from(checkItems)
        .where(and(itemScope(orgId, jobId), inArray(checkItems.itemIndex, indexes)))
        .orderBy(asc(checkItems.itemIndex));
    },

    /** One page of a job's finished items by item_index, after `after` (exclusive). */
    async results(
      orgId: string,
      jobId: string,
      opts: { after: number | null; limit: number; decision: DecisionFilter },
    ): Promise<CheckItemRow[]> {
      return db
        .select()
        .from(checkItems)
        .where(
          and(
            itemScope(orgId, jobId),
            eq(checkItems.state, "done"),
            opts.after === null ? undefined : gt(checkItems.itemIndex, opts.after),
            decisionCond(opts.decision),
          ),
        )
        .orderBy(asc(checkItems.itemIndex))
        .limit(opts.limit);
    },

    /**
     * Stores an item's outcome once: only a pending item changes, so a second delivery of the same
     * item writes nothing. Returns true when this call stored it.
     */
    async finishItem(orgId: string, jobId: string, index: number, outcome: ItemOutcome): Promise<boolean> {
      return (await finishQuery(orgId, jobId, index, outcome)).length > 0;
    },

    /**
     * finishItem for several items of a job in one round trip (one D1 batch, one transaction): for each,
     * in order, whether this call stored it.
     */
    async finishItems(orgId: string, jobId: string, outcomes: { index: number; outcome: ItemOutcome }[]): Promise<boolean[]> {
      if (outcomes.length === 0) return [];
      if (outcomes.length === 1) return [await this.finishItem(orgId, jobId, outcomes[0].index, outcomes[0].outcome)];
      const results = await db.batch(outcomes.map((o) => finishQuery(orgId, jobId, o.index, o.outcome)) as never);
      return (results as unknown[][]).map((rows) => rows.length > 0);
    },

    /** Mirrors the Job DO's progress; never moves the count backwards (deliveries may race). */
    async mirrorProgress(
      orgId: string,
      jobId: string,
      p: { status: JobStatus; completed: number; finishedAt: string | null },
    ): Promise<void> {
      await db
        .update(checkJobs)
        .set({ status: p.status, completedItems: p.completed, completedAt: p.finishedAt, updatedAt: new Date().toISOString() })
        .where(
          and(
            jobScope(orgId, jobId),
            lte(checkJobs.completedItems, p.completed),
            sql`${checkJobs.status} NOT IN ('completed', 'failed', 'rejected')`,
          ),
        );
    },

    /** Records the subject's last check, unless a newer one is already recorded. */
    async recordLastCheck(
      orgId: string,
      subjectReference: string,
      check: { id: string; decision: string | null; at: string },
    ): Promise<void> {
      await db
        .update(subjects)
        .set({ lastCheckAt: check.at, lastCheckId: check.id, lastCheckDecision: check.decision })
        .where(
          and(
            eq(subjects.orgId, orgId),
            eq(subjects.subjectReference, subjectReference),
            sql`(${subjects.lastCheckAt} IS NULL OR ${subjects.lastCheckAt} <= ${check.at})`,
          ),
        );
    },

    /** A subject's checked items, newest first, and their total. */
    async subjectItems(orgId: string, subjectReference: string, limit: number): Promise<{ rows: CheckItemRow[]; total: number }> {
      const where = and(eq(checkItems.orgId, orgId), eq(checkItems.subjectReference, subjectReference), eq(checkItems.state, "done"));
      const [rows, count] = await Promise.all([
        db
          .select()
          .from(checkItems)
          .where(where)
          .orderBy(desc(checkItems.createdAt), desc(checkItems.jobId), desc(checkItems.itemIndex))
          .limit(limit),
        db.select({ n: sql<number>`COUNT(*)` }).from(checkItems).where(where),
      ]);
      return { rows, total: Number(count[0]?.n ?? 0) };
    },

    /** Finished items per UTC day and decision, completed in [from, to). */
    async dailyDecisions(orgId: string, from: string, to: string): Promise<DailyDecisionCount[]> {
      const { results } = await d1
        .prepare(
          `SELECT substr(completed_at, 1, 10) AS day, decision, COUNT(*) AS count FROM check_items
           WHERE org_id = ? AND state = 'done' AND completed_at >= ? AND completed_at < ?
           GROUP BY day, decision`,
        )
        .bind(orgId, from, to)
        .all<{ day: string; decision: string | null; count: number }>();
      return results.map((r) => ({ day: r.day, decision: r.decision, count: Number(r.count) }));
    },

    async expiredInboxes(now: string, limit: number): Promise<Pick<CheckJobRow, "orgId" | "jobId">[]> {
      return db
        .select({ orgId: checkJobs.orgId, jobId: checkJobs.jobId })
        .from(checkJobs)
        .where(and(isNull(checkJobs.inboxSweptAt), lte(checkJobs.inboxExpiresAt, now)))
        .limit(limit);
    },

    async markInboxSwept(orgId: string, jobId: string, at: string): Promise<void> {
      await db.update(checkJobs).set({ inboxSweptAt: at }).where(jobScope(orgId, jobId));
    },
  };
}

export type ChecksRepo = ReturnType<typeof checksRepo>;
