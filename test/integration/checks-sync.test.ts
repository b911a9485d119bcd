import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { api, createOrg, type CreatedOrg } from "../helpers/tenant";
import { signaturePng } from "../helpers/signatures";
import { blankPage, darkPhoto, encodeJpeg, encodePng, photoOf, renderForm, makeWriter, signatureBoxes } from "../fixtures/generator";
import { checkForm, enrolWriter, expectProblem, postCheck, waitForJob, type CheckResultBody, type JobBody } from "../helpers/checks";

let org: CreatedOrg;
const WRITER = 11;
const OTHER = 57;

beforeAll(async () => {
  org = await createOrg();
  await enrolWriter(org.apiKey, "alice", WRITER, 4);
});

async function usage(): Promise<{ checks: number; billable_checks: number; not_charged: number; decisions: Record<string, number> }> {
  const res = await api("/sig/usage", { key: org.apiKey });
  expect(res.status).toBe(200);
  return res.json();
}

describe("POST /sig/checks, synchronous", () => {
  it("approves the same writer and fails another writer, with a full CheckResult", async () => {
    const same = await postCheck(
      org.apiKey,
      checkForm(
        {
          items: [
            {
              file: "doc",
              subject_reference: "alice",
              input_type: "signature_image",
              reference: "loan-1",
              process: "onboarding",
              metadata: { branch: 7 },
            },
          ],
        },
        { doc: signaturePng(WRITER, 7) },
      ),
      { idem: "sync-same-1" },
    );
    const sameBody = (await same.json()) as CheckResultBody;
    expect(same.status, JSON.stringify(sameBody)).toBe(200);
    expect(["APPROVE", "AUTO_APPROVE"]).toContain(sameBody.decision);
    expect(sameBody).toMatchObject({
      check_id: "sync-same-1/0",
      job_id: "sync-same-1",
      item_index: 0,
      billable: true,
      subject_reference: "alice",
      reference: "loan-1",
      process: "onboarding",
      input_type: "signature_image",
      file_name: "doc.png",
      versions: { policy: "default@1" },
      metadata: { branch: 7 },
      errors: [],
    });
    expect(sameBody.signatures.length).toBeGreaterThanOrEqual(1);
    expect(sameBody.best_match?.ref_id).toMatch(/^r\d$/);
    expect(sameBody.quality?.score).toBeGreaterThan(0);

    const other = await postCheck(
      org.apiKey,
      checkForm({ items: [{ file: "doc", subject_reference: "alice", input_type: "signature_image" }] }, { doc: signaturePng(OTHER, 2) }),
    );
    const otherBody = (await other.json()) as CheckResultBody;
    expect(other.status).toBe(200);
    expect(otherBody.decision).toBe("FAILED");
    expect(otherBody.score!).toBeLessThan(sameBody.score!);
  });

  it("gives NO_SIGNATURE for a blank page and UNREADABLE for a dark photo, neither billed", async () => {
    const before = await usage();
    const blank = await postCheck(
      org.apiKey,
      checkForm({ items: [{ file: "p", subject_reference: "alice", input_type: "scan" }] }, { p: encodePng(blankPage(1240, 1754)) }),
    );
    expect(blank.status).toBe(200);
    expect(await blank.json()).toMatchObject({ decision: "NO_SIGNATURE", billable: false, score: null });

    const form = renderForm({ signatures: [{ writer: makeWriter(WRITER), variant: 3, box: signatureBoxes(1240, 1754, 1)[0] }], seed: 4 });
    const dark = encodeJpeg(darkPhoto(photoOf(form.raster, { width: 640, blur: 0 })), 90);
    const res = await postCheck(
      org.apiKey,
      checkForm({ items: [{ file: "p", subject_reference: "alice", input_type: "photo" }] }, { p: dark }),
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ decision: "UNREADABLE", billable: false });

    const after = await usage();
    expect(after.checks - before.checks).toBe(2);
    expect(after.billable_checks - before.billable_checks).toBe(0);
    expect(after.not_charged - before.not_charged).toBe(2);
  });

  it("shows the request's metadata on an item without its own, wherever the item is read; lists omit it", async () => {
    const res = await postCheck(
      org.apiKey,
      checkForm({ metadata: { a: 1 }, items: [{ file: "d", subject_reference: "alice" }] }, { d: signaturePng(WRITER, 8) }),
      { idem: "meta-request-1" },
    );
    const body = (await res.json()) as CheckResultBody;
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.metadata).toEqual({ a: 1 });
    const job = (await (await api("/sig/checks/meta-request-1", { key: org.apiKey })).json()) as JobBody & { metadata: unknown };
    expect(job.metadata).toEqual({ a: 1 });
    expect(job.results[0].metadata).toEqual({ a: 1 });
    const ndjson = await (await api("/sig/checks/meta-request-1?format=ndjson", { key: org.apiKey })).text();
    expect(JSON.parse(ndjson.trim()).metadata).toEqual({ a: 1 });
    const items = (await (await api("/sig/checks?view=items&q=meta-request-1", { key: org.apiKey })).json()) as {
      items: Record<string, unknown>[];
    };
    expect(items.items).toHaveLength(1);
    expect(items.items[0]).not.toHaveProperty("metadata");

    // An item's own metadata replaces the request's (not merged).
    const own = await postCheck(
      org.apiKey,
      checkForm(
        { metadata: { a: 1 }, items: [{ file: "d", subject_reference: "alice", metadata: { b: 2 } }] },
        { d: signaturePng(WRITER, 8) },
      ),
    );
    expect(own.status).toBe(200);
    expect(((await own.json()) as CheckResultBody).metadata).toEqual({ b: 2 });
  });

  it("records the check on the subject view and the subject list", async () => {
    const res = await postCheck(
      org.apiKey,
      checkForm({ items: [{ file: "d", subject_reference: "alice" }] }, { d: signaturePng(WRITER, 8) }),
      { idem: "subject-view-1" },
    );
    expect(res.status).toBe(200);
    const view = (await (await api("/sig/subjects/alice", { key: org.apiKey })).json()) as {
      checks: { recent: Record<string, unknown>[]; total: number; next: string };
    };
    expect(view.checks.recent[0].check_id).toBe("subject-view-1/0");
    // Shaped as in the items list: the full result without metadata.
    const items = (await (await api(view.checks.next, { key: org.apiKey, base: "" })).json()) as { items: Record<string, unknown>[] };
    expect(view.checks.recent[0]).toEqual(items.items.find((i) => i.check_id === "subject-view-1/0"));
    expect(view.checks.recent[0]).not.toHaveProperty("metadata");
    expect(view.checks.total).toBeGreaterThanOrEqual(5);
    expect(view.checks.next).toContain("subject_reference=alice");
    const list = (await (await api("/sig/subjects", { key: org.apiKey })).json()) as {
      subjects: { subject_reference: string; last_check: { check_id: string } | null }[];
    };
    expect(list.subjects.find((s) => s.subject_reference === "alice")!.last_check?.check_id).toBe("subject-view-1/0");
  });

  it("replays the same key and body with the stored result", async () => {
    const form = () => checkForm({ items: [{ file: "d", subject_reference: "alice" }] }, { d: signaturePng(WRITER, 9) });
    const first = await postCheck(org.apiKey, form(), { idem: "replay-1" });
    expect(first.status).toBe(200);
    const again = await postCheck(org.apiKey, form(), { idem: "replay-1" });
    expect(again.status).toBe(200);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await again.json()).toEqual(await first.json());
  });

  it("uses request.job_id over the Idempotency-Key, and answers 409 for a job id that exists", async () => {
    const form = () =>
      checkForm({ job_id: "chk_custom", items: [{ file: "d", subject_reference: "alice" }] }, { d: signaturePng(WRITER, 10) });
    const res = await postCheck(org.apiKey, form(), { idem: "ignored/key!" });
    expect(res.status).toBe(200);
    expect(((await res.json()) as CheckResultBody).job_id).toBe("chk_custom");
    await expectProblem(await postCheck(org.apiKey, form(), { idem: "another-key" }), 409, "conflict");
  });

  it("answers 503 busy with job_id and status_url when no capacity frees up, and the queue finishes the job", async () => {
    const e = env as unknown as Record<string, string | undefined>;
    e.CHECK_CAPACITY = "0";
    try {
      const res = await postCheck(
        org.apiKey,
        checkForm({ items: [{ file: "d", subject_reference: "alice" }] }, { d: signaturePng(WRITER, 11) }),
        { idem: "busy-1" },
      );
      const problem = await expectProblem(res, 503, "busy");
      expect(problem.job_id).toBe("busy-1");
      expect(problem.status_url).toMatch(/\/sig\/checks\/busy-1$/);
      const job = await waitForJob(org.apiKey, "busy-1");
      expect(job.status).toBe("completed");
      expect(["APPROVE", "AUTO_APPROVE"]).toContain(job.results[0].decision);
    } finally {
      delete e.CHECK_CAPACITY;
    }
  });

  it("answers 504 timeout with job_id and status_url past the item budget, and the queue finishes the job", async () => {
    const e = env as unknown as Record<string, string | undefined>;
    e.CHECK_ITEM_BUDGET_MS = "1";
    try {
      const res = await postCheck(
        org.apiKey,
        checkForm({ items: [{ file: "d", subject_reference: "alice" }] }, { d: signaturePng(OTHER, 4) }),
        { idem: "timeout-1" },
      );
      const problem = await expectProblem(res, 504, "timeout");
      expect(problem.job_id).toBe("timeout-1");
      expect(problem.status_url).toMatch(/\/sig\/checks\/timeout-1$/);
    } finally {
      delete e.CHECK_ITEM_BUDGET_MS;
    }
    const job = await waitForJob(org.apiKey, "timeout-1");
    expect(job.status).toBe("completed");
    expect(job.results).toHaveLength(1);
    expect(job.results[0].decision).toBe("FAILED");
  });
});
