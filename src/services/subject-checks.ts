import type { RegionStore } from "../domain/tenancy";
import { checksRepo } from "../storage/checks";
import { checkId } from "../domain/job";
import { reviewsRepo } from "../storage/reviews";
import { renderResult, storedResultOf, type RenderedResult } from "./check-results";
import { renderReview } from "./learning";

export interface SubjectChecks {
  /** The newest checked items, in the shape of the items list (CheckResult without metadata, with its review). */
  recent: (RenderedResult & { review: ReturnType<typeof renderReview> | null })[];
  total: number;
  /** GET /sig/checks?view=items&subject_reference=... lists them all. */
  next: string | null;
}

export const RECENT_CHECKS = 25;

/** The subject's checked items for the subject view: the newest 25, the total, and a link listing all. */
export async function recentChecksOf(store: RegionStore, orgId: string, subjectReference: string, base: string): Promise<SubjectChecks> {
  const { rows, total } = await checksRepo(store.db).subjectItems(orgId, subjectReference, RECENT_CHECKS);
  // Shaped as the items list shapes them, the reviewer's verdict included (spec 2.5).
  const reviews = await reviewsRepo(store.db).forChecks(orgId, rows);
  const recent: SubjectChecks["recent"] = [];
  for (const row of rows) {
    const stored = storedResultOf(row);
    const review = reviews.get(checkId(row.jobId, row.itemIndex));
    if (stored) recent.push({ ...renderResult(stored, base, { metadata: false }), review: review ? renderReview(review) : null });
  }
  return {
    recent,
    total,
    next: total > 0 ? `${base}/sig/checks?view=items&subject_reference=${encodeURIComponent(subjectReference)}` : null,
  };
}
