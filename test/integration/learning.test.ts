/**
 * Review and learning end to end (docs/learning.md): confirm and reject, the learning queue's consumer
 * with its entry bar, the cap, learning off, unlearn and its blocking rule. Everything goes through the
 * Worker's fetch and the real learning queue; only the inbox expiry is brought forward in D1, since
 * waiting a day for it is not an option.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext, createScheduledController } from "cloudflare:test";
import worker from "../../src/index";
import { beforeAll, describe, expect, it } from "vitest";
import { api, createOrg, mintKey, type CreatedOrg } from "../helpers/tenant";
import { signaturePng } from "../helpers/signatures";
import { blankPage, encodePng, makeWriter, renderForm } from "../fixtures/generator";
import { decodePage } from "../../src/verify/decode";
import type { Raster } from "../../src/verify/types";
import { learnConfirmed } from "../../src/services/learning";
import { liveEngine } from "../../src/services/engine-live";
import { liveCheckEngine } from "../../src/services/check-engine-live";
import { checkCrops } from "../../src/services/check-crops";
import { liveLearningEngine } from "../../src/services/learning-engine-live";
import { checkForm, enrolWriter, expectProblem, postCheck, type CheckResultBody } from "../helpers/checks";
import { until } from "../helpers/wait";

const WRITER = 23;
const FORGER = 71;

interface Review {
  check_id: string;
  verdict: "genuine" | "forged";
  reviewed_by: string;
  reviewed_at: string;
  learning: { status: string; reason: string | null; detail: string | null; ref_id: string | null; learned_at: string | null };
}
interface RefRecord {
  ref_id: string;
  kind: string;
  status: string;
  provenance: { learned_from: string | null; confirmed_by?: string | null; confirmed_at?: string | null; learned_at?: string | null };
}
interface SubjectBody {
  reference_counts: { anchors: number; learned: number };
  references: RefRecord[];
  learning: { recent: Review[] };
}

const idem = () => ({ "Idempotency-Key": `k-${crypto.randomUUID()}` });

async function putPolicy(key: string, name: string, spec: unknown): Promise<void> {
  const res = await api(`/sig/policies/${name}`, { method: "PUT", key, json: spec });
  expect([200, 201], await res.clone().text()).toContain(res.status);
}

/** Every compared item is FLAG under this policy, and learning takes scores from `minScore`. */
function reviewPolicy(minScore: number, extra: Record<string, unknown> = {}) {
  return { thresholds: { auto_approve: 1, approve: 1, flag: 0 }, learning: { enabled: true, min_score: minScore, ...extra } };
}

/** A synchronous check of one signature image; returns its result. */
async function check(key: string, jobId: string, subject: string, png: Uint8Array, policy: string): Promise<CheckResultBody> {
  const res = await postCheck(
    key,
    checkForm({ job_id: jobId, policy, items: [{ file: "doc", subject_reference: subject }] }, { doc: png }),
  );
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as CheckResultBody;
}

function confirm(key: string, jobId: string, index = 0, headers: Record<string, string> = idem()): Promise<Response> {
  return api(`/sig/checks/${jobId}/items/${index}/confirm`, { method: "POST", key, headers });
}

function reject(key: string, jobId: string, index = 0): Promise<Response> {
  return api(`/sig/checks/${jobId}/items/${index}/reject`, { method: "POST", key, headers: idem() });
}

/** The item's review as GET /sig/checks/{job_id} shows it. */
async function reviewOf(key: string, jobId: string): Promise<Review | null> {
  const res = await api(`/sig/checks/${jobId}`, { key });
  expect(res.status).toBe(200);
  const job = (await res.json()) as { results: (CheckResultBody & { review: Review | null })[] };
  return job.results[0].review;
}

/** Waits until the learning consumer has dealt with the item (its review leaves `queued`). */
async function settled(key: string, jobId: string): Promise<Review> {
  const review = await until(
    () => reviewOf(key, jobId),
    (r) => r !== null && r.learning.status !== "queued",
    { what: `learning of ${jobId}`, pauseMs: 100 },
  );
  return review as Review;
}

async function subjectView(key: string, subject: string): Promise<SubjectBody> {
  const res = await api(`/sig/subjects/${subject}`, { key });
  expect(res.status).toBe(200);
  return (await res.json()) as SubjectBody;
}

async function storedModel(orgId: string, subject: string): Promise<{ refs: { refId: string; learned?: boolean; outlier: boolean }[] }> {
  const row = await env.DB_US.prepare("SELECT model_key FROM subjects WHERE org_id = ? AND subject_reference = ?")
    .bind(orgId, subject)
    .first<{ model_key: string }>();
  const obj = await env.FILES_US.get(row!.model_key);
  return ((await obj!.json()) as { model: { refs: { refId: string; learned?: boolean; outlier: boolean }[] } }).model;
}

async function unlearnReq(key: string, subject: string, body: unknown): Promise<Response> {
  return api(`/sig/subjects/${subject}/references/unlearn`, { method: "POST", key, json: body, headers: idem() });
}

let org: CreatedOrg;

/** The largest share of an image's width that one row has dark (below 128). */
function longestDarkRow(r: Raster): number {
  let longest = 0;
  for (let y = 0; y < r.height; y++) {
    let dark = 0;
    for (let x = 0; x < r.width; x++) if (r.data[y * r.width + x] < 128) dark++;
    longest = Math.max(longest, dark / r.width);
  }
  return longest;
}

/** What the learning queue's consumer is given, for calling it directly. */
function consumerDeps(): Parameters<typeof learnConfirmed>[0] {
  const store = { name: "us" as const, db: env.DB_US, files: env.FILES_US };
  return {
    store,
    engine: liveEngine(),
    learner: liveLearningEngine(),
    crops: checkCrops({ orgId: org.orgId, store, engine: liveCheckEngine() }),
  };
}

beforeAll(async () => {
  org = await createOrg();
  await putPolicy(org.apiKey, "review", reviewPolicy(0.3));
  await putPolicy(org.apiKey, "strict-learning", reviewPolicy(1));
  await putPolicy(org.apiKey, "any-score", reviewPolicy(0));
  await putPolicy(org.apiKey, "no-learning", { ...reviewPolicy(0.3), learning: { enabled: false, min_score: 0.3 } });
  await putPolicy(org.apiKey, "cap-1", reviewPolicy(0.3, { max_references: 1 }));
  await enrolWriter(org.apiKey, "ann", WRITER, 3);
});

describe("confirm", () => {
  it("keeps the first confirmation, audits it with the actor, and learns the item through the queue", async () => {
    const result = await check(org.apiKey, "c-learn", "ann", signaturePng(WRITER, 5), "review");
    expect(result.decision).toBe("FLAG");

    const res = await confirm(org.apiKey, "c-learn");
    expect(res.status, await res.clone().text()).toBe(200);
    const first = (await res.json()) as Review;
    expect(first).toMatchObject({
      check_id: "c-learn/0",
      verdict: "genuine",
      reviewed_by: `key:${org.keyId}`,
      learning: { status: "queued" },
    });

    const again = (await (await confirm(org.apiKey, "c-learn")).json()) as Review;
    expect(again.reviewed_at).toBe(first.reviewed_at);

    const audit = await env.DB_US.prepare("SELECT actor, target FROM audit_log WHERE org_id = ? AND action = 'check.confirm'")
      .bind(org.orgId)
      .all<{ actor: string; target: string }>();
    expect(audit.results).toContainEqual({ actor: `key:${org.keyId}`, target: "c-learn/0" });

    const review = await settled(org.apiKey, "c-learn");
    expect(review.learning, JSON.stringify(review.learning)).toMatchObject({ status: "learned", ref_id: "learned-c-learn.0" });

    const view = await subjectView(org.apiKey, "ann");
    expect(view.reference_counts).toEqual({ anchors: 3, learned: 1 });
    const learned = view.references.find((r) => r.ref_id === "learned-c-learn.0")!;
    expect(learned).toMatchObject({ kind: "learned", status: "enrolled" });
    expect(learned.provenance).toMatchObject({
      learned_from: "c-learn/0",
      confirmed_by: `key:${org.keyId}`,
      confirmed_at: first.reviewed_at,
    });
    expect(learned.provenance.learned_at).toBeTruthy();

    const model = await storedModel(org.orgId, "ann");
    expect(model.refs.find((r) => r.refId === "learned-c-learn.0")).toMatchObject({ learned: true, outlier: false });

    const thumb = await api("/sig/subjects/ann/references/learned-c-learn.0/image", { key: org.apiKey });
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get("Content-Type")).toBe("image/png");
  });

  it("learns a queued item, whose crop the queue left to its first read, from its input", async () => {
    await enrolWriter(org.apiKey, "cid", WRITER, 3);
    const res = await postCheck(
      org.apiKey,
      checkForm(
        {
          job_id: "q-learn",
          policy: "review",
          items: [
            { file: "a", subject_reference: "cid" },
            { file: "b", subject_reference: "cid" },
          ],
        },
        { a: signaturePng(WRITER, 6), b: signaturePng(WRITER, 7) },
      ),
    );
    expect(res.status).toBe(202);
    const job = await until(
      async () => (await (await api("/sig/checks/q-learn", { key: org.apiKey })).json()) as { status: string; results: CheckResultBody[] },
      (j) => j.status === "completed",
      { what: "job q-learn to complete", pauseMs: 100 },
    );
    expect(job.results.map((r) => r.decision)).toEqual(["FLAG", "FLAG"]);
    const crops = async () =>
      (await env.FILES_US.list({ prefix: `orgs/${org.orgId}/inbox/q-learn/` })).objects.filter((o) => o.key.includes("/crops/"));
    expect(await crops()).toEqual([]);

    // Learning renders what it learns from of the input (rules painted out of it), which is not the
    // reviewer's crop: none is kept.
    expect((await confirm(org.apiKey, "q-learn", 0)).status).toBe(200);
    const review = await until(
      async () => {
        const r = await api("/sig/checks/q-learn", { key: org.apiKey });
        return ((await r.json()) as { results: { review: Review | null }[] }).results[0].review;
      },
      (r) => r !== null && r.learning.status !== "queued",
      { what: "learning of q-learn/0", pauseMs: 100 },
    );
    expect(review!.learning, JSON.stringify(review!.learning)).toMatchObject({ status: "learned", ref_id: "learned-q-learn.0" });
    expect(await crops()).toEqual([]);

    // An item's crop is rendered by its first read, then kept.
    const image = await api("/sig/checks/q-learn/items/1/image", { key: org.apiKey });
    expect(image.status).toBe(200);
    expect(image.headers.get("Content-Type")).toBe("image/png");
    expect((await crops()).length).toBe(1);
  });

  it("learns a signature confirmed on a form without the line it was signed on, which the reviewer's crop keeps", async () => {
    await enrolWriter(org.apiKey, "lin", WRITER, 3);
    const page = renderForm({
      signatures: [{ writer: makeWriter(WRITER), variant: 9, box: { x: 200, y: 1200, w: 800, h: 260 } }],
      seed: 4,
      stamp: false,
    });
    const res = await postCheck(
      org.apiKey,
      checkForm(
        { job_id: "form-learn", policy: "any-score", items: [{ file: "doc", subject_reference: "lin", input_type: "scan" }] },
        { doc: encodePng(page.raster) },
      ),
    );
    expect(res.status, await res.clone().text()).toBe(200);
    expect(((await res.json()) as CheckResultBody).decision).toBe("FLAG");
    expect((await confirm(org.apiKey, "form-learn")).status).toBe(200);
    const review = await settled(org.apiKey, "form-learn");
    expect(review.learning, JSON.stringify(review.learning)).toMatchObject({ status: "learned", ref_id: "learned-form-learn.0" });

    // The form's line crosses the signature at 0.8 of its box: the reviewer sees it across the crop...
    const reviewer = await api("/sig/checks/form-learn/items/0/image", { key: org.apiKey });
    expect(reviewer.status).toBe(200);
    expect(longestDarkRow(await decodePage(new Uint8Array(await reviewer.arrayBuffer()), 0))).toBeGreaterThan(0.75);
    // ...and the learned reference, stored as what the check's features were taken from, has none of it.
    const row = await env.DB_US.prepare(
      "SELECT file_key FROM subject_references WHERE org_id = ? AND subject_reference = 'lin' AND ref_id = ?",
    )
      .bind(org.orgId, "learned-form-learn.0")
      .first<{ file_key: string }>();
    const stored = await env.FILES_US.get(row!.file_key);
    const learned = await decodePage(new Uint8Array(await stored!.arrayBuffer()), 0);
    expect(longestDarkRow(learned)).toBeLessThan(0.6);
    expect(longestDarkRow(learned)).toBeGreaterThan(0.05);
  });

  it("answers 404 for a missing item and for another tenant's", async () => {
    await expectProblem(await confirm(org.apiKey, "no-such-job"), 404, "not_found");
    await expectProblem(await confirm(org.apiKey, "c-learn", 7), 404, "not_found");
    const other = await createOrg();
    await expectProblem(await confirm(other.apiKey, "c-learn"), 404, "not_found");
  });

  it("needs an Idempotency-Key and the sig:references:write permission, and replays a retried key", async () => {
    expect((await api("/sig/checks/c-learn/items/0/confirm", { method: "POST", key: org.apiKey })).status).toBe(400);
    const reader = await mintKey(org.orgId, ["sig:checks:read"]);
    await expectProblem(await confirm(reader.apiKey, "c-learn"), 403, "permission_denied");
    const headers = idem();
    const first = await confirm(org.apiKey, "c-learn", 0, headers);
    const again = await confirm(org.apiKey, "c-learn", 0, headers);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(await again.json()).toEqual(await first.json());
  });

  it("answers 402 while billing is inactive", async () => {
    const unpaid = await createOrg({ billing: "inactive" });
    await expectProblem(await confirm(unpaid.apiKey, "c-learn"), 402, "billing_required");
  });

  it("answers 409 for an item without a decision, where no confirmation can be recorded", async () => {
    // No decision: the subject does not exist, so the item ends in an error.
    const res = await postCheck(
      org.apiKey,
      checkForm({ job_id: "c-nosubject", items: [{ file: "doc", subject_reference: "nobody" }] }, { doc: signaturePng(WRITER, 6) }),
    );
    expect(res.status).toBe(200);
    expect((await expectProblem(await confirm(org.apiKey, "c-nosubject"), 409, "conflict")).detail).toMatch(/no decision/);
    expect(await reviewOf(org.apiKey, "c-nosubject")).toBeNull();
    // An item its job never checked: "still checking" while the job runs, and why not once it has ended.
    const pending = await postCheck(
      org.apiKey,
      checkForm({ job_id: "c-ended", items: [{ file: "doc", subject_reference: "alice" }] }, { doc: signaturePng(WRITER, 6) }),
    );
    expect(pending.status).toBe(200);
    await env.DB_US.prepare("UPDATE check_items SET state = 'pending' WHERE org_id = ? AND job_id = 'c-ended'").bind(org.orgId).run();
    for (const [status, detail] of [
      ["running", /still checking/],
      ["rejected", /ended rejected before checking it/],
    ] as const) {
      await env.DB_US.prepare("UPDATE check_jobs SET status = ? WHERE org_id = ? AND job_id = 'c-ended'").bind(status, org.orgId).run();
      expect((await expectProblem(await confirm(org.apiKey, "c-ended"), 409, "conflict")).detail).toMatch(detail);
    }
  });
});

describe("a confirmation learning cannot use", () => {
  /** Expires the job's inbox and runs the scheduled sweep, as a day after the check would find it. */
  async function expireInbox(orgId: string, jobId: string): Promise<void> {
    await env.DB_US.prepare("UPDATE check_jobs SET inbox_expires_at = '2000-01-01T00:00:00.000Z' WHERE org_id = ? AND job_id = ?")
      .bind(orgId, jobId)
      .run();
    await worker.scheduled(createScheduledController({ scheduledTime: Date.now() }), env, createExecutionContext());
    expect((await env.FILES_US.list({ prefix: `orgs/${orgId}/inbox/${jobId}/` })).objects).toEqual([]);
  }

  async function audited(orgId: string, target: string): Promise<{ actor: string; detail: Record<string, unknown> }[]> {
    const { results } = await env.DB_US.prepare(
      "SELECT actor, detail FROM audit_log WHERE org_id = ? AND action = 'check.confirm' AND target = ?",
    )
      .bind(orgId, target)
      .all<{ actor: string; detail: string }>();
    return results.map((r) => ({ actor: r.actor, detail: JSON.parse(r.detail) as Record<string, unknown> }));
  }

  it("records and audits a confirmation after the inbox expired, keeps it, says why it is not learned, and never learns it", async () => {
    await enrolWriter(org.apiKey, "gil", WRITER, 3);
    await check(org.apiKey, "late-expired", "gil", signaturePng(WRITER, 7), "review");
    await check(org.apiKey, "late-learn", "gil", signaturePng(WRITER, 8), "review");
    await expireInbox(org.orgId, "late-expired");

    const res = await confirm(org.apiKey, "late-expired");
    expect(res.status, await res.clone().text()).toBe(200);
    const first = (await res.json()) as Review;
    expect(first).toMatchObject({
      check_id: "late-expired/0",
      verdict: "genuine",
      reviewed_by: `key:${org.keyId}`,
      learning: { status: "refused", reason: "input_expired", ref_id: null, learned_at: null },
    });
    expect(first.learning.detail).toMatch(/expired/);
    expect(await audited(org.orgId, "late-expired/0")).toEqual([
      {
        actor: `key:${org.keyId}`,
        detail: { subject_reference: "gil", decision: "FLAG", learning: "refused", learning_reason: "input_expired" },
      },
    ]);

    // The first confirmation is kept: a repeat reports it.
    const again = await confirm(org.apiKey, "late-expired");
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(first);
    expect(await reviewOf(org.apiKey, "late-expired")).toEqual(first);

    // The learnable path still learns; by the time it has, the expired item is still not learned.
    expect((await confirm(org.apiKey, "late-learn")).status).toBe(200);
    expect((await settled(org.apiKey, "late-learn")).learning).toMatchObject({ status: "learned", ref_id: "learned-late-learn.0" });
    expect(await reviewOf(org.apiKey, "late-expired")).toEqual(first);
    const view = await subjectView(org.apiKey, "gil");
    expect(view.reference_counts).toEqual({ anchors: 3, learned: 1 });
    expect(view.learning.recent.find((r) => r.check_id === "late-expired/0")!.learning).toMatchObject({
      status: "refused",
      reason: "input_expired",
    });

    // A stray learning message for it changes nothing and tells of nothing.
    const told: unknown[] = [];
    const outcome = await learnConfirmed(
      { ...consumerDeps(), announce: async (o) => void told.push(o) },
      { kind: "learn", orgId: org.orgId, region: "us", jobId: "late-expired", index: 0 },
    );
    expect(outcome).toBe("refused");
    expect(told).toEqual([]);
    expect(await reviewOf(org.apiKey, "late-expired")).toEqual(first);
  });

  it("records a confirmation of an item without a located signature, or whose subject was deleted, as not learned", async () => {
    await check(org.apiKey, "c-blank", "ann", encodePng(blankPage(600, 400)), "review");
    const blank = await confirm(org.apiKey, "c-blank");
    expect(blank.status, await blank.clone().text()).toBe(200);
    expect(((await blank.json()) as Review).learning).toMatchObject({ status: "refused", reason: "no_signature" });
    expect(await audited(org.orgId, "c-blank/0")).toHaveLength(1);

    await enrolWriter(org.apiKey, "gone", WRITER, 3);
    await check(org.apiKey, "c-gone", "gone", signaturePng(WRITER, 8), "review");
    expect((await api("/sig/subjects/gone", { method: "DELETE", key: org.apiKey })).status).toBe(204);
    const gone = await confirm(org.apiKey, "c-gone");
    expect(gone.status, await gone.clone().text()).toBe(200);
    const review = (await gone.json()) as Review;
    expect(review.learning).toMatchObject({ status: "refused", reason: "subject_changed" });
    expect(review.learning.detail).toMatch(/deleted/);
    expect(await reviewOf(org.apiKey, "c-gone")).toEqual(review);
    expect(await audited(org.orgId, "c-gone/0")).toHaveLength(1);
  });

  it("says learning is off rather than why the bar would refuse, when learning is off", async () => {
    const quiet = await createOrg({ learning: false });
    await putPolicy(quiet.apiKey, "review", reviewPolicy(0.3));
    await enrolWriter(quiet.apiKey, "hal", WRITER, 3);
    await check(quiet.apiKey, "off-expired", "hal", signaturePng(WRITER, 5), "review");
    await expireInbox(quiet.orgId, "off-expired");
    const res = await confirm(quiet.apiKey, "off-expired");
    expect(res.status, await res.clone().text()).toBe(200);
    expect(((await res.json()) as Review).learning).toMatchObject({ status: "off", reason: "learning_off" });
  });
});

describe("a deleted subject", () => {
  it("forgets its reviews, and a confirmation of an old check of a subject enrolled again under the name is not learned", async () => {
    await enrolWriter(org.apiKey, "fay", WRITER, 3);
    await check(org.apiKey, "fay-1", "fay", signaturePng(WRITER, 5), "review");
    await check(org.apiKey, "fay-2", "fay", signaturePng(WRITER, 6), "review");
    await confirm(org.apiKey, "fay-1");
    expect((await settled(org.apiKey, "fay-1")).learning.status).toBe("learned");
    expect((await api("/sig/subjects/fay", { method: "DELETE", key: org.apiKey })).status).toBe(204);
    await enrolWriter(org.apiKey, "fay", WRITER, 3);
    const view = await subjectView(org.apiKey, "fay");
    expect(view.learning.recent).toEqual([]);
    expect(view.reference_counts).toEqual({ anchors: 3, learned: 0 });
    expect(await reviewOf(org.apiKey, "fay-1")).toBeNull();
    const res = await confirm(org.apiKey, "fay-2");
    expect(res.status, await res.clone().text()).toBe(200);
    const review = (await res.json()) as Review;
    expect(review.learning).toMatchObject({ status: "refused", reason: "subject_changed" });
    expect(review.learning.detail).toMatch(/enrolled again/);
    expect((await subjectView(org.apiKey, "fay")).reference_counts).toEqual({ anchors: 3, learned: 0 });
  });
});

describe("forged verdict", () => {
  it("records a forged verdict once, audits it, never learns it, and conflicts with a later confirmation", async () => {
    await check(org.apiKey, "c-forged", "ann", signaturePng(FORGER, 1), "any-score");
    const res = await reject(org.apiKey, "c-forged");
    expect(res.status, await res.clone().text()).toBe(200);
    const verdict = (await res.json()) as Review;
    expect(verdict).toMatchObject({ verdict: "forged", learning: { status: "not_applicable" } });
    expect(((await (await reject(org.apiKey, "c-forged")).json()) as Review).reviewed_at).toBe(verdict.reviewed_at);
    await expectProblem(await confirm(org.apiKey, "c-forged"), 409, "conflict");
    await expectProblem(await reject(org.apiKey, "c-learn"), 409, "conflict");
    const audit = await env.DB_US.prepare(
      "SELECT actor FROM audit_log WHERE org_id = ? AND action = 'check.reject' AND target = 'c-forged/0'",
    )
      .bind(org.orgId)
      .first();
    expect(audit).toEqual({ actor: `key:${org.keyId}` });
    expect((await reviewOf(org.apiKey, "c-forged"))!.learning.status).toBe("not_applicable");
  });
});

describe("the entry bar", () => {
  it("refuses a score below the policy's learning.min_score", async () => {
    await check(org.apiKey, "bar-score", "ann", signaturePng(WRITER, 9), "strict-learning");
    expect((await confirm(org.apiKey, "bar-score")).status).toBe(200);
    expect((await settled(org.apiKey, "bar-score")).learning).toMatchObject({ status: "refused", reason: "low_score" });
  });

  it("refuses another writer's signature as an outlier against the anchors", async () => {
    await check(org.apiKey, "bar-outlier", "ann", signaturePng(FORGER, 2), "any-score");
    expect((await confirm(org.apiKey, "bar-outlier")).status).toBe(200);
    expect((await settled(org.apiKey, "bar-outlier")).learning).toMatchObject({ status: "refused", reason: "outlier" });
  });

  it("refuses an item whose input expired between the confirmation and learning", async () => {
    await check(org.apiKey, "bar-expired", "ann", signaturePng(WRITER, 10), "review");
    // The queue delivers at once, so the confirmation is recorded as it would be and the consumer is
    // called directly after the inbox has expired.
    const now = new Date().toISOString();
    await env.DB_US.batch([
      env.DB_US.prepare(
        "INSERT INTO check_reviews (org_id, job_id, item_index, subject_reference, verdict, reviewed_by, reviewed_at, learning, updated_at) VALUES (?, 'bar-expired', 0, 'ann', 'genuine', 'key:test', ?, 'queued', ?)",
      ).bind(org.orgId, now, now),
      env.DB_US.prepare("UPDATE check_jobs SET inbox_swept_at = ? WHERE org_id = ? AND job_id = 'bar-expired'").bind(now, org.orgId),
    ]);
    const outcome = await learnConfirmed(consumerDeps(), { kind: "learn", orgId: org.orgId, region: "us", jobId: "bar-expired", index: 0 });
    expect(outcome).toBe("refused");
    expect((await reviewOf(org.apiKey, "bar-expired"))!.learning).toMatchObject({ status: "refused", reason: "input_expired" });
  });

  it("refuses an item whose best-matching anchor was replaced since the check", async () => {
    await enrolWriter(org.apiKey, "bea", WRITER, 3);
    const result = await check(org.apiKey, "bar-changed", "bea", signaturePng(WRITER, 11), "review");
    const bestRef = result.best_match!.ref_id;
    const form = new FormData();
    form.append(bestRef, new Blob([signaturePng(WRITER, 12)], { type: "image/png" }), `${bestRef}.png`);
    expect((await api("/sig/subjects/bea/references", { method: "PUT", key: org.apiKey, body: form })).status).toBe(200);
    expect((await confirm(org.apiKey, "bar-changed")).status).toBe(200);
    expect((await settled(org.apiKey, "bar-changed")).learning).toMatchObject({ status: "refused", reason: "subject_changed" });
    const view = await subjectView(org.apiKey, "bea");
    expect(view.reference_counts.learned).toBe(0);
    expect(view.learning.recent.find((r) => r.check_id === "bar-changed/0")!.learning.reason).toBe("subject_changed");
  });
});

describe("learning off and the cap", () => {
  it("does not queue learning while the organisation's learning is off, nor for a policy that does not learn", async () => {
    const quiet = await createOrg({ learning: false });
    await putPolicy(quiet.apiKey, "review", reviewPolicy(0.3));
    await enrolWriter(quiet.apiKey, "cal", WRITER, 3);
    await check(quiet.apiKey, "off-org", "cal", signaturePng(WRITER, 5), "review");
    const r1 = (await (await confirm(quiet.apiKey, "off-org")).json()) as Review;
    expect(r1.learning).toMatchObject({ status: "off", reason: "learning_off" });

    await check(org.apiKey, "off-policy", "ann", signaturePng(WRITER, 13), "no-learning");
    const r2 = (await (await confirm(org.apiKey, "off-policy")).json()) as Review;
    expect(r2.learning).toMatchObject({ status: "off", reason: "learning_off" });
    expect((await subjectView(quiet.apiKey, "cal")).reference_counts.learned).toBe(0);
  });

  it("keeps at most the cap of learned references, evicting the oldest learned and never an anchor", async () => {
    await enrolWriter(org.apiKey, "dan", WRITER, 3);
    await check(org.apiKey, "cap-a", "dan", signaturePng(WRITER, 5), "cap-1");
    await check(org.apiKey, "cap-b", "dan", signaturePng(WRITER, 6), "cap-1");
    await confirm(org.apiKey, "cap-a");
    expect((await settled(org.apiKey, "cap-a")).learning.status).toBe("learned");
    await confirm(org.apiKey, "cap-b");
    expect((await settled(org.apiKey, "cap-b")).learning.status).toBe("learned");

    const view = await subjectView(org.apiKey, "dan");
    expect(view.reference_counts).toEqual({ anchors: 3, learned: 1 });
    expect(view.references.filter((r) => r.kind === "learned").map((r) => r.ref_id)).toEqual(["learned-cap-b.0"]);
    expect((await reviewOf(org.apiKey, "cap-a"))!.learning.status).toBe("evicted");
    const model = await storedModel(org.orgId, "dan");
    expect(model.refs.map((r) => r.refId).sort()).toEqual(["learned-cap-b.0", "r0", "r1", "r2"]);
  });
});

describe("unlearn", () => {
  it("answers 404 for an unknown subject and 400 for a body that selects nothing or both", async () => {
    await expectProblem(await unlearnReq(org.apiKey, "nobody", { since: "2020-01-01T00:00:00Z" }), 404, "not_found");
    for (const body of [
      {},
      { since: "2020-01-01T00:00:00Z", checks: ["a/0"] },
      { since: "yesterday" },
      { checks: [] },
      { checks: ["no-index"] },
      { extra: 1 },
    ]) {
      const res = await unlearnReq(org.apiKey, "ann", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
  });

  it("keeps DELETE of a learned reference a 409, and DELETE .../references/unlearn names a reference called unlearn", async () => {
    await expectProblem(
      await api("/sig/subjects/ann/references/learned-c-learn.0", { method: "DELETE", key: org.apiKey }),
      409,
      "conflict",
    );
    await expectProblem(await api("/sig/subjects/ann/references/unlearn", { method: "DELETE", key: org.apiKey }), 404, "not_found");
  });

  it("unlearns by source check, deletes the file, rebuilds the model, and a blocked check is never learned again", async () => {
    const before = await subjectView(org.apiKey, "ann");
    expect(before.references.some((r) => r.ref_id === "learned-c-learn.0")).toBe(true);
    const fileKey = (await env.DB_US.prepare(
      "SELECT file_key FROM subject_references WHERE org_id = ? AND subject_reference = 'ann' AND ref_id = 'learned-c-learn.0'",
    )
      .bind(org.orgId)
      .first<{ file_key: string }>())!.file_key;

    const res = await unlearnReq(org.apiKey, "ann", { checks: ["c-learn/0", "c-later/0"] });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as { removed: { ref_id: string }[]; blocked_checks: string[] };
    expect(body.removed.map((r) => r.ref_id)).toEqual(["learned-c-learn.0"]);
    expect(body.blocked_checks).toEqual(["c-later/0", "c-learn/0"]);

    expect(await env.FILES_US.get(fileKey)).toBeNull();
    const after = await subjectView(org.apiKey, "ann");
    expect(after.reference_counts.learned).toBe(0);
    expect((await storedModel(org.orgId, "ann")).refs.some((r) => r.refId.startsWith("learned-"))).toBe(false);
    expect((await api("/sig/subjects/ann/references/learned-c-learn.0/image", { key: org.apiKey })).status).toBe(404);
    expect((await reviewOf(org.apiKey, "c-learn"))!.learning.status).toBe("unlearned");
    const audit = await env.DB_US.prepare(
      "SELECT detail FROM audit_log WHERE org_id = ? AND action = 'reference.unlearn' AND target = 'ann'",
    )
      .bind(org.orgId)
      .first<{ detail: string }>();
    expect(JSON.parse(audit!.detail)).toMatchObject({ removed: ["learned-c-learn.0"] });

    // A later confirmation of a blocked check (one not yet made when it was blocked) is refused.
    await check(org.apiKey, "c-later", "ann", signaturePng(WRITER, 14), "review");
    expect((await confirm(org.apiKey, "c-later")).status).toBe(200);
    expect((await settled(org.apiKey, "c-later")).learning).toMatchObject({ status: "refused", reason: "blocked" });

    // Nothing left to remove: still 200.
    const none = (await (await unlearnReq(org.apiKey, "ann", { checks: ["c-learn/0"] })).json()) as { removed: unknown[] };
    expect(none.removed).toEqual([]);
  });

  it("unlearns by since: removes what was learned from checks since then and blocks the checks recorded up to the call only", async () => {
    await enrolWriter(org.apiKey, "eve", WRITER, 3);
    await check(org.apiKey, "s-old", "eve", signaturePng(WRITER, 5), "review");
    await confirm(org.apiKey, "s-old");
    expect((await settled(org.apiKey, "s-old")).learning.status).toBe("learned");
    const since = (await env.DB_US.prepare("SELECT created_at FROM check_items WHERE org_id = ? AND job_id = 's-old'")
      .bind(org.orgId)
      .first<{ created_at: string }>())!.created_at;
    // Checked after `since` (by its recorded time) but not confirmed before the unlearn.
    await check(org.apiKey, "s-recorded", "eve", signaturePng(WRITER, 6), "review");

    const res = await unlearnReq(org.apiKey, "eve", { since });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { removed: { ref_id: string }[]; blocked_since: string };
    expect(body.removed.map((r) => r.ref_id)).toEqual(["learned-s-old.0"]);
    expect(body.blocked_since).toBe(since);

    // Recorded before the call: blocked.
    await confirm(org.apiKey, "s-recorded");
    expect((await settled(org.apiKey, "s-recorded")).learning).toMatchObject({ status: "refused", reason: "blocked" });
    // Recorded after the call (as a job still running then would): not blocked, learned.
    await check(org.apiKey, "s-after", "eve", signaturePng(WRITER, 7), "review");
    await confirm(org.apiKey, "s-after");
    expect((await settled(org.apiKey, "s-after")).learning.status).toBe("learned");
    expect((await subjectView(org.apiKey, "eve")).reference_counts.learned).toBe(1);
  });
});
