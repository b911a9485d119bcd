import type { RegionStore } from "../http/context";
import { checksRepo } from "../storage/checks";
import { checkId } from "../domain/job";

export interface SubjectChecks {
  recent: {
    check_id: string;
    job_id: string;
    item_index: number;
    decision: string | null;
    score: number | null;
    reference: string | null;
    process: string | null;
    input_type: string | null;
    file_name: string | null;
    created_at: string;
    completed_at: string | null;
  }[];
  total: number;
  /** GET /sig/checks?view=items&subject_reference=... lists them all. */
  next: string | null;
}

export const RECENT_CHECKS = 25;

/** The subject's checked items for the subject view: the newest 25, the total, and a link listing all. */
export async function recentChecksOf(store: RegionStore, orgId: string, subjectReference: string, base: string): Promise<SubjectChecks> {
  const { rows, total } = await checksRepo(store.db).subjectItems(orgId, subjectReference, RECENT_CHECKS);
  return {
    recent: rows.map((r) => ({
      check_id: checkId(r.jobId, r.itemIndex),
      job_id: r.jobId,
      item_index: r.itemIndex,
      decision: r.decision,
      score: r.score,
      reference: r.reference,
      process: r.process,
      input_type: r.inputType,
      file_name: r.fileName,
      created_at: r.createdAt,
      completed_at: r.completedAt,
    })),
    total,
    next: total > 0 ? `${base}/sig/checks?view=items&subject_reference=${encodeURIComponent(subjectReference)}` : null,
  };
}
