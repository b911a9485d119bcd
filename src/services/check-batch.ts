/**
 * Running the items of one job that arrived in one queue batch, together. Per item, the work is the
 * same as runItem's (the verification core, the input and crop files); what one item alone would pay
 * per item is paid once per batch: reading the job and its items (one query), moving the job to
 * running (one Job DO call), loading each subject's reference model, and settling the outcomes
 * (settleResults: one Job DO call, one usage call, one progress mirror). Each outcome is still stored
 * alone, as soon as it is computed, so that a batch killed part way keeps its progress.
 *
 * The items are evaluated concurrently: while one waits on storage, another computes. Exactly once
 * holds as in runItem: an outcome is stored only over a pending item (a racing delivery's stands),
 * and the Job DO and the usage counter count each item index once however often it is settled.
 */
import { jobObject } from "../../durable-objects/job-client";
import { checksRepo } from "../storage/checks";
import type { CheckItemRow } from "../storage/schema/checks";
import { storedResultOf, type StoredResult } from "./check-results";
import { evaluate, itemOutcome, settleResults, type CheckContext, type RunOptions } from "./checks";
import { concurrencyGate } from "../util/map-limited";

/**
 * Items of a queue batch evaluated at once, across all its jobs. The isolate computes one at a time
 * anyway; a few in flight keep it busy while others wait on storage. Bounded like the inline checks
 * (DEFAULTS.checkCapacity) because each decoded A4 page holds tens of megabytes and an isolate has 128 MB.
 */
export const BATCH_CONCURRENCY = 4;

/** Admits one item evaluation (of any job of the batch) when fewer than the limit are running. */
export type EvaluationGate = <R>(fn: () => Promise<R>) => Promise<R>;

/** Per item index of the batch: undefined when it is settled, else the error to retry it for. */
export type BatchOutcome = Map<number, unknown>;

/**
 * Runs and settles the given items of a job. Throws (every item to be retried) when the job cannot be
 * read or settling fails; an item that alone fails is reported in the outcome and the rest go on.
 */
export async function runItems(
  ctx: CheckContext,
  jobId: string,
  indexes: number[],
  gate: EvaluationGate = concurrencyGate(BATCH_CONCURRENCY),
): Promise<BatchOutcome> {
  const repo = checksRepo(ctx.store.db);
  const wanted = [...new Set(indexes)];
  const [job, rows] = await Promise.all([repo.job(ctx.org.id, jobId), repo.items(ctx.org.id, jobId, wanted)]);
  if (!job) throw new Error(`check job ${jobId} does not exist`);
  const outcome: BatchOutcome = new Map();
  const byIndex = new Map(rows.map((r) => [r.itemIndex, r]));
  for (const index of wanted) {
    if (!byIndex.has(index)) outcome.set(index, new Error(`check item ${jobId}/${index} does not exist`));
  }

  // Stored before (a redelivery): settled again, not computed again.
  const results: StoredResult[] = [];
  const pending: CheckItemRow[] = [];
  for (const row of rows) {
    const done = row.state === "done" ? storedResultOf(row) : null;
    if (done) results.push(done);
    else pending.push(row);
  }

  if (pending.length > 0) {
    const started = await jobObject(ctx.env, ctx.org.id, jobId).start();
    if (started) await repo.mirrorProgress(ctx.org.id, jobId, started);
    const opts: RunOptions = { models: new Map(), renderCrops: false };
    // Each outcome is stored as soon as it is computed: if the invocation dies part way (CPU or memory
    // limit), a redelivery settles what was stored instead of computing the whole batch again, so a
    // batch always makes progress. Settling stays once per batch.
    const evaluated = await Promise.all(
      pending.map((item) =>
        gate(async () => {
          const result = await evaluate(ctx, job, item, opts);
          const [stored] = await repo.finishItems(ctx.org.id, jobId, [{ index: item.itemIndex, outcome: itemOutcome(result, item) }]);
          return { item, result, stored };
        }).then(
          (done) => done,
          (error: unknown) => ({ item, error }),
        ),
      ),
    );
    const computed: { item: CheckItemRow; result: StoredResult; stored: boolean }[] = [];
    for (const e of evaluated) {
      if ("result" in e) computed.push(e);
      else outcome.set(e.item.itemIndex, e.error);
    }
    // Another delivery stored some outcomes first: those stand.
    const lost = computed.filter((c) => !c.stored).map((c) => c.item.itemIndex);
    const theirs = lost.length
      ? new Map((await repo.items(ctx.org.id, jobId, lost)).map((r) => [r.itemIndex, storedResultOf(r)]))
      : new Map<number, StoredResult | null>();
    for (const c of computed) results.push(c.stored ? c.result : (theirs.get(c.item.itemIndex) ?? c.result));
  }

  results.sort((a, b) => a.item_index - b.item_index);
  await settleResults(ctx, job, results);
  for (const r of results) outcome.set(r.item_index, undefined);
  return outcome;
}
