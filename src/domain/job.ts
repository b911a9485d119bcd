/**
 * The lifecycle of a check job, free of storage: which statuses exist, how a job moves between them, and
 * when it is finished. The Job Durable Object applies these rules; D1 mirrors the outcome.
 *
 *   queued --start--> running --last item done--> completed (some item has a decision)
 *                                               \-> failed    (every item ended in an error)
 *   queued --reject--> rejected   (never started: billing or quota refused the whole job)
 *   queued|running --fail--> failed (the job cannot go on, e.g. its inputs are gone)
 */

export const JOB_STATUSES = ["queued", "running", "completed", "failed", "rejected"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export const JOB_SOURCES = ["api", "bucket"] as const;
export type JobSource = (typeof JOB_SOURCES)[number];

/** How the creating request handled the job. */
export type JobMode = "sync" | "queued" | "stream";

export function isFinished(status: JobStatus): boolean {
  return status === "completed" || status === "failed" || status === "rejected";
}

export interface JobProgress {
  status: JobStatus;
  itemCount: number;
  /** Items with a stored outcome (a decision or an error). */
  completed: number;
  /** Of those, the items that ended in an error. */
  errored: number;
}

export type JobEvent = { type: "start" } | { type: "item_done"; ok: boolean } | { type: "fail" } | { type: "reject" };

/**
 * The progress after an event, and whether this event finished the job. A finished job ignores every
 * further event, so a redelivered message can never finish it twice. Counting each item once is the
 * caller's part (the Job DO keeps the set of completed item indexes).
 */
export function applyJobEvent(p: JobProgress, e: JobEvent): { progress: JobProgress; finishedNow: boolean } {
  if (isFinished(p.status)) return { progress: p, finishedNow: false };
  switch (e.type) {
    case "start":
      return { progress: { ...p, status: "running" }, finishedNow: false };
    case "reject":
      if (p.status !== "queued") return { progress: p, finishedNow: false };
      return { progress: { ...p, status: "rejected" }, finishedNow: true };
    case "fail":
      return { progress: { ...p, status: "failed" }, finishedNow: true };
    case "item_done": {
      const completed = Math.min(p.itemCount, p.completed + 1);
      const errored = p.errored + (e.ok ? 0 : 1);
      if (completed < p.itemCount) return { progress: { ...p, status: "running", completed, errored }, finishedNow: false };
      const status: JobStatus = errored >= p.itemCount ? "failed" : "completed";
      return { progress: { ...p, status, completed, errored }, finishedNow: true };
    }
  }
}

/** Synchronous checks: exactly one item of at most this many pages is checked within the request. */
export const SYNC_MAX_PAGES = 10;
/** The budget of one item (spec part 8). */
export const ITEM_BUDGET_MS = 30_000;

/**
 * How a new job runs: streamed (asked for, one item), inline (one item of at most 10 pages), or queued.
 * Returns null for a stream request that does not hold exactly one item.
 */
export function chooseMode(wantsStream: boolean, pageCounts: number[]): JobMode | null {
  if (wantsStream) return pageCounts.length === 1 ? "stream" : null;
  return pageCounts.length === 1 && pageCounts[0] <= SYNC_MAX_PAGES ? "sync" : "queued";
}

/** The check id of an item: `job_id/index` (spec 2.1). */
export function checkId(jobId: string, index: number): string {
  return `${jobId}/${index}`;
}
