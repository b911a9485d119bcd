/**
 * Running a new check job for the request that created it: a queued job is handed to the queue (and
 * taken back out when the queue refuses it), and a synchronous or streamed one runs item 0 inline,
 * within the item's budget and one of the isolate's inline slots. Whatever the request cannot finish
 * goes on through the queue. Free of HTTP: the route turns the outcomes into responses or events.
 */
import type { Config } from "../config";
import { ProblemError } from "../http/problem";
import { inlineSlots } from "./check-capacity";
import { BudgetExceeded, discardJob, enqueueItems, runItem, type CheckContext, type RunOptions } from "./checks";
import type { StoredResult } from "./check-results";
import { logError } from "../util/log";

/** How an inline run ended: a result, no slot in time, the budget ran out, or an unexpected failure. */
export type InlineOutcome =
  | { kind: "done"; result: StoredResult }
  | { kind: "busy" }
  | { kind: "timeout" }
  | { kind: "failed"; error: unknown };

export interface CheckRunsScope {
  ctx: CheckContext;
  checks: Config["checks"];
  /** Keeps work alive after the response (ExecutionContext.waitUntil). */
  waitUntil(work: Promise<unknown>): void;
}

export function checkRuns({ ctx, checks, waitUntil }: CheckRunsScope) {
  return {
    /** Sends every item of a queued job to the queue; without its messages the job would wait forever, so a refusal removes it (503). */
    async enqueueJob(jobId: string, indexes: number[]): Promise<void> {
      try {
        await enqueueItems(ctx, jobId, indexes);
      } catch (err) {
        logError("check queue unavailable", err, { job_id: jobId });
        await discardJob(ctx, jobId);
        throw new ProblemError("unavailable", "The check queue is unavailable; nothing was kept. Retry the request.", {
          headers: { "Retry-After": "5" },
        });
      }
    },

    /** Runs item 0 inline within its budget; anything else hands it to the queue (see handOff). */
    async runInline(jobId: string, onEvent?: RunOptions["onEvent"]): Promise<InlineOutcome> {
      const deadline = Date.now() + checks.itemBudgetMs;
      const release = await inlineSlots.acquire(checks.capacity, deadline);
      if (!release) return { kind: "busy" };
      const run = runItem(ctx, jobId, 0, { deadline, onEvent }).finally(release);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const expired = new Promise<InlineOutcome>((resolve) => {
        timer = setTimeout(() => resolve({ kind: "timeout" }), Math.max(0, deadline - Date.now()));
      });
      const outcome = await Promise.race([
        run.then(
          (result): InlineOutcome => ({ kind: "done", result }),
          (error): InlineOutcome => (error instanceof BudgetExceeded ? { kind: "timeout" } : { kind: "failed", error }),
        ),
        expired,
      ]);
      if (timer !== undefined) clearTimeout(timer);
      // A run that lost the race stops at its next stage, or stores its result if it was past the last one.
      waitUntil(
        run.then(
          () => undefined,
          () => undefined,
        ),
      );
      return outcome;
    },

    /** Item 0 of a job the request could not finish goes on through the queue. */
    handOff(jobId: string): Promise<void> {
      return enqueueItems(ctx, jobId, [0]);
    },
  };
}

export type CheckRuns = ReturnType<typeof checkRuns>;
