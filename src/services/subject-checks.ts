import type { RegionStore } from "../http/context";

export interface SubjectChecks {
  recent: { check_id: string; job_id: string; item_index: number; decision: string | null; created_at: string }[];
  total: number;
  next: string | null;
}

/**
 * The subject's checked items for the subject view: the newest 25, the total, and a link listing all.
 * Checks do not exist yet, so this is empty but present; the checks work fills it from its items table.
 */
export async function recentChecksOf(_store: RegionStore, _orgId: string, _subjectReference: string, _base: string): Promise<SubjectChecks> {
  return { recent: [], total: 0, next: null };
}
