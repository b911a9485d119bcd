import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { applyJobEvent, chooseMode, type JobProgress } from "../../src/domain/job";
import { buildUsageReport, isBillable, parsePeriod } from "../../src/domain/usage";
import { jobObject } from "../../durable-objects/job-client";

const fresh = (itemCount: number): JobProgress => ({ status: "queued", itemCount, completed: 0, errored: 0 });

describe("job lifecycle rules", () => {
  it("runs, completes on the last item, and ignores everything after", () => {
    let p = applyJobEvent(fresh(2), { type: "start" }).progress;
    expect(p.status).toBe("running");
    let r = applyJobEvent(p, { type: "item_done", ok: true });
    expect(r).toMatchObject({ finishedNow: false, progress: { status: "running", completed: 1 } });
    r = applyJobEvent(r.progress, { type: "item_done", ok: false });
    expect(r).toMatchObject({ finishedNow: true, progress: { status: "completed", completed: 2, errored: 1 } });
    p = r.progress;
    expect(applyJobEvent(p, { type: "item_done", ok: true })).toEqual({ progress: p, finishedNow: false });
    expect(applyJobEvent(p, { type: "fail" })).toEqual({ progress: p, finishedNow: false });
  });

  it("fails a job whose every item ended in an error, and rejects only a job that never started", () => {
    expect(applyJobEvent(fresh(1), { type: "item_done", ok: false }).progress.status).toBe("failed");
    expect(applyJobEvent(fresh(1), { type: "reject" })).toMatchObject({ finishedNow: true, progress: { status: "rejected" } });
    const running = applyJobEvent(fresh(1), { type: "start" }).progress;
    expect(applyJobEvent(running, { type: "reject" })).toEqual({ progress: running, finishedNow: false });
  });

  it("chooses inline for one item of at most 10 pages, queued otherwise, and streams one item only", () => {
    expect(chooseMode(false, [10])).toBe("sync");
    expect(chooseMode(false, [11])).toBe("queued");
    expect(chooseMode(false, [1, 1])).toBe("queued");
    expect(chooseMode(true, [40])).toBe("stream");
    expect(chooseMode(true, [1, 1])).toBeNull();
  });
});

describe("usage rules", () => {
  it("bills AUTO_APPROVE, APPROVE, FLAG and FAILED only", () => {
    expect(["AUTO_APPROVE", "APPROVE", "FLAG", "FAILED"].every(isBillable)).toBe(true);
    expect([null, "UNREADABLE", "NO_SIGNATURE"].some(isBillable)).toBe(false);
  });

  it("parses periods and counts the days that have begun", () => {
    const now = new Date("2026-11-22T10:00:00Z");
    expect(parsePeriod("current", now)).toMatchObject({
      month: "2026-11",
      daysBegun: 22,
      from: "2026-11-01T00:00:00.000Z",
      to: "2026-12-01T00:00:00.000Z",
    });
    expect(parsePeriod("2026-02", now)?.daysBegun).toBe(28);
    expect(parsePeriod("2027-01", now)?.daysBegun).toBe(0);
    for (const bad of ["2026-13", "2026-1", "26-11", "current ", ""]) expect(parsePeriod(bad, now)).toBeNull();
  });

  it("builds the report: counts, errors, the estimate at $0.50 and one daily entry per begun day", () => {
    const period = parsePeriod("2026-11", new Date("2026-11-03T01:00:00Z"))!;
    const report = buildUsageReport(
      period,
      [
        { day: "2026-11-01", decision: "APPROVE", count: 3 },
        { day: "2026-11-01", decision: "NO_SIGNATURE", count: 1 },
        { day: "2026-11-03", decision: "FAILED", count: 2 },
        { day: "2026-11-03", decision: null, count: 4 },
      ],
      true,
    );
    expect(report).toMatchObject({ checks: 10, billable_checks: 5, not_charged: 5, billing: { mode: "parent" } });
    expect(report.decisions).toMatchObject({ APPROVE: 3, FAILED: 2, NO_SIGNATURE: 1, errors: 4, FLAG: 0 });
    expect(report.estimate).toMatchObject({ amount: "2.50", amount_cents: 250, unit_price: "0.50" });
    expect(report.daily.map((d) => d.date)).toEqual(["2026-11-01", "2026-11-02", "2026-11-03"]);
    expect(report.daily[1]).toEqual({ date: "2026-11-02", checks: 0, billable_checks: 0, not_charged: 0 });
    expect(report.daily[2]).toMatchObject({ checks: 6, billable_checks: 2, not_charged: 4 });
  });
});

describe("Job Durable Object", () => {
  it("counts each item once and finishes the job exactly once, whatever the redeliveries", async () => {
    const job = jobObject(env, "org_t", "job-1");
    expect(await job.init("org_t", "job-1", 3)).toMatchObject({ status: "queued", itemCount: 3, completed: 0 });
    expect(await job.init("org_t", "job-1", 99)).toMatchObject({ itemCount: 3 });
    await job.start();
    // Each item delivered twice, concurrently: every call is atomic in the object.
    const calls = await Promise.all([0, 1, 2, 0, 1, 2, 2].map((i) => job.completeItem(i, true)));
    expect(calls.filter((c) => c!.counted)).toHaveLength(3);
    expect(calls.filter((c) => c!.finishedNow)).toHaveLength(1);
    const state = await job.state();
    expect(state).toMatchObject({ status: "completed", completed: 3, errored: 0 });
    expect(state!.finishedAt).not.toBeNull();
    expect(await job.completedItems()).toEqual([0, 1, 2]);
    expect(await job.completeItem(3, true)).toBeNull();
  });

  it("counts a queue batch's items in one call: each once, across calls and within one, finishing exactly once", async () => {
    const job = jobObject(env, "org_t", "job-3");
    await job.init("org_t", "job-3", 4);
    await job.start();
    // Two overlapping batches race (a redelivery), one of them naming an index twice and one outside the job.
    const [a, b] = await Promise.all([
      job.completeItems([
        { index: 0, ok: true },
        { index: 1, ok: false },
        { index: 1, ok: false },
      ]),
      job.completeItems([
        { index: 1, ok: false },
        { index: 2, ok: true },
        { index: 7, ok: true },
      ]),
    ]);
    const counted = [...a!.counted, ...b!.counted].filter(Boolean);
    expect(counted).toHaveLength(3);
    expect(b!.counted[2]).toBe(false);
    expect(a!.finishedNow || b!.finishedNow).toBe(false);
    const last = await job.completeItems([
      { index: 3, ok: true },
      { index: 0, ok: true },
    ]);
    expect(last).toMatchObject({ counted: [true, false], finishedNow: true, state: { status: "completed", completed: 4, errored: 1 } });
    expect(await job.completeItems([{ index: 3, ok: true }])).toMatchObject({ counted: [false], finishedNow: false });
    expect(await job.completedItems()).toEqual([0, 1, 2, 3]);
    expect(await jobObject(env, "org_t", "job-never").completeItems([{ index: 0, ok: true }])).toBeNull();
  });

  it("keeps its state in SQLite storage", async () => {
    const job = jobObject(env, "org_t", "job-2");
    await job.init("org_t", "job-2", 1);
    await runInDurableObject(job, async (_instance, state) => {
      const rows = state.storage.sql.exec<{ status: string }>("SELECT status FROM job").toArray();
      expect(rows).toEqual([{ status: "queued" }]);
    });
    expect(await job.reject()).toMatchObject({ finishedNow: true, state: { status: "rejected" } });
    expect(await job.completeItem(0, true)).toMatchObject({ counted: true, finishedNow: false, state: { status: "rejected" } });
  });
});
