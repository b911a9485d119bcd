/**
 * Stored references survive a change of the core's features (docs/feature-upgrades.md). A previous
 * FEATURE_VERSION is simulated in storage: each live reference's features in D1 (and the stored model in
 * R2) are rewritten to version FEATURE_VERSION - 1 with a vector of another length, as an older core
 * would have left them. Everything else goes through the Worker's fetch and the real queues and engine;
 * the upgraded vectors must equal the ones enrolment stored, which only a real re-extraction gives.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { FEATURE_VERSION } from "../../src/verify/features";
import { OLD_VECTOR, OLD_VERSION, makeStale as makeStaleOf } from "../helpers/stale-features";
import { itemReferenceKey } from "../../src/services/inbox";
import { rebuildModel } from "../../src/services/enrolment";
import { liveEngine } from "../../src/services/engine-live";
import { api, createOrg, type CreatedOrg } from "../helpers/tenant";
import { referencesForm, signaturePng } from "../helpers/signatures";
import { blankPage, encodePng } from "../fixtures/generator";
import { checkForm, enrolWriter, postCheck, type CheckResultBody } from "../helpers/checks";
import { until } from "../helpers/wait";

const WRITER = 19;
interface StoredSignature {
  version: number;
  vector: string;
}
interface StoredFeatures {
  signature: StoredSignature;
  variantRow: number[] | null;
}
interface RefRow {
  ref_id: string;
  kind: string;
  status: string;
  features: string | null;
  enrolled_at: string | null;
  file_key: string;
  rejected_reason: string | null;
  rejected_detail: string | null;
}
interface StoredModel {
  featureVersion: number;
  refs: { refId: string; features: StoredSignature; outlier: boolean; learned?: boolean }[];
  basis: { references: number };
}
interface SubjectView {
  reference_counts: { anchors: number; learned: number };
  references: { ref_id: string; kind: string; status: string; rejected_reason: string | null; rejected_detail: string | null }[];
}

let org: CreatedOrg;

beforeAll(async () => {
  org = await createOrg();
  // Every compared item is FLAG under this policy, and learning takes scores from 0.3 (as in learning.test.ts).
  const res = await api("/sig/policies/review", {
    method: "PUT",
    key: org.apiKey,
    json: { thresholds: { auto_approve: 1, approve: 1, flag: 0 }, learning: { enabled: true, min_score: 0.3 } },
  });
  expect([200, 201]).toContain(res.status);
});

async function rows(subject: string): Promise<RefRow[]> {
  const res = await env.DB_US.prepare(
    "SELECT ref_id, kind, status, features, enrolled_at, file_key, rejected_reason, rejected_detail FROM subject_references WHERE org_id = ? AND subject_reference = ? ORDER BY ref_id",
  )
    .bind(org.orgId, subject)
    .all<RefRow>();
  return res.results;
}

async function subjectRow(subject: string): Promise<{ model_key: string | null; model_revision: number | null; refs_revision: number }> {
  const row = await env.DB_US.prepare(
    "SELECT model_key, model_revision, refs_revision FROM subjects WHERE org_id = ? AND subject_reference = ?",
  )
    .bind(org.orgId, subject)
    .first<{ model_key: string | null; model_revision: number | null; refs_revision: number }>();
  return row!;
}

async function storedModel(subject: string): Promise<StoredModel> {
  const { model_key } = await subjectRow(subject);
  const obj = await env.FILES_US.get(model_key!);
  return ((await obj!.json()) as { model: StoredModel }).model;
}

function signatureOf(json: string): StoredSignature {
  return (JSON.parse(json) as StoredFeatures).signature;
}

const makeStale = (subject: string) => makeStaleOf(org.orgId, subject);

async function checkOne(subject: string, png: Uint8Array, extra: Record<string, unknown> = {}): Promise<CheckResultBody> {
  const res = await postCheck(org.apiKey, checkForm({ ...extra, items: [{ file: "doc", subject_reference: subject }] }, { doc: png }));
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as CheckResultBody & { reference_count: number | null };
}

async function view(subject: string): Promise<SubjectView> {
  const res = await api(`/sig/subjects/${subject}`, { key: org.apiKey });
  expect(res.status).toBe(200);
  return (await res.json()) as SubjectView;
}

/** Every live row and the stored model carry the current feature version, and the model is the current revision's. */
async function expectCurrent(subject: string): Promise<StoredModel> {
  const live = (await rows(subject)).filter((r) => r.status === "enrolled");
  for (const r of live) expect(signatureOf(r.features!).version, r.ref_id).toBe(FEATURE_VERSION);
  const s = await subjectRow(subject);
  expect(s.model_revision).toBe(s.refs_revision);
  const model = await storedModel(subject);
  expect(model.featureVersion).toBe(FEATURE_VERSION);
  expect(model.refs.map((r) => r.refId).sort()).toEqual(live.map((r) => r.ref_id).sort());
  for (const r of model.refs) expect(r.features.version, r.refId).toBe(FEATURE_VERSION);
  return model;
}

describe("a subject enrolled under the previous feature version", () => {
  it("is checked with a decision: the first check extracts every reference again and rebuilds the model", async () => {
    await enrolWriter(org.apiKey, "stale-a", WRITER, 3);
    const enrolled = await rows("stale-a");
    const before = await makeStale("stale-a");
    expect(before.size).toBe(3);

    const result = (await checkOne("stale-a", signaturePng(WRITER, 5))) as CheckResultBody & { reference_count: number | null };
    expect(result.errors, JSON.stringify(result.errors)).toEqual([]);
    expect(result.decision).not.toBeNull();
    expect(result.reference_count).toBe(3);

    const model = await expectCurrent("stale-a");
    expect(model.refs).toHaveLength(3);
    // Extracted again from the stored files: the same features enrolment stored, variant row included.
    for (const r of await rows("stale-a")) {
      expect(JSON.parse(r.features!), r.ref_id).toEqual(JSON.parse(before.get(r.ref_id)!));
      // Not a replacement: learning reads a newer enrolled_at as one.
      expect(r.enrolled_at).toBe(enrolled.find((e) => e.ref_id === r.ref_id)!.enrolled_at);
    }
    const v = await view("stale-a");
    expect(v.reference_counts).toEqual({ anchors: 3, learned: 0 });
    expect(v.references.every((r) => r.status === "enrolled")).toBe(true);

    // Current now: the next check extracts nothing and leaves the revision as it is.
    const revision = (await subjectRow("stale-a")).refs_revision;
    expect((await checkOne("stale-a", signaturePng(WRITER, 6))).decision).not.toBeNull();
    expect((await subjectRow("stale-a")).refs_revision).toBe(revision);
  });

  it("upgrades on a model alone of the previous version (rows current)", async () => {
    await enrolWriter(org.apiKey, "stale-model", WRITER, 3);
    const { model_key } = await subjectRow("stale-model");
    const obj = await env.FILES_US.get(model_key!);
    const stored = (await obj!.json()) as { revision: number; model: StoredModel };
    stored.model.featureVersion = OLD_VERSION;
    await env.FILES_US.put(model_key!, JSON.stringify(stored));

    const result = await checkOne("stale-model", signaturePng(WRITER, 5));
    expect(result.errors, JSON.stringify(result.errors)).toEqual([]);
    expect(result.decision).not.toBeNull();
    await expectCurrent("stale-model");
  });

  it("uses all 4 references after a 4th is enrolled on it", async () => {
    await enrolWriter(org.apiKey, "stale-b", WRITER, 3);
    await makeStale("stale-b");
    const res = await api("/sig/subjects/stale-b/references", {
      method: "PUT",
      key: org.apiKey,
      body: referencesForm({ r3: signaturePng(WRITER, 3) }),
    });
    expect(res.status, await res.clone().text()).toBe(200);

    const model = await expectCurrent("stale-b");
    expect(model.refs.map((r) => r.refId).sort()).toEqual(["r0", "r1", "r2", "r3"]);
    // None is left out as unusable: only genuine outliers (at most a third) are.
    const outliers = model.refs.filter((r) => r.outlier).length;
    expect(outliers).toBeLessThanOrEqual(1);
    expect(model.basis.references).toBe(4 - outliers);
    expect((await view("stale-b")).reference_counts).toEqual({ anchors: 4, learned: 0 });
  });

  it("upgrades a learned reference, which stays learned", async () => {
    await enrolWriter(org.apiKey, "stale-c", WRITER, 3);
    const checked = await postCheck(
      org.apiKey,
      checkForm(
        { job_id: "fu-learn", policy: "review", items: [{ file: "doc", subject_reference: "stale-c" }] },
        { doc: signaturePng(WRITER, 5) },
      ),
    );
    expect(checked.status).toBe(200);
    const confirmed = await api("/sig/checks/fu-learn/items/0/confirm", {
      method: "POST",
      key: org.apiKey,
      headers: { "Idempotency-Key": `k-${crypto.randomUUID()}` },
    });
    expect(confirmed.status, await confirmed.clone().text()).toBe(200);
    await until(
      () => view("stale-c"),
      (v) => v.reference_counts.learned === 1,
      { what: "the confirmed check to be learned", pauseMs: 100 },
    );
    const before = await makeStale("stale-c");
    expect(before.has("learned-fu-learn.0")).toBe(true);

    const result = await checkOne("stale-c", signaturePng(WRITER, 6));
    expect(result.errors, JSON.stringify(result.errors)).toEqual([]);
    expect(result.decision).not.toBeNull();

    const model = await expectCurrent("stale-c");
    expect(model.refs.find((r) => r.refId === "learned-fu-learn.0")).toMatchObject({ learned: true });
    const learned = (await rows("stale-c")).find((r) => r.ref_id === "learned-fu-learn.0")!;
    expect(learned.kind).toBe("learned");
    expect(JSON.parse(learned.features!)).toEqual(JSON.parse(before.get("learned-fu-learn.0")!));
    const v = await view("stale-c");
    expect(v.reference_counts).toEqual({ anchors: 3, learned: 1 });
    // Spec 2.5 knows three sources; a learned reference is a confirmed past signature.
    expect(v.references.find((r) => r.ref_id === "learned-fu-learn.0")).toMatchObject({
      kind: "learned",
      source: "confirmed_past",
      status: "enrolled",
    });
  });

  it("learns a confirmation that reaches the learning consumer after the features changed", async () => {
    await enrolWriter(org.apiKey, "stale-g", WRITER, 3);
    const checked = await postCheck(
      org.apiKey,
      checkForm(
        { job_id: "fu-learn-late", policy: "review", items: [{ file: "doc", subject_reference: "stale-g" }] },
        { doc: signaturePng(WRITER, 5) },
      ),
    );
    expect(checked.status).toBe(200);
    // The deploy lands between the check and its confirmation: the consumer judges the candidate
    // against anchors it must first extract again.
    const before = await makeStale("stale-g");
    const confirmed = await api("/sig/checks/fu-learn-late/items/0/confirm", {
      method: "POST",
      key: org.apiKey,
      headers: { "Idempotency-Key": `k-${crypto.randomUUID()}` },
    });
    expect(confirmed.status, await confirmed.clone().text()).toBe(200);
    const review = await until(
      async () => {
        const res = await api("/sig/checks/fu-learn-late", { key: org.apiKey });
        return ((await res.json()) as { results: { review: { learning: { status: string; reason: string | null } } | null }[] }).results[0]
          .review;
      },
      (r) => r !== null && r.learning.status !== "queued",
      { what: "learning of fu-learn-late/0", pauseMs: 100 },
    );
    expect(review!.learning, JSON.stringify(review!.learning)).toMatchObject({ status: "learned" });
    const model = await expectCurrent("stale-g");
    expect(model.refs.map((r) => r.refId).sort()).toEqual(["learned-fu-learn-late.0", "r0", "r1", "r2"]);
    for (const r of (await rows("stale-g")).filter((x) => x.kind === "anchor"))
      expect(JSON.parse(r.features!)).toEqual(JSON.parse(before.get(r.ref_id)!));
    expect((await view("stale-g")).reference_counts).toEqual({ anchors: 3, learned: 1 });
  });

  it("decides with the others when a reference's file is gone or no longer yields a signature, and the subject view says why", async () => {
    await enrolWriter(org.apiKey, "stale-d", WRITER, 4);
    await makeStale("stale-d");
    const files = new Map((await rows("stale-d")).map((r) => [r.ref_id, r.file_key]));
    await env.FILES_US.delete(files.get("r1")!);
    await env.FILES_US.put(files.get("r2")!, encodePng(blankPage(600, 300)));

    const result = (await checkOne("stale-d", signaturePng(WRITER, 5))) as CheckResultBody & { reference_count: number | null };
    expect(result.errors, JSON.stringify(result.errors)).toEqual([]);
    expect(result.decision).not.toBeNull();
    expect(result.reference_count).toBe(2);

    const model = await expectCurrent("stale-d");
    expect(model.refs.map((r) => r.refId).sort()).toEqual(["r0", "r3"]);
    const v = await view("stale-d");
    expect(v.reference_counts).toEqual({ anchors: 2, learned: 0 });
    const r1 = v.references.find((r) => r.ref_id === "r1")!;
    expect(r1).toMatchObject({ status: "rejected", rejected_reason: "upgrade_failed" });
    expect(r1.rejected_detail).toMatch(/file is gone/);
    const r2 = v.references.find((r) => r.ref_id === "r2")!;
    expect(r2).toMatchObject({ status: "rejected", rejected_reason: "upgrade_failed" });
    expect(r2.rejected_detail).toMatch(/no longer yields a usable signature \(no_signature/);
    // The file that is still there is kept: nothing of the caller's is deleted.
    expect(await env.FILES_US.head(files.get("r2")!)).not.toBeNull();
  });

  it("ends with one consistent model when two checks upgrade it at once", async () => {
    await enrolWriter(org.apiKey, "stale-e", WRITER, 3);
    const before = await makeStale("stale-e");
    const [a, b] = await Promise.all([checkOne("stale-e", signaturePng(WRITER, 5)), checkOne("stale-e", signaturePng(WRITER, 6))]);
    for (const r of [a, b]) {
      expect(r.errors, JSON.stringify(r.errors)).toEqual([]);
      expect(r.decision).not.toBeNull();
    }
    await expectCurrent("stale-e");
    for (const r of await rows("stale-e")) expect(JSON.parse(r.features!)).toEqual(JSON.parse(before.get(r.ref_id)!));
    // Exactly one stored model: the loser of the race deleted its own.
    const models = await env.FILES_US.list({ prefix: `orgs/${org.orgId}/subjects/stale-e/model/` });
    expect(models.objects.map((o) => o.key)).toEqual([(await subjectRow("stale-e")).model_key]);
  });
});

describe("two upgrades of one subject at once", () => {
  it("both read the outdated rows, and the revision guard leaves one model of the upgraded rows", async () => {
    await enrolWriter(org.apiKey, "stale-f", WRITER, 3);
    const before = await makeStale("stale-f");
    const revision = (await subjectRow("stale-f")).refs_revision;
    const deps = { store: { name: "us" as const, db: env.DB_US, files: env.FILES_US }, engine: liveEngine() };
    // Started together, both read the rows before either writes (the reads come before any extraction).
    await Promise.all([rebuildModel(deps, org.orgId, "stale-f"), rebuildModel(deps, org.orgId, "stale-f")]);

    // Each upgrade bumped the revision once; the model is the last revision's, built from current rows.
    expect((await subjectRow("stale-f")).refs_revision).toBe(revision + 2);
    const model = await expectCurrent("stale-f");
    expect(model.refs).toHaveLength(3);
    for (const r of await rows("stale-f")) expect(JSON.parse(r.features!)).toEqual(JSON.parse(before.get(r.ref_id)!));
    const models = await env.FILES_US.list({ prefix: `orgs/${org.orgId}/subjects/stale-f/model/` });
    expect(models.objects.map((o) => o.key)).toEqual([(await subjectRow("stale-f")).model_key]);
  });
});

describe("a check's own reference files", () => {
  it("extracts a reference again when the job's cached features are of the previous version", async () => {
    const jobId = "fu-inline";
    const ref = signaturePng(WRITER, 1);
    // The cache the job's first item would find, as a core of the previous version left it.
    const cacheKey = `${itemReferenceKey(org.orgId, jobId, 0, 0)}.features.json`;
    const stale: StoredFeatures = { signature: { version: OLD_VERSION, vector: OLD_VECTOR }, variantRow: null };
    await env.FILES_US.put(
      cacheKey,
      JSON.stringify({ features: { ...stale, signature: { ...stale.signature, inkFound: true, inkBox: { x: 0, y: 0, w: 1, h: 1 } } } }),
    );
    // An entry of the previous version that found no signature (it had no version then) is extracted again too.
    const nullKey = `${itemReferenceKey(org.orgId, jobId, 0, 1)}.features.json`;
    await env.FILES_US.put(nullKey, JSON.stringify({ features: null }));

    const res = await postCheck(
      org.apiKey,
      checkForm(
        { job_id: jobId, items: [{ file: "doc", references: ["ref", "ref2"] }] },
        { doc: signaturePng(WRITER, 5), ref, ref2: signaturePng(WRITER, 2) },
      ),
    );
    expect(res.status, await res.clone().text()).toBe(200);
    const result = (await res.json()) as CheckResultBody & { reference_count: number | null };
    expect(result.errors, JSON.stringify(result.errors)).toEqual([]);
    expect(result.decision).not.toBeNull();
    expect(result.reference_count).toBe(2);
    for (const key of [cacheKey, nullKey]) {
      const entry = (await (await env.FILES_US.get(key))!.json()) as { features: StoredFeatures | null; featureVersion: number };
      expect(entry.featureVersion).toBe(FEATURE_VERSION);
      expect(entry.features!.signature.version).toBe(FEATURE_VERSION);
    }
  });
});
