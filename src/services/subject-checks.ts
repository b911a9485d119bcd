import type { RegionStore } from "../domain/tenancy";
import { checksRepo } from "../storage/checks";
import { listedResults, type ListedResult } from "./listed-results";

export interface SubjectChecks {
  /** The newest checked items, in the shape of the items list (CheckResult without metadata, with its review). */
  recent: ListedResult[];
  total: number;
  /** GET /sig/checks?view=items&subject_reference=... lists them all. */
  next: string | null;
}

export const RECENT_CHECKS = 25;

/** The subject's checked items for the subject view: the newest 25, the total, and a link listing all. */
export async function recentChecksOf(store: RegionStore, orgId: string, subjectReference: string, base: string): Promise<SubjectChecks> {
  const { rows, total } = await checksRepo(store.db).subjectItems(orgId, subjectReference, RECENT_CHECKS);
  return {
    // Shaped as the items list shapes them, the reviewer's verdict included (spec 2.5).
    recent: await listedResults(store.db, orgId, rows, base),
    total,
    next: total > 0 ? `${base}/sig/checks?view=items&subject_reference=${encodeURIComponent(subjectReference)}` : null,
  };
}
