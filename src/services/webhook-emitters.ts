/**
 * The service's own webhook events, emitted where they happen: a checked item's outcome, a finished
 * job, a queued reference enrolled or rejected. Each event id is derived from what happened (job, item,
 * upload and kind), so the at-least-once paths that call these (queue redeliveries) emit the same event
 * again and no endpoint receives it twice.
 */
import { configOf } from "../config";
import type { Env } from "../env";
import type { Org, RegionStore } from "../domain/tenancy";
import { hostOfRegion } from "../http/region";
import { deterministicEventId } from "../domain/webhook-events";
import type { JobStatus } from "../domain/job";
import { parseReplacement } from "../domain/enrolment";
import { subjectsRepo } from "../storage/subjects";
import type { EndpointRow } from "../storage/webhooks";
import { renderResult, type StoredResult } from "./check-results";
import { publishEvent } from "./webhooks";
import type { DropSummary } from "./bucket-drops";
import type { LearningOutcome } from "./learning";

export interface EmitDeps {
  env: Env;
  org: Org;
  store: RegionStore;
}

/** The public address links in payloads point at. */
export function payloadBaseUrl(env: Env, org: Org): string {
  const base = configOf(env).apiBaseUrl;
  if (base) return base;
  return `https://${hostOfRegion(env, org.region) ?? "api.countersign.localhost"}`;
}

/** `enabled`: the organisation's enabled `sig` endpoints, when the caller read them already. */
export async function emitCheckCompleted(deps: EmitDeps, result: StoredResult, enabled?: EndpointRow[]): Promise<void> {
  const id = await deterministicEventId(deps.org.id, "check.completed", result.check_id);
  await publishEvent(
    deps,
    "sig",
    {
      id,
      type: "check.completed",
      data: renderResult(result, payloadBaseUrl(deps.env, deps.org)),
      at: result.completed_at,
    },
    undefined,
    enabled,
  );
}

export interface FinishedJob {
  jobId: string;
  status: JobStatus;
  source: "api" | "bucket";
  itemCount: number;
  completed: number;
  errored: number;
  createdAt: string;
  finishedAt: string | null;
}

/** `job.completed` or `job.failed` (also for a rejected job) once a job has finished; nothing before. */
export async function emitJobFinished(deps: EmitDeps, job: FinishedJob): Promise<void> {
  if (job.status !== "completed" && job.status !== "failed" && job.status !== "rejected") return;
  const type = job.status === "completed" ? "job.completed" : "job.failed";
  const { results } = await deps.store.db
    .prepare(
      "SELECT COALESCE(decision, 'ERROR') AS d, COUNT(*) AS n FROM check_items WHERE org_id = ? AND job_id = ? AND state = 'done' GROUP BY d",
    )
    .bind(deps.org.id, job.jobId)
    .all<{ d: string; n: number }>();
  const decisions = Object.fromEntries(results.map((r) => [r.d, r.n]));
  const id = await deterministicEventId(deps.org.id, type, job.jobId);
  await publishEvent(deps, "sig", {
    id,
    type,
    at: job.finishedAt ?? undefined,
    data: {
      job_id: job.jobId,
      status: job.status,
      source: job.source,
      item_count: job.itemCount,
      completed_items: job.completed,
      errored_items: job.errored,
      decisions,
      created_at: job.createdAt,
      finished_at: job.finishedAt ?? new Date().toISOString(),
      status_url: `${payloadBaseUrl(deps.env, deps.org)}/sig/checks/${job.jobId}`,
    },
  });
}

/** `reference.enrolled` or `reference.rejected` for a queued upload that has its outcome. */
export async function emitQueuedReference(deps: EmitDeps, subjectReference: string, refId: string, uploadId: string): Promise<void> {
  const row = await subjectsRepo(deps.store.db).reference(deps.org.id, subjectReference, refId);
  if (!row) return;
  const pending = parseReplacement(row.replacement);
  // The upload is the reference itself, or a rejected replacement of a live reference (which stays).
  const outcome =
    row.uploadId === uploadId
      ? row.status === "queued"
        ? null
        : { status: row.status, source: row.source, reason: row.rejectedReason, detail: row.rejectedDetail, at: row.enrolledAt }
      : pending?.uploadId === uploadId && pending.status === "rejected"
        ? { status: pending.status, source: pending.source, reason: pending.rejectedReason, detail: pending.rejectedDetail, at: null }
        : null;
  if (!outcome) return;
  const type = outcome.status === "enrolled" ? "reference.enrolled" : "reference.rejected";
  const id = await deterministicEventId(deps.org.id, type, `${subjectReference}/${refId}/${uploadId}`);
  await publishEvent(deps, "sig", {
    id,
    type,
    data: {
      subject_reference: subjectReference,
      ref_id: refId,
      status: outcome.status,
      source: outcome.source,
      rejected_reason: outcome.reason ?? null,
      rejected_detail: outcome.detail ?? null,
      at: outcome.at ?? new Date().toISOString(),
    },
  });
}

/** `bucket.drop.completed`: once per drop, when its summary.json has been written. */
export async function emitBucketDropCompleted(deps: EmitDeps, drop: { bucket: string; summary: DropSummary }): Promise<void> {
  const { summary } = drop;
  // One event per drop: a folder takes later drops too (a new manifest, a new job) that write the same
  // summary key, so the key alone would give them the first drop's id and they would be dropped as repeats.
  // The job id (or, for a drop without a job, its creation time) tells them apart and stays fixed for one drop.
  const id = await deterministicEventId(
    deps.org.id,
    "bucket.drop.completed",
    `${summary.drop.summary_key}/${summary.job_id ?? ""}/${summary.created_at}`,
  );
  const status = summary.status === "queued" || summary.status === "running" ? "completed" : summary.status;
  await publishEvent(deps, "sig", {
    id,
    type: "bucket.drop.completed",
    data: {
      job_id: summary.job_id,
      bucket: drop.bucket,
      summary_key: summary.drop.summary_key,
      status,
      item_count: summary.counts.items,
      decided_count: summary.counts.decided,
      errors: summary.error ? [summary.error] : [],
      status_url: summary.status_url,
    },
    at: summary.completed_at,
  });
}

/** `reference.learned` for every learning outcome (learned, refused, evicted, unlearned), once each. */
export async function emitLearningOutcome(deps: EmitDeps, outcome: LearningOutcome): Promise<void> {
  const id = await deterministicEventId(deps.org.id, "reference.learned", `${outcome.outcome}/${outcome.checkId}/${outcome.refId ?? ""}`);
  await publishEvent(deps, "sig", {
    id,
    type: "reference.learned",
    data: {
      outcome: outcome.outcome,
      check_id: outcome.checkId,
      subject_reference: outcome.subjectReference,
      ref_id: outcome.refId,
      reason: outcome.reason,
    },
    at: new Date().toISOString(),
  });
}
