/**
 * The listing queries of GET /sig/checks: jobs, items and the summary, newest first with keyset paging
 * (a page starts strictly after the last row of the previous one, so pages stay stable while checks are
 * made). Text filters are exact; `q` is a case-sensitive prefix, compared with substr rather than LIKE
 * (which ignores case in SQLite and treats `_` as a wildcard).
 */
import type { CheckItemRow, CheckJobRow } from "./schema/checks";

export interface ItemFilters {
  since?: string;
  until?: string;
  reference?: string;
  process?: string;
  subjectReference?: string;
  inputType?: string;
  /** A decision, or ERROR for items without one. */
  decision?: string;
  /** Whether the item has a reviewer's verdict (check_reviews). */
  reviewed?: boolean;
  q?: string;
}

export interface JobFilters {
  since?: string;
  until?: string;
  status?: string;
  source?: string;
}

type Where = { sql: string[]; args: unknown[] };

function itemWhere(orgId: string, f: ItemFilters): Where {
  const w: Where = { sql: ["org_id = ?", "state = 'done'"], args: [orgId] };
  const add = (clause: string, ...args: unknown[]) => {
    w.sql.push(clause);
    w.args.push(...args);
  };
  if (f.since) add("created_at >= ?", f.since);
  if (f.until) add("created_at < ?", f.until);
  if (f.reference !== undefined) add("reference = ?", f.reference);
  if (f.process !== undefined) add("process = ?", f.process);
  if (f.subjectReference !== undefined) add("subject_reference = ?", f.subjectReference);
  if (f.inputType !== undefined) add("input_type = ?", f.inputType);
  if (f.decision === "ERROR") add("decision IS NULL");
  else if (f.decision !== undefined) add("decision = ?", f.decision);
  if (f.reviewed !== undefined) {
    add(
      `${f.reviewed ? "" : "NOT "}EXISTS (SELECT 1 FROM check_reviews r WHERE r.org_id = check_items.org_id AND r.job_id = check_items.job_id AND r.item_index = check_items.item_index)`,
    );
  }
  if (f.q) {
    // SQLite's substr counts characters (code points); a JS length counts UTF-16 units, two for an emoji.
    const n = [...f.q].length;
    add(
      `(substr(reference, 1, ?) = ? OR substr(subject_reference, 1, ?) = ? OR substr(file_name, 1, ?) = ? OR substr(job_id || '/' || item_index, 1, ?) = ?)`,
      n,
      f.q,
      n,
      f.q,
      n,
      f.q,
      n,
      f.q,
    );
  }
  return w;
}

export interface ItemPosition {
  c: string;
  j: string;
  i: number;
}

type RawItem = Record<string, unknown>;

function toItem(r: RawItem): CheckItemRow {
  return {
    orgId: r.org_id as string,
    jobId: r.job_id as string,
    itemIndex: r.item_index as number,
    state: r.state as CheckItemRow["state"],
    subjectReference: r.subject_reference as string | null,
    reference: r.reference as string | null,
    process: r.process as string | null,
    inputType: r.input_type as string | null,
    fileName: r.file_name as string | null,
    spec: r.spec as string,
    inputKey: r.input_key as string,
    pageCount: r.page_count as number | null,
    decision: r.decision as string | null,
    score: r.score as number | null,
    billable: r.billable as number,
    result: r.result as string | null,
    createdAt: r.created_at as string,
    completedAt: r.completed_at as string | null,
  };
}

export async function listItems(
  db: D1Database,
  orgId: string,
  f: ItemFilters,
  after: ItemPosition | null,
  limit: number,
): Promise<CheckItemRow[]> {
  const w = itemWhere(orgId, f);
  if (after) {
    w.sql.push("(created_at < ? OR (created_at = ? AND (job_id < ? OR (job_id = ? AND item_index < ?))))");
    w.args.push(after.c, after.c, after.j, after.j, after.i);
  }
  const { results } = await db
    .prepare(`SELECT * FROM check_items WHERE ${w.sql.join(" AND ")} ORDER BY created_at DESC, job_id DESC, item_index DESC LIMIT ?`)
    .bind(...w.args, limit)
    .all<RawItem>();
  return results.map(toItem);
}

export async function summariseItems(
  db: D1Database,
  orgId: string,
  f: ItemFilters,
): Promise<{ decisions: { decision: string | null; count: number }[]; processes: string[] }> {
  const w = itemWhere(orgId, f);
  const range: Where = { sql: ["org_id = ?", "process IS NOT NULL"], args: [orgId] };
  if (f.since) {
    range.sql.push("created_at >= ?");
    range.args.push(f.since);
  }
  if (f.until) {
    range.sql.push("created_at < ?");
    range.args.push(f.until);
  }
  const [counts, processes] = await db.batch([
    db.prepare(`SELECT decision, COUNT(*) AS count FROM check_items WHERE ${w.sql.join(" AND ")} GROUP BY decision`).bind(...w.args),
    db.prepare(`SELECT DISTINCT process FROM check_items WHERE ${range.sql.join(" AND ")} ORDER BY process LIMIT 1000`).bind(...range.args),
  ]);
  return {
    decisions: (counts.results as { decision: string | null; count: number }[]).map((r) => ({
      decision: r.decision,
      count: Number(r.count),
    })),
    processes: (processes.results as { process: string }[]).map((r) => r.process),
  };
}

export interface JobPosition {
  c: string;
  j: string;
}

export async function listJobs(
  db: D1Database,
  orgId: string,
  f: JobFilters,
  after: JobPosition | null,
  limit: number,
): Promise<CheckJobRow[]> {
  const w: Where = { sql: ["org_id = ?"], args: [orgId] };
  if (f.since) w.sql.push("created_at >= ?"), w.args.push(f.since);
  if (f.until) w.sql.push("created_at < ?"), w.args.push(f.until);
  if (f.status) w.sql.push("status = ?"), w.args.push(f.status);
  if (f.source) w.sql.push("source = ?"), w.args.push(f.source);
  if (after) {
    w.sql.push("(created_at < ? OR (created_at = ? AND job_id < ?))");
    w.args.push(after.c, after.c, after.j);
  }
  const { results } = await db
    .prepare(
      `SELECT org_id, job_id, status, source, mode, policy, item_count, completed_items, created_at, updated_at, completed_at, inbox_expires_at
       FROM check_jobs WHERE ${w.sql.join(" AND ")} ORDER BY created_at DESC, job_id DESC LIMIT ?`,
    )
    .bind(...w.args, limit)
    .all<Record<string, unknown>>();
  return results.map((r) => ({
    orgId: r.org_id as string,
    jobId: r.job_id as string,
    status: r.status as CheckJobRow["status"],
    source: r.source as CheckJobRow["source"],
    mode: r.mode as CheckJobRow["mode"],
    policy: r.policy as string,
    policySpec: "",
    itemCount: r.item_count as number,
    completedItems: r.completed_items as number,
    metadata: null,
    createdBy: "",
    createdAt: r.created_at as string,
    updatedAt: r.updated_at as string,
    completedAt: r.completed_at as string | null,
    inboxExpiresAt: r.inbox_expires_at as string,
    inboxSweptAt: null,
  }));
}
