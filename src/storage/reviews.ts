/** Reviews of checked items and learning blocks in one region's D1 (migrations/region/0008_learning.sql). */
import { checkId } from "../domain/job";

export type Verdict = "genuine" | "forged";
export type LearningState = "queued" | "learned" | "refused" | "off" | "not_applicable" | "evicted" | "unlearned";

export interface ReviewRow {
  orgId: string;
  jobId: string;
  itemIndex: number;
  subjectReference: string;
  verdict: Verdict;
  reviewedBy: string;
  reviewedAt: string;
  learning: LearningState;
  learningReason: string | null;
  learningDetail: string | null;
  refId: string | null;
  learnedAt: string | null;
  updatedAt: string;
}

interface RawReview {
  org_id: string;
  job_id: string;
  item_index: number;
  subject_reference: string;
  verdict: Verdict;
  reviewed_by: string;
  reviewed_at: string;
  learning: LearningState;
  learning_reason: string | null;
  learning_detail: string | null;
  ref_id: string | null;
  learned_at: string | null;
  updated_at: string;
}

function fromRaw(r: RawReview): ReviewRow {
  return {
    orgId: r.org_id,
    jobId: r.job_id,
    itemIndex: r.item_index,
    subjectReference: r.subject_reference,
    verdict: r.verdict,
    reviewedBy: r.reviewed_by,
    reviewedAt: r.reviewed_at,
    learning: r.learning,
    learningReason: r.learning_reason,
    learningDetail: r.learning_detail,
    refId: r.ref_id,
    learnedAt: r.learned_at,
    updatedAt: r.updated_at,
  };
}

export function reviewsRepo(db: D1Database) {
  return {
    async get(orgId: string, jobId: string, index: number): Promise<ReviewRow | null> {
      const r = await db
        .prepare("SELECT * FROM check_reviews WHERE org_id = ? AND job_id = ? AND item_index = ?")
        .bind(orgId, jobId, index)
        .first<RawReview>();
      return r ? fromRaw(r) : null;
    },

    /** The reviews of some items of one job, by item_index. */
    async forItems(orgId: string, jobId: string, indexes: number[]): Promise<Map<number, ReviewRow>> {
      const out = new Map<number, ReviewRow>();
      if (indexes.length === 0) return out;
      const lo = Math.min(...indexes);
      const hi = Math.max(...indexes);
      const { results } = await db
        .prepare("SELECT * FROM check_reviews WHERE org_id = ? AND job_id = ? AND item_index BETWEEN ? AND ?")
        .bind(orgId, jobId, lo, hi)
        .all<RawReview>();
      for (const r of results) out.set(r.item_index, fromRaw(r));
      return out;
    },

    /**
     * The reviews of items of any jobs (a page of GET /sig/checks?view=items), by check id. The items go as
     * one JSON parameter: D1 caps bound parameters at 100 and a page holds up to 200 items.
     */
    async forChecks(orgId: string, items: { jobId: string; itemIndex: number }[]): Promise<Map<string, ReviewRow>> {
      const out = new Map<string, ReviewRow>();
      if (items.length === 0) return out;
      const { results } = await db
        .prepare(
          "SELECT r.* FROM json_each(?) AS k JOIN check_reviews AS r ON r.org_id = ? AND r.job_id = json_extract(k.value, '$[0]') AND r.item_index = json_extract(k.value, '$[1]')",
        )
        .bind(JSON.stringify(items.map((i) => [i.jobId, i.itemIndex])), orgId)
        .all<RawReview>();
      for (const r of results) out.set(checkId(r.job_id, r.item_index), fromRaw(r));
      return out;
    },

    /** The reviews that produced the given learned references of a subject. */
    async forRefs(orgId: string, subjectReference: string): Promise<Map<string, ReviewRow>> {
      const { results } = await db
        .prepare("SELECT * FROM check_reviews WHERE org_id = ? AND subject_reference = ? AND ref_id IS NOT NULL")
        .bind(orgId, subjectReference)
        .all<RawReview>();
      return new Map(results.map((r) => [r.ref_id!, fromRaw(r)]));
    },

    /** The subject's newest reviews (learning outcomes, refusals included). */
    async recent(orgId: string, subjectReference: string, limit: number): Promise<ReviewRow[]> {
      const { results } = await db
        .prepare(
          "SELECT * FROM check_reviews WHERE org_id = ? AND subject_reference = ? ORDER BY reviewed_at DESC, job_id DESC, item_index DESC LIMIT ?",
        )
        .bind(orgId, subjectReference, limit)
        .all<RawReview>();
      return results.map(fromRaw);
    },

    /** Inserts the first review of an item; a later one changes nothing. Returns true when this call inserted it. */
    insertStatement(r: ReviewRow): D1PreparedStatement {
      return db
        .prepare(
          "INSERT INTO check_reviews (org_id, job_id, item_index, subject_reference, verdict, reviewed_by, reviewed_at, learning, learning_reason, learning_detail, ref_id, learned_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        )
        .bind(
          r.orgId,
          r.jobId,
          r.itemIndex,
          r.subjectReference,
          r.verdict,
          r.reviewedBy,
          r.reviewedAt,
          r.learning,
          r.learningReason,
          r.learningDetail,
          r.refId,
          r.learnedAt,
          r.updatedAt,
        );
    },

    /** Moves a review's learning state, only from `from` (so a redelivered message changes nothing). */
    setLearningStatement(
      orgId: string,
      jobId: string,
      index: number,
      from: LearningState[],
      to: { learning: LearningState; reason?: string | null; detail?: string | null; refId?: string | null; learnedAt?: string | null },
    ): D1PreparedStatement {
      const now = new Date().toISOString();
      return db
        .prepare(
          `UPDATE check_reviews SET learning = ?, learning_reason = ?, learning_detail = ?, ref_id = COALESCE(?, ref_id), learned_at = COALESCE(?, learned_at), updated_at = ? WHERE org_id = ? AND job_id = ? AND item_index = ? AND learning IN (${from.map(() => "?").join(", ")})`,
        )
        .bind(to.learning, to.reason ?? null, to.detail ?? null, to.refId ?? null, to.learnedAt ?? null, now, orgId, jobId, index, ...from);
    },

    /** Marks the reviews behind removed learned references (by ref_id). */
    setRefStateStatement(
      orgId: string,
      subjectReference: string,
      refId: string,
      learning: "evicted" | "unlearned",
      detail: string,
    ): D1PreparedStatement {
      return db
        .prepare(
          "UPDATE check_reviews SET learning = ?, learning_reason = ?, learning_detail = ?, updated_at = ? WHERE org_id = ? AND subject_reference = ? AND ref_id = ?",
        )
        .bind(learning, learning, detail, new Date().toISOString(), orgId, subjectReference, refId);
    },

    async isBlocked(orgId: string, subjectReference: string, checkId: string): Promise<boolean> {
      const r = await db
        .prepare("SELECT 1 AS x FROM learning_blocks WHERE org_id = ? AND subject_reference = ? AND check_id = ?")
        .bind(orgId, subjectReference, checkId)
        .first();
      return r !== null;
    },

    blockStatement(orgId: string, subjectReference: string, checkId: string, actor: string, now: string): D1PreparedStatement {
      return db
        .prepare(
          "INSERT INTO learning_blocks (org_id, subject_reference, check_id, blocked_at, blocked_by) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
        )
        .bind(orgId, subjectReference, checkId, now, actor);
    },

    /**
     * Blocks every check of the subject made at or after `since` whose item is already recorded; items of
     * a job still running are recorded later and stay unblocked (spec 4.3).
     */
    blockSinceStatement(orgId: string, subjectReference: string, since: string, actor: string, now: string): D1PreparedStatement {
      return db
        .prepare(
          "INSERT INTO learning_blocks (org_id, subject_reference, check_id, blocked_at, blocked_by) SELECT org_id, subject_reference, job_id || '/' || item_index, ?, ? FROM check_items WHERE org_id = ? AND subject_reference = ? AND created_at >= ? AND state = 'done' ON CONFLICT DO NOTHING",
        )
        .bind(now, actor, orgId, subjectReference, since);
    },

    /** Forgets a deleted subject's reviews and blocks (a subject of the same name starts afresh). */
    deleteSubjectStatements(orgId: string, subjectReference: string): D1PreparedStatement[] {
      return [
        db.prepare("DELETE FROM learning_blocks WHERE org_id = ? AND subject_reference = ?").bind(orgId, subjectReference),
        db.prepare("DELETE FROM check_reviews WHERE org_id = ? AND subject_reference = ?").bind(orgId, subjectReference),
      ];
    },
  };
}

export type ReviewsRepo = ReturnType<typeof reviewsRepo>;
