/**
 * Checked items as lists show them (the items list, a subject's recent checks): the result without its
 * metadata, with its reviewer's verdict, looked up for the whole page in one query.
 */
import { checkId } from "../domain/job";
import type { CheckItemRow } from "../storage/schema/checks";
import { reviewsRepo } from "../storage/reviews";
import { renderResult, storedResultOf, type RenderedResult } from "./check-results";
import { renderReview } from "./learning";

export type ListedResult = RenderedResult & { review: ReturnType<typeof renderReview> | null };

/** Rows without a stored result (not checked yet) are left out. */
export async function listedResults(db: D1Database, orgId: string, rows: CheckItemRow[], baseUrl: string): Promise<ListedResult[]> {
  const reviews = await reviewsRepo(db).forChecks(orgId, rows);
  const out: ListedResult[] = [];
  for (const row of rows) {
    const stored = storedResultOf(row);
    if (!stored) continue;
    const review = reviews.get(checkId(row.jobId, row.itemIndex));
    out.push({ ...renderResult(stored, baseUrl, { metadata: false }), review: review ? renderReview(review) : null });
  }
  return out;
}
