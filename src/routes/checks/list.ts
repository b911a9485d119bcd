import { z } from "@hono/zod-openapi";
import { rfc3339Millis } from "../../domain/rfc3339";
import type { App } from "../../app";
import { defineRoute, problems } from "../../http/route";
import { fieldName, invalidField } from "../../http/problem";
import { decodeCursor, encodeCursor } from "../../http/cursor";
import { configOf } from "../../config";
import { Identifier, queryInteger } from "../../http/schemas";
import { DECISIONS } from "../../domain/policy-defaults";
import { JOB_STATUSES } from "../../domain/job";
import { listItems, listJobs, summariseItems, type ItemFilters, type ItemPosition, type JobPosition } from "../../storage/check-lists";
import { ReviewedCheckResult } from "./schemas";
import { listedResults } from "../../services/listed-results";

const JOBS_CURSOR = "GET /sig/checks?view=jobs";
const ITEMS_CURSOR = "GET /sig/checks?view=items";
export const LIST_LIMIT = { min: 1, max: 200, default: 50 } as const;

/** An RFC 3339 date-time (domain/rfc3339.ts: any precision, lower-case `t`/`z`, a leap second). */
const DateTime = z
  .string()
  .refine((s) => rfc3339Millis(s) !== null, "must be an RFC 3339 date-time")
  .openapi({ format: "date-time" });

const ListQuery = z.object({
  view: z.enum(["jobs", "items", "summary"]).default("jobs"),
  cursor: z.string().max(4096).optional(),
  limit: queryInteger(LIST_LIMIT)
    .default(LIST_LIMIT.default)
    .openapi({ description: `${LIST_LIMIT.min} to ${LIST_LIMIT.max}, default ${LIST_LIMIT.default} (jobs and items views)` }),
  since: DateTime.optional().openapi({ description: "On created_at, inclusive" }),
  until: DateTime.optional().openapi({ description: "On created_at, exclusive" }),
  status: z.enum(JOB_STATUSES).optional().openapi({ description: "jobs view only" }),
  source: z.enum(["api", "bucket"]).optional().openapi({ description: "jobs view only" }),
  reference: z.string().min(1).max(128).optional(),
  process: z.string().min(1).max(64).optional(),
  subject_reference: Identifier.optional(),
  decision: z
    .enum([...DECISIONS, "ERROR"] as unknown as [string, ...string[]])
    .optional()
    .openapi({ description: "items view; ERROR = no decision" }),
  reviewed: z
    .enum(["true", "false"])
    .optional()
    .openapi({ description: "items view: only items with (true) or without (false) a reviewer's verdict" }),
  input_type: z
    .string()
    .regex(/^[a-z_]{1,32}$/)
    .optional(),
  q: z
    .string()
    .min(1)
    .max(128)
    .optional()
    .openapi({ description: "Case-sensitive prefix of reference, subject reference, file name or check id" }),
});

/** Filters that belong to another view: a 400 naming the first one given. */
const FOREIGN: Record<"jobs" | "items" | "summary", (keyof z.infer<typeof ListQuery>)[]> = {
  jobs: ["reference", "process", "subject_reference", "decision", "reviewed", "input_type", "q"],
  items: ["status", "source"],
  summary: ["status", "source", "decision", "reviewed", "cursor", "limit"],
};

const JobSummary = z
  .object({
    job_id: z.string(),
    status: z.enum(JOB_STATUSES),
    source: z.enum(["api", "bucket"]),
    policy: z.string(),
    item_count: z.number().int(),
    completed_items: z.number().int(),
    created_at: z.string(),
    completed_at: z.string().nullable(),
    status_url: z.string(),
  })
  .openapi("JobSummary");

const listChecks = defineRoute(
  { permission: "sig:checks:read" },
  {
    method: "get",
    path: "/sig/checks",
    tags: ["checks"],
    summary: "List jobs, checked items, or a summary of decisions",
    description:
      "Newest first. `view=jobs` (JobList; filters status, source), `view=items` (CheckItemList, metadata omitted, each item with its " +
      "reviewer's verdict in `review`, null without one; filters reference, process, " +
      "subject_reference, decision, reviewed, input_type, q) or `view=summary` (ChecksSummary: counts per decision, ERROR for items without one, and the " +
      "processes seen in the date range; no decision, cursor or limit). A filter of another view is a 400 naming it.",
    request: { query: ListQuery },
    responses: {
      200: {
        description: "JobList, CheckItemList or ChecksSummary",
        content: {
          "application/json": {
            schema: z.union([
              z.object({ jobs: z.array(JobSummary), next_cursor: z.string().nullable() }).openapi("JobList"),
              z.object({ items: z.array(ReviewedCheckResult), next_cursor: z.string().nullable() }).openapi("CheckItemList"),
              z
                .object({ decisions: z.record(z.string(), z.number().int()), total: z.number().int(), processes: z.array(z.string()) })
                .openapi("ChecksSummary"),
            ]),
          },
        },
      },
      ...problems(400, 401, 403, 421, 429),
    },
  },
);

export function registerListChecks(app: App): void {
  app.openapi(listChecks, async (c) => {
    const query = c.req.valid("query");
    const given = new URL(c.req.url).searchParams;
    for (const name of FOREIGN[query.view]) {
      if (given.has(name)) throw invalidField(fieldName("query", name), `does not apply to view=${query.view}`);
    }
    const tenant = c.get("tenant");
    const db = tenant.store.db;
    const origin = new URL(c.req.url).origin;
    // To the millisecond, rounded up (rfc3339Millis): exact against times stored to the millisecond.
    const iso = (s: string | undefined) => (s === undefined ? undefined : new Date(rfc3339Millis(s)!).toISOString());
    const filters: ItemFilters = {
      since: iso(query.since),
      until: iso(query.until),
      reference: query.reference,
      process: query.process,
      subjectReference: query.subject_reference,
      inputType: query.input_type,
      decision: query.decision,
      reviewed: query.reviewed === undefined ? undefined : query.reviewed === "true",
      q: query.q,
    };
    const limit = query.limit;

    if (query.view === "summary") {
      const { decisions, processes } = await summariseItems(db, tenant.org.id, filters);
      const counts: Record<string, number> = Object.fromEntries([...DECISIONS, "ERROR"].map((d) => [d, 0]));
      for (const d of decisions) counts[d.decision ?? "ERROR"] = (counts[d.decision ?? "ERROR"] ?? 0) + d.count;
      return c.json({ decisions: counts, total: decisions.reduce((n, d) => n + d.count, 0), processes }, 200);
    }

    if (query.view === "items") {
      const after =
        query.cursor !== undefined ? await decodeCursor<ItemPosition>(configOf(c.env).cursorSecret, ITEMS_CURSOR, query.cursor) : null;
      const rows = await listItems(db, tenant.org.id, filters, after, limit + 1);
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      return c.json(
        {
          // The verdict rides along so a review queue can skip reviewed items without reading each job.
          items: await listedResults(db, tenant.org.id, page, origin),
          next_cursor:
            rows.length > limit && last
              ? await encodeCursor(configOf(c.env).cursorSecret, ITEMS_CURSOR, {
                  c: last.createdAt,
                  j: last.jobId,
                  i: last.itemIndex,
                } satisfies ItemPosition)
              : null,
        },
        200,
      );
    }

    const after =
      query.cursor !== undefined ? await decodeCursor<JobPosition>(configOf(c.env).cursorSecret, JOBS_CURSOR, query.cursor) : null;
    const rows = await listJobs(
      db,
      tenant.org.id,
      { since: filters.since, until: filters.until, status: query.status, source: query.source },
      after,
      limit + 1,
    );
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return c.json(
      {
        jobs: page.map((j) => ({
          job_id: j.jobId,
          status: j.status,
          source: j.source,
          policy: j.policy,
          item_count: j.itemCount,
          completed_items: j.completedItems,
          created_at: j.createdAt,
          completed_at: j.completedAt,
          status_url: `${origin}/sig/checks/${j.jobId}`,
        })),
        next_cursor:
          rows.length > limit && last
            ? await encodeCursor(configOf(c.env).cursorSecret, JOBS_CURSOR, { c: last.createdAt, j: last.jobId } satisfies JobPosition)
            : null,
      },
      200,
    );
  });
}
