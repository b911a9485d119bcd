import { env } from "cloudflare:workers";
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import worker from "../../src/index";
import { checksRepo } from "../../src/storage/checks";
import { jobObject } from "../../durable-objects/job-client";
import { api, createOrg, type CreatedOrg } from "../helpers/tenant";
import { signaturePng } from "../helpers/signatures";
import { blankPage, encodePng } from "../fixtures/generator";
import { checkForm, enrolWriter, expectProblem, postCheck, waitForJob, type CheckResultBody, type JobBody } from "../helpers/checks";
import { until } from "../helpers/wait";
import { otherForm } from "../helpers/forms";

let org: CreatedOrg;
const WRITER = 11;
const OTHER = 57;

beforeAll(async () => {
  org = await createOrg();
  await enrolWriter(org.apiKey, "alice", WRITER, 4);
});

async function usage(): Promise<{ checks: number; billable_checks: number; not_charged: number; decisions: Record<string, number> }> {
  return (await api("/sig/usage", { key: org.apiKey })).json();
}

/** Four items: same writer, other writer, a blank page, and a subject that does not exist (an item error). */
function fourItems(jobId: string) {
  return checkForm(
    {
      job_id: jobId,
      metadata: { batch: "b-1" },
      items: [
        { file: "same", subject_reference: "alice", reference: "r-1" },
        { file: "other", subject_reference: "alice", reference: "r-2" },
        { file: "blank", subject_reference: "alice", input_type: "scan" },
        { file: "same", subject_reference: "nobody" },
      ],
    },
    { same: signaturePng(WRITER, 6), other: signaturePng(OTHER, 1), blank: encodePng(blankPage(1240, 1754)) },
  );
}

describe("signature confidence", () => {
  it("is rounded to 4 decimals, as the score is, and the same on the inline and the queued path", async () => {
    const form = otherForm(WRITER);
    const item = { file: "form", subject_reference: "alice", input_type: "scan" };
    const inline = await postCheck(org.apiKey, checkForm({ items: [item] }, { form }));
    expect(inline.status).toBe(200);
    const inlineSignatures = ((await inline.json()) as CheckResultBody).signatures;
    expect(inlineSignatures.length).toBeGreaterThan(0);

    expect((await postCheck(org.apiKey, checkForm({ job_id: "confidence-1", items: [item, item] }, { form }))).status).toBe(202);
    const job = await waitForJob(org.apiKey, "confidence-1");
    for (const signatures of [inlineSignatures, ...job.results.map((r) => r.signatures)]) {
      for (const s of signatures) expect(s.confidence, JSON.stringify(s)).toBe(Math.round(s.confidence * 10_000) / 10_000);
      expect(signatures.map((s) => s.confidence)).toEqual(inlineSignatures.map((s) => s.confidence));
    }
  });
});

describe("queued checks", () => {
  let job: JobBody;

  it("queues several items: 202 with job_id, status_url and Location, then the consumer completes the job", async () => {
    const before = await usage();
    const res = await postCheck(org.apiKey, fourItems("batch-1"));
    expect(res.status).toBe(202);
    const accepted = (await res.json()) as { job_id: string; status: string; status_url: string; item_count: number };
    expect(accepted).toMatchObject({ job_id: "batch-1", status: "queued", item_count: 4 });
    expect(res.headers.get("Location")).toBe(accepted.status_url);
    expect(accepted.status_url).toMatch(/\/sig\/checks\/batch-1$/);

    // While it runs, ndjson is a conflict.
    await expectProblem(await api("/sig/checks/batch-1?format=ndjson", { key: org.apiKey }), 409, "conflict");

    job = await waitForJob(org.apiKey, "batch-1");
    expect(job).toMatchObject({ status: "completed", item_count: 4, completed_items: 4, metadata: { batch: "b-1" } });
    expect(job.results.map((r) => r.item_index)).toEqual([0, 1, 2, 3]);
    // Items without metadata of their own show the request's.
    expect(job.results.map((r) => r.metadata)).toEqual(Array(4).fill({ batch: "b-1" }));
    expect(["APPROVE", "AUTO_APPROVE"]).toContain(job.results[0].decision);
    expect(job.results[1].decision).toBe("FAILED");
    expect(job.results[2].decision).toBe("NO_SIGNATURE");
    expect(job.results[3]).toMatchObject({ decision: null, billable: false, errors: [{ code: "subject_not_found" }] });

    const after = await usage();
    expect(after.checks - before.checks).toBe(4);
    expect(after.billable_checks - before.billable_checks).toBe(2);
    expect(after.decisions.errors - before.decisions.errors).toBe(1);
  });

  it("pages results by item_index with next_cursor, and filters by decision without changing the paging", async () => {
    const p1 = (await (await api("/sig/checks/batch-1?limit=1", { key: org.apiKey })).json()) as JobBody;
    expect(p1.results.map((r) => r.item_index)).toEqual([0]);
    expect(p1.next_cursor).toBe("0");
    const p2 = (await (await api(`/sig/checks/batch-1?limit=2&cursor=${p1.next_cursor}`, { key: org.apiKey })).json()) as JobBody;
    expect(p2.results.map((r) => r.item_index)).toEqual([1, 2]);
    expect(p2.next_cursor).toBe("2");
    const p3 = (await (await api(`/sig/checks/batch-1?limit=2&cursor=2`, { key: org.apiKey })).json()) as JobBody;
    expect(p3.results.map((r) => r.item_index)).toEqual([3]);
    expect(p3.next_cursor).toBeNull();

    const failed = (await (await api("/sig/checks/batch-1?decision=FAILED", { key: org.apiKey })).json()) as JobBody;
    expect(failed.results.map((r) => r.item_index)).toEqual([1]);
    const errors = (await (await api("/sig/checks/batch-1?decision=ERROR", { key: org.apiKey })).json()) as JobBody;
    expect(errors.results.map((r) => r.item_index)).toEqual([3]);
    const afterCursor = (await (
      await api("/sig/checks/batch-1?decision=NO_SIGNATURE&cursor=0&limit=1", { key: org.apiKey })
    ).json()) as JobBody;
    expect(afterCursor.results.map((r) => r.item_index)).toEqual([2]);

    for (const q of [
      "limit=0",
      "limit=501",
      "limit=",
      "limit=1e1",
      "limit=%2010",
      "cursor=abc",
      "cursor=-1",
      "cursor=",
      "decision=MAYBE",
      "format=xml",
    ]) {
      const res = await api(`/sig/checks/batch-1?${q}`, { key: org.apiKey });
      expect(res.status, q).toBe(400);
    }
  });

  it("gives one CheckResult per line as ndjson once the job has finished", async () => {
    const res = await api("/sig/checks/batch-1?format=ndjson", { key: org.apiKey });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toContain("application/x-ndjson");
    const lines = (await res.text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as CheckResultBody);
    expect(lines.map((l) => l.check_id)).toEqual(["batch-1/0", "batch-1/1", "batch-1/2", "batch-1/3"]);
    expect(lines[1].decision).toBe("FAILED");
  });

  it("neither doubles the results nor the usage when messages are delivered again, even concurrently", async () => {
    const before = await usage();
    const messages = [0, 1, 2, 3, 0, 1].map((index, n) => ({
      id: `redelivery-${n}`,
      timestamp: new Date(),
      attempts: 2,
      body: { kind: "check_item", orgId: org.orgId, jobId: "batch-1", index },
    }));
    const batch = createMessageBatch("countersign-check-items", messages);
    const ctx = createExecutionContext();
    await Promise.all([
      worker.queue(batch, env, ctx),
      worker.queue(createMessageBatch("countersign-check-items", messages.slice(0, 2)), env, createExecutionContext()),
    ]);
    const result = await getQueueResult(batch, ctx);
    expect(result.explicitAcks.length).toBe(6);

    const after = await usage();
    expect(after).toEqual(before);
    const again = (await (await api("/sig/checks/batch-1", { key: org.apiKey })).json()) as JobBody;
    expect(again.results).toHaveLength(4);
    expect(again).toMatchObject({ status: "completed", completed_items: 4 });
    expect(again.results.map((r) => r.decision)).toEqual(job.results.map((r) => r.decision));
  });

  it("completes each item once when the first deliveries race each other (a consumer dying mid-item is redelivered)", async () => {
    const before = await usage();
    const res = await postCheck(
      org.apiKey,
      checkForm(
        {
          job_id: "race-1",
          items: [
            { file: "a", subject_reference: "alice" },
            { file: "b", subject_reference: "alice" },
          ],
        },
        { a: signaturePng(WRITER, 12), b: signaturePng(OTHER, 3) },
      ),
    );
    expect(res.status).toBe(202);
    // Deliver both items ourselves, three times at once, racing the real queue's deliveries.
    const messages = [0, 1].map((index) => ({
      id: `race-${index}`,
      timestamp: new Date(),
      attempts: 1,
      body: { kind: "check_item", orgId: org.orgId, jobId: "race-1", index },
    }));
    await Promise.all(
      [1, 2, 3].map(() => worker.queue(createMessageBatch("countersign-check-items", messages), env, createExecutionContext())),
    );
    const done = await waitForJob(org.apiKey, "race-1");
    expect(done).toMatchObject({ status: "completed", completed_items: 2 });
    expect(done.results).toHaveLength(2);
    // The last delivery to settle counts its item after the job reads completed: wait for the count itself.
    const after = await until(usage, (u) => u.checks - before.checks >= 2, { what: "both items to be counted" });
    expect(after.checks - before.checks).toBe(2);
  });

  it("runs a batch mixing two jobs' items together: each message acked or retried on its own item, each item counted once", async () => {
    const before = await usage();
    const post = async (jobId: string, items: { file: string; subject_reference: string }[], files: Record<string, Uint8Array>) => {
      const res = await postCheck(org.apiKey, checkForm({ job_id: jobId, items }, files));
      expect(res.status).toBe(202);
    };
    await post(
      "mixed-a",
      [
        { file: "a", subject_reference: "alice" },
        { file: "b", subject_reference: "alice" },
        { file: "c", subject_reference: "alice" },
      ],
      { a: signaturePng(WRITER, 14), b: signaturePng(OTHER, 5), c: signaturePng(WRITER, 15) },
    );
    await post(
      "mixed-b",
      [
        { file: "a", subject_reference: "alice" },
        { file: "a", subject_reference: "nobody" },
      ],
      { a: signaturePng(WRITER, 16) },
    );
    // One batch, as the queue might cut it: both jobs interleaved, an index twice, an index no job has,
    // and an organisation that does not exist; racing the real queue's own deliveries of the same items.
    const bodies = [
      { jobId: "mixed-a", index: 0 },
      { jobId: "mixed-b", index: 1 },
      { jobId: "mixed-a", index: 2 },
      { jobId: "mixed-b", index: 0 },
      { jobId: "mixed-a", index: 1 },
      { jobId: "mixed-a", index: 2 },
      { jobId: "mixed-a", index: 9 },
    ].map((b) => ({ kind: "check_item", orgId: org.orgId, ...b }));
    const messages = [
      ...bodies.map((body, n) => ({ id: `mixed-${n}`, timestamp: new Date(), attempts: 1, body })),
      { id: "mixed-gone", timestamp: new Date(), attempts: 1, body: { kind: "check_item", orgId: "org_gone", jobId: "x", index: 0 } },
    ];
    const batch = createMessageBatch("countersign-check-items", messages);
    const ctx = createExecutionContext();
    await worker.queue(batch, env, ctx);
    const result = await getQueueResult(batch, ctx);
    expect(result.retryMessages.map((r: { msgId: string }) => r.msgId)).toEqual(["mixed-6"]);
    expect([...result.explicitAcks].sort()).toEqual(["mixed-0", "mixed-1", "mixed-2", "mixed-3", "mixed-4", "mixed-5", "mixed-gone"]);

    const a = await waitForJob(org.apiKey, "mixed-a");
    const b = await waitForJob(org.apiKey, "mixed-b");
    expect(a).toMatchObject({ status: "completed", completed_items: 3 });
    expect(a.results.map((r) => r.decision === null)).toEqual([false, false, false]);
    expect(a.results[1].decision).toBe("FAILED");
    expect(b).toMatchObject({ status: "completed", completed_items: 2 });
    expect(b.results[1]).toMatchObject({ decision: null, errors: [{ code: "subject_not_found" }] });
    const after = await until(usage, (u) => u.checks - before.checks >= 5, { what: "the five items to be counted" });
    expect(after.checks - before.checks).toBe(5);
    expect(after.decisions.errors - before.decisions.errors).toBe(1);
  });

  it("settles an item whose consumer died after storing its result: the redelivery counts it once and completes the job", async () => {
    const before = await usage();
    const now = new Date().toISOString();
    const result = {
      check_id: "died-1/0",
      job_id: "died-1",
      item_index: 0,
      decision: "APPROVE",
      score: 0.8,
      billable: true,
      subject_reference: "alice",
      reference: null,
      process: null,
      input_type: null,
      file_name: "d.png",
      pages: 1,
      signatures: [],
      best_match: null,
      regions: [],
      quality: null,
      reference_count: 3,
      versions: { policy: "default@1" },
      metadata: null,
      errors: [],
      created_at: now,
      completed_at: now,
    };
    // The state a consumer leaves when it dies between storing the result and counting it.
    await checksRepo(env.DB_US).insertJob(
      {
        orgId: org.orgId,
        jobId: "died-1",
        status: "running",
        source: "api",
        mode: "queued",
        policy: "default@1",
        policySpec: "{}",
        itemCount: 1,
        completedItems: 0,
        metadata: null,
        createdBy: "test",
        createdAt: now,
        updatedAt: now,
        completedAt: null,
        inboxExpiresAt: "2999-01-01T00:00:00.000Z",
        inboxSweptAt: null,
      },
      [
        {
          orgId: org.orgId,
          jobId: "died-1",
          itemIndex: 0,
          state: "done",
          subjectReference: "alice",
          reference: null,
          process: null,
          inputType: null,
          fileName: "d.png",
          spec: "{}",
          inputKey: "none",
          pageCount: 1,
          decision: "APPROVE",
          score: 0.8,
          billable: 1,
          result: JSON.stringify(result),
          createdAt: now,
          completedAt: now,
        },
      ],
    );
    const job = jobObject(env, org.orgId, "died-1");
    await job.init(org.orgId, "died-1", 1);
    await job.start();
    expect(((await (await api("/sig/checks/died-1", { key: org.apiKey })).json()) as JobBody).status).toBe("running");

    const message = {
      id: "died-1-redelivery",
      timestamp: new Date(),
      attempts: 2,
      body: { kind: "check_item", orgId: org.orgId, jobId: "died-1", index: 0 },
    };
    for (let n = 0; n < 2; n++) {
      const batch = createMessageBatch("countersign-check-items", [message]);
      const ctx = createExecutionContext();
      await worker.queue(batch, env, ctx);
      expect((await getQueueResult(batch, ctx)).explicitAcks).toEqual(["died-1-redelivery"]);
    }
    const done = (await (await api("/sig/checks/died-1", { key: org.apiKey })).json()) as JobBody;
    expect(done).toMatchObject({ status: "completed", completed_items: 1 });
    expect(done.results.map((r) => r.decision)).toEqual(["APPROVE"]);
    expect(await job.completedItems()).toEqual([0]);
    const after = await usage();
    expect(after.checks - before.checks).toBe(1);
    expect(after.billable_checks - before.billable_checks).toBe(1);
  });
});
