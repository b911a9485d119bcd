import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { App } from "../../app";
import type { AppEnv } from "../../http/context";
import { defineRoute, problems } from "../../http/route";
import { ProblemError, fieldName, notFound } from "../../http/problem";
import { jobObject } from "../../../durable-objects/job-client";
import { isFinished } from "../../domain/job";
import { checksRepo, type DecisionFilter } from "../../storage/checks";
import type { CheckJobRow } from "../../storage/schema/checks";
import { defaultSignature, renderResult, storedResultOf } from "../../services/check-results";
import { inboxExpired } from "../../services/inbox";
import { services } from "../../http/services";
import { ImageQuery, ItemParams, JobParams, JobQuery, JobSchema } from "./schemas";
import { privatePng, privatePngResponse } from "../../http/private-image";
import { reviewsRepo } from "../../storage/reviews";
import { renderReview } from "../../services/learning";

const getJob = defineRoute(
  { permission: "sig:checks:read" },
  {
    method: "get",
    path: "/sig/checks/{job_id}",
    tags: ["checks"],
    summary: "Read a job and its results, paged by item_index",
    description:
      "`cursor` is the previous page's next_cursor (the last item_index returned); `limit` 1 to 500 (default 100). `decision` filters " +
      "the results (ERROR: items without a decision) and leaves the paging unchanged. `format=ndjson` gives one CheckResult per line " +
      "for a finished job, and 409 conflict while it runs.",
    request: { params: JobParams, query: JobQuery },
    responses: {
      200: {
        description: "The job",
        content: { "application/json": { schema: JobSchema }, "application/x-ndjson": { schema: z.string() } },
      },
      ...problems(400, 401, 403, 404, 409, 421, 429),
    },
  },
);

const itemImage = defineRoute(
  { permission: "sig:checks:read", rate: "image" },
  {
    method: "get",
    path: "/sig/checks/{job_id}/items/{index}/image",
    tags: ["checks"],
    summary: "Grey PNG crop of a located signature (8% padding, at most 640 px on the long side)",
    description:
      "`signature` selects the signature by its index (default: the best match, else the first). 404 when the item has no located signature or its input has expired.",
    request: { params: ItemParams, query: ImageQuery },
    responses: {
      200: privatePngResponse("The crop"),
      ...problems(400, 401, 403, 404, 421, 429, 503),
    },
  },
);

/** The position after a next_cursor: an item_index of the job, as this route issues them. */
function cursorOf(raw: string | undefined, itemCount: number): number | null {
  if (raw === undefined) return null;
  if (!/^(0|[1-9]\d{0,8})$/.test(raw) || Number(raw) >= itemCount) {
    const field = fieldName("query", "cursor");
    throw new ProblemError("invalid_cursor", `${field}: is not a next_cursor of this job (the last item_index returned)`, {
      extensions: { errors: [{ field, message: "must be a next_cursor this route returned" }] },
    });
  }
  return Number(raw);
}

async function loadJob(c: Context<AppEnv>, jobId: string): Promise<CheckJobRow> {
  const tenant = c.get("tenant");
  const job = await checksRepo(tenant.store.db).job(tenant.org.id, jobId);
  if (!job) throw notFound("job");
  return job;
}

export function registerReadChecks(app: App): void {
  app.openapi(getJob, async (c) => {
    const { job_id: jobId } = c.req.valid("param");
    const query = c.req.valid("query");
    const tenant = c.get("tenant");
    const job = await loadJob(c, jobId);
    const after = cursorOf(query.cursor, job.itemCount);
    const decision: DecisionFilter = query.decision ?? null;
    // The Job DO is the authority on progress; the row mirrors it.
    const state = await jobObject(c.env, tenant.org.id, jobId).state();
    const status = state?.status ?? job.status;
    const origin = new URL(c.req.url).origin;
    const repo = checksRepo(tenant.store.db);

    if (query.format === "ndjson") {
      if (!isFinished(status)) {
        throw new ProblemError("conflict", `The job is ${status}; ndjson results are available once it has finished.`, {
          extensions: { job_id: jobId, status_url: `${origin}/sig/checks/${jobId}` },
        });
      }
      const lines: string[] = [];
      for (let from: number | null = after; ; ) {
        const page = await repo.results(tenant.org.id, jobId, { after: from, limit: 500, decision });
        for (const row of page) lines.push(JSON.stringify(renderResult(storedResultOf(row)!, origin)));
        if (page.length < 500) break;
        from = page[page.length - 1].itemIndex;
      }
      return c.body(lines.map((l) => `${l}\n`).join(""), 200, { "Content-Type": "application/x-ndjson" }) as never;
    }

    const rows = await repo.results(tenant.org.id, jobId, { after, limit: query.limit + 1, decision });
    const page = rows.slice(0, query.limit);
    const more = rows.length > query.limit;
    // A reviewer's verdict and what learning made of it (docs/learning.md), on the items that have one.
    const reviews = await reviewsRepo(tenant.store.db).forItems(
      tenant.org.id,
      jobId,
      page.map((r) => r.itemIndex),
    );
    return c.json(
      {
        job_id: job.jobId,
        status,
        source: job.source,
        mode: job.mode,
        policy: job.policy,
        item_count: job.itemCount,
        completed_items: state?.completed ?? job.completedItems,
        metadata: job.metadata ? (JSON.parse(job.metadata) as Record<string, unknown>) : null,
        created_at: job.createdAt,
        updated_at: job.updatedAt,
        completed_at: state?.finishedAt ?? job.completedAt,
        inbox_expires_at: job.inboxExpiresAt,
        status_url: `${origin}/sig/checks/${jobId}`,
        results: page.map((row) => {
          const review = reviews.get(row.itemIndex);
          return { ...renderResult(storedResultOf(row)!, origin), review: review ? renderReview(review) : null };
        }),
        next_cursor: more ? String(page[page.length - 1].itemIndex) : null,
      },
      200,
    );
  });

  app.openapi(itemImage, async (c) => {
    const { job_id: jobId, index: rawIndex } = c.req.valid("param");
    const { signature } = c.req.valid("query");
    const tenant = c.get("tenant");
    const job = await loadJob(c, jobId);
    const item = await checksRepo(tenant.store.db).item(tenant.org.id, jobId, Number(rawIndex));
    if (!item) throw notFound("item");
    const result = storedResultOf(item);
    if (!result || result.signatures.length === 0) throw new ProblemError("not_found", "The item has no located signature.");
    const chosen = signature ?? defaultSignature(result)!;
    const sig = result.signatures.find((s) => s.index === chosen);
    if (!sig) throw new ProblemError("not_found", `The item has no signature with index ${chosen}.`);
    const expired = new ProblemError(
      "not_found",
      "The item's input has expired from the job's inbox (inbox_ttl); its crop is no longer available.",
    );
    if (inboxExpired(job)) throw expired;

    const png = await services(c).crops.signatureCrop(jobId, item, sig);
    if (!png) throw expired;
    return privatePng(png);
  });
}
