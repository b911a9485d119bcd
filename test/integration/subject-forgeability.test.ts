// The forgeability estimate (docs/forgeability.md) in the enrolment result and the subject view: computed
// with the model whenever the live references change, at the default policy's approve threshold.
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { api, createOrg, type CreatedOrg } from "../helpers/tenant";
import { referencesForm, signaturePng } from "../helpers/signatures";
import { until } from "../helpers/wait";
import { encodePng } from "../fixtures/generator";

interface Forgeability {
  estimated_far_at_approve: number;
  approve_threshold: number;
  policy: string;
  level: "low" | "medium" | "high";
  advice: string | null;
  consistency: number;
  complexity: number;
  basis: { references: number; variants: number };
  version: number;
  computed_at: string;
}
interface ReferencesResult {
  counts: { enrolled: number; rejected: number; queued: number };
  forgeability: Forgeability | null;
}
interface SubjectView {
  reference_counts: { anchors: number; learned: number };
  forgeability: Forgeability | null;
}

let org: CreatedOrg;

beforeAll(async () => {
  org = await createOrg();
});

const put = (subject: string, form: FormData) => api(`/sig/subjects/${subject}/references`, { method: "PUT", key: org.apiKey, body: form });

async function view(subject: string): Promise<SubjectView> {
  const res = await api(`/sig/subjects/${subject}`, { key: org.apiKey });
  expect(res.status).toBe(200);
  return res.json();
}

function expectWellFormed(f: Forgeability | null): asserts f is Forgeability {
  expect(f).not.toBeNull();
  if (!f) return;
  expect(f.estimated_far_at_approve).toBeGreaterThan(0);
  expect(f.estimated_far_at_approve).toBeLessThan(1);
  expect(f.consistency).toBeGreaterThan(0);
  expect(f.consistency).toBeLessThan(1);
  expect(f.complexity).toBeGreaterThan(0);
  expect(f.complexity).toBeLessThan(1);
  expect(["low", "medium", "high"]).toContain(f.level);
  // Advice exactly when desks should review more.
  expect(f.advice === null).toBe(f.level === "low");
  expect(f.version).toBe(1);
  expect(Number.isNaN(Date.parse(f.computed_at))).toBe(false);
}

describe("forgeability", () => {
  it("the enrolment result carries it, and the subject view shows the same stored estimate", async () => {
    const res = await put("fa", referencesForm({ a1: signaturePng(41, 0), a2: signaturePng(41, 1), a3: signaturePng(41, 2) }));
    expect(res.status).toBe(200);
    const body = (await res.json()) as ReferencesResult;
    expect(body.counts.enrolled).toBe(3);
    expectWellFormed(body.forgeability);
    expect(body.forgeability.approve_threshold).toBe(0.7);
    expect(body.forgeability.policy).toBe("default@1");
    expect(body.forgeability.basis).toEqual({ references: 3, variants: 0 });

    const v = await view("fa");
    expect(v.forgeability).toEqual(body.forgeability);
  });

  it("one reference rests on synthetic variants, and the estimate changes with the references", async () => {
    const one = (await (await put("fb", referencesForm({ b1: signaturePng(42, 0) }))).json()) as ReferencesResult;
    expectWellFormed(one.forgeability);
    expect(one.forgeability.basis.references).toBe(1);
    expect(one.forgeability.basis.variants).toBeGreaterThan(0);

    const more = (await (await put("fb", referencesForm({ b2: signaturePng(42, 1), b3: signaturePng(42, 2) }))).json()) as ReferencesResult;
    expectWellFormed(more.forgeability);
    expect(more.forgeability.basis).toEqual({ references: 3, variants: 0 });
    expect(more.forgeability.computed_at >= one.forgeability.computed_at).toBe(true);
    expect(more.forgeability).not.toEqual(one.forgeability);
  });

  it("is null without a live reference: nothing enrolled, or every reference deleted", async () => {
    const blank = new Uint8Array(encodePng({ width: 400, height: 200, data: new Uint8Array(400 * 200).fill(255) }));
    const res = await put("fc", referencesForm({ c1: blank }));
    expect(res.status).toBe(200);
    const body = (await res.json()) as ReferencesResult;
    expect(body.counts.rejected).toBe(1);
    expect(body.forgeability).toBeNull();
    expect((await view("fc")).forgeability).toBeNull();

    expect((await put("fc", referencesForm({ c2: signaturePng(43, 0) }))).status).toBe(200);
    expectWellFormed((await view("fc")).forgeability);
    expect((await api("/sig/subjects/fc/references/c2", { method: "DELETE", key: org.apiKey })).status).toBe(204);
    expect((await view("fc")).forgeability).toBeNull();
  });

  it("references enrolled by the queue consumer update it", async () => {
    const files: Record<string, Uint8Array> = {};
    for (let i = 0; i < 5; i++) files[`d${i}`] = signaturePng(44, i);
    const res = await put("fd", referencesForm(files));
    expect(res.status).toBe(202);
    const body = (await res.json()) as ReferencesResult;
    expectWellFormed(body.forgeability);
    expect(body.forgeability.basis.references).toBe(3);
    const v = await until(
      () => view("fd"),
      (s) => (s.forgeability?.basis.references ?? 0) >= 5,
      { what: "the queued references to reach the estimate" },
    );
    expectWellFormed(v.forgeability);
    expect(v.reference_counts.anchors).toBe(5);
  });

  it("is computed at the approve threshold of the organisation's default policy", async () => {
    const files = { e1: signaturePng(45, 0), e2: signaturePng(45, 1), e3: signaturePng(45, 2) };
    const before = (await (await put("fe", referencesForm(files))).json()) as ReferencesResult;
    expectWellFormed(before.forgeability);

    const published = await api("/sig/policies/default", {
      method: "PUT",
      key: org.apiKey,
      json: { thresholds: { auto_approve: 0.95, approve: 0.85, flag: 0.4 } },
    });
    expect(published.status).toBe(201);
    const { version } = (await published.json()) as { version: number };
    // The same references again: the model is rebuilt, now at the stricter threshold.
    const after = (await (await put("fe", referencesForm(files))).json()) as ReferencesResult;
    expectWellFormed(after.forgeability);
    expect(after.forgeability.approve_threshold).toBe(0.85);
    expect(after.forgeability.policy).toBe(`default@${version}`);
    // A higher bar lets fewer forgeries through.
    expect(after.forgeability.estimated_far_at_approve).toBeLessThan(before.forgeability.estimated_far_at_approve);
  });

  it("a subject whose model predates estimates shows null until its references change", async () => {
    expect((await put("ff", referencesForm({ f1: signaturePng(46, 0) }))).status).toBe(200);
    // What a row written before migration 0009 looks like.
    await env.DB_US.prepare("UPDATE subjects SET forgeability = NULL WHERE org_id = ? AND subject_reference = ?")
      .bind(org.orgId, "ff")
      .run();
    expect((await view("ff")).forgeability).toBeNull();
    expect((await put("ff", referencesForm({ f2: signaturePng(46, 1) }))).status).toBe(200);
    expectWellFormed((await view("ff")).forgeability);
  });
});
