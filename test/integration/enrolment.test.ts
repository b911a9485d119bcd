import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { api, createOrg, mintKey, type CreatedOrg } from "../helpers/tenant";
import { outsideUrl, registerOutside, uniquePath } from "../helpers/outside";
import { referencesForm, signaturePng, toBase64 } from "../helpers/signatures";
import { until } from "../helpers/wait";

interface Outcome {
  ref_id: string;
  status: string;
  reason?: string;
  replaced?: boolean;
}
interface ReferencesResult {
  subject_reference: string;
  references: Outcome[];
  counts: { enrolled: number; rejected: number; queued: number };
}
interface Reference {
  ref_id: string;
  kind: string;
  source: string;
  status: string;
  provenance: { method: string; source_url: string | null };
  file: { sha256: string };
  image_url: string;
  replacement: { status: string; rejected_reason: string | null; rejected_detail: string | null; file: { sha256: string } } | null;
}
interface SubjectView {
  subject_reference: string;
  reference_counts: { anchors: number; learned: number };
  references: Reference[];
  checks: { recent: unknown[]; total: number; next: string | null };
}

const outsideHost = new URL(env.TEST_OUTSIDE_URL).host;
let org: CreatedOrg;

beforeAll(async () => {
  org = await createOrg({ allowHosts: [outsideHost] });
});

function put(subject: string, body: FormData | unknown, key = org.apiKey) {
  return body instanceof FormData
    ? api(`/sig/subjects/${subject}/references`, { method: "PUT", key, body })
    : api(`/sig/subjects/${subject}/references`, { method: "PUT", key, json: body });
}

async function subject(name: string, key = org.apiKey): Promise<SubjectView> {
  const res = await api(`/sig/subjects/${name}`, { key });
  expect(res.status).toBe(200);
  return res.json();
}

async function r2Keys(prefix: string): Promise<string[]> {
  const page = await env.FILES_US.list({ prefix });
  return page.objects.map((o) => o.key);
}

async function expectProblem(res: Response, status: number, code?: string): Promise<{ code: string; detail: string; reason?: string }> {
  expect(res.status).toBe(status);
  expect(res.headers.get("Content-Type")).toContain("application/problem+json");
  const body = (await res.json()) as { code: string; detail: string; reason?: string };
  if (code) expect(body.code).toBe(code);
  return body;
}

describe("PUT /sig/subjects/{s}/references (multipart)", () => {
  it("enrols 3 references within the request and creates the subject", async () => {
    const res = await put(
      "alice",
      referencesForm({ a1: signaturePng(1, 0), a2: signaturePng(1, 1), a3: signaturePng(1, 2) }, { a1: "signature_card" }),
    );
    expect(res.status).toBe(200);
    const body = (await res.json()) as ReferencesResult;
    expect(body.counts).toEqual({ enrolled: 3, rejected: 0, queued: 0 });
    expect(body.references.map((r) => r.ref_id)).toEqual(["a1", "a2", "a3"]);

    const view = await subject("alice");
    expect(view.reference_counts).toEqual({ anchors: 3, learned: 0 });
    const a1 = view.references.find((r) => r.ref_id === "a1")!;
    expect(a1).toMatchObject({ kind: "anchor", source: "signature_card", status: "enrolled", provenance: { method: "upload" } });
    expect(view.references.find((r) => r.ref_id === "a2")!.source).toBe("unverified");
    expect(view.checks).toEqual({ recent: [], total: 0, next: null });
    expect(await r2Keys(`orgs/${org.orgId}/subjects/alice/model/`)).toHaveLength(1);
  });

  it("enrols 3 of 5 now, queues 2, and the queue consumer enrols them", async () => {
    const files: Record<string, Uint8Array> = {};
    for (let i = 0; i < 5; i++) files[`b${i}`] = signaturePng(2, i);
    const res = await put("bob", referencesForm(files));
    expect(res.status).toBe(202);
    const body = (await res.json()) as ReferencesResult;
    expect(body.counts).toEqual({ enrolled: 3, rejected: 0, queued: 2 });
    expect(body.references.filter((r) => r.status === "queued").map((r) => r.ref_id)).toEqual(["b3", "b4"]);

    expect((await subject("bob")).references.filter((r) => r.status === "queued")).toHaveLength(2);
    const view = await until(
      () => subject("bob"),
      (v) => v.reference_counts.anchors >= 5,
      { what: "the queued references to be enrolled" },
    );
    expect(view.reference_counts.anchors).toBe(5);
    expect(view.references.every((r) => r.status === "enrolled")).toBe(true);
  });

  it("replaces the reference with the same ref_id and deletes the old file", async () => {
    expect((await put("carol", referencesForm({ c1: signaturePng(3, 0) }))).status).toBe(200);
    const before = (await subject("carol")).references[0].file.sha256;
    const res = await put("carol", referencesForm({ c1: signaturePng(3, 1) }));
    expect(res.status).toBe(200);
    expect(((await res.json()) as ReferencesResult).references[0]).toMatchObject({ ref_id: "c1", status: "enrolled", replaced: true });
    const view = await subject("carol");
    expect(view.references).toHaveLength(1);
    expect(view.references[0].file.sha256).not.toBe(before);
    expect(await r2Keys(`orgs/${org.orgId}/subjects/carol/refs/c1/`)).toHaveLength(1);
  });

  it("rejects an image without a signature per reference, and keeps the live one", async () => {
    expect((await put("dave", referencesForm({ d1: signaturePng(4, 0) }))).status).toBe(200);
    const { encodePng, blankPage } = await import("../fixtures/generator");
    const res = await put("dave", referencesForm({ d1: encodePng(blankPage(600, 200)) }));
    expect(res.status).toBe(200);
    const outcome = ((await res.json()) as ReferencesResult).references[0];
    expect(outcome).toMatchObject({ ref_id: "d1", status: "rejected", reason: "no_signature" });
    expect((await subject("dave")).references[0].status).toBe("enrolled");
  });

  it("keeps a live reference while a queued upload of its ref_id waits, and when the queue rejects that upload", async () => {
    expect((await put("rhea", referencesForm({ k1: signaturePng(30, 0) }))).status).toBe(200);
    const live = (await subject("rhea")).references[0];
    const { encodePng, blankPage } = await import("../fixtures/generator");
    const blank = encodePng(blankPage(600, 200));
    const blankSha = [...new Uint8Array(await crypto.subtle.digest("SHA-256", blank))].map((b) => b.toString(16).padStart(2, "0")).join("");
    // The 4th file of a PUT is queued: k1's new file goes to the enrolment queue.
    const res = await put("rhea", referencesForm({ q1: signaturePng(30, 1), q2: signaturePng(30, 2), q3: signaturePng(30, 3), k1: blank }));
    expect(res.status).toBe(202);
    expect(((await res.json()) as ReferencesResult).references.find((r) => r.ref_id === "k1")).toMatchObject({ status: "queued" });
    // Queued or already rejected, the live reference is the one enrolled before, in the model and counted.
    const waiting = (await subject("rhea")).references.find((r) => r.ref_id === "k1")!;
    expect(waiting).toMatchObject({ status: "enrolled", file: { sha256: live.file.sha256 } });
    expect(waiting.replacement).toMatchObject({ file: { sha256: blankSha } });

    const view = await until(
      () => subject("rhea"),
      (v) => v.references.find((r) => r.ref_id === "k1")!.replacement?.status === "rejected",
      { what: "the queued replacement to be rejected" },
    );
    const k1 = view.references.find((r) => r.ref_id === "k1")!;
    expect(k1).toMatchObject({ status: "enrolled", file: { sha256: live.file.sha256 } });
    expect(k1.replacement).toMatchObject({ status: "rejected", rejected_reason: "no_signature" });
    expect(k1.replacement!.rejected_detail).toMatch(/stays live/);
    expect(view.reference_counts.anchors).toBe(4);
    // Its file is still there (the rejected upload's is deleted), and it still answers as an image.
    expect(await r2Keys(`orgs/${org.orgId}/subjects/rhea/refs/k1/`)).toHaveLength(1);
    expect((await api("/sig/subjects/rhea/references/k1/image", { key: org.apiKey })).status).toBe(200);
  });

  it("lets a queued upload of a live ref_id take its place once the queue enrols it, and deletes the old file", async () => {
    expect((await put("rory", referencesForm({ k1: signaturePng(31, 0) }))).status).toBe(200);
    const before = (await subject("rory")).references[0].file.sha256;
    const res = await put(
      "rory",
      referencesForm({ q1: signaturePng(31, 1), q2: signaturePng(31, 2), q3: signaturePng(31, 3), k1: signaturePng(31, 4) }),
    );
    expect(res.status).toBe(202);
    const view = await until(
      () => subject("rory"),
      (v) => v.references.find((r) => r.ref_id === "k1")!.file.sha256 !== before,
      { what: "the queued replacement to be enrolled" },
    );
    expect(view.references.find((r) => r.ref_id === "k1")).toMatchObject({ status: "enrolled", replacement: null });
    expect(view.reference_counts.anchors).toBe(4);
    expect(await r2Keys(`orgs/${org.orgId}/subjects/rory/refs/k1/`)).toHaveLength(1);
  });

  it("drops a queued replacement when a later upload of the ref_id is enrolled in its request", async () => {
    expect((await put("rose", referencesForm({ k1: signaturePng(32, 0) }))).status).toBe(200);
    const { encodePng, blankPage } = await import("../fixtures/generator");
    const res = await put(
      "rose",
      referencesForm({ q1: signaturePng(32, 1), q2: signaturePng(32, 2), q3: signaturePng(32, 3), k1: encodePng(blankPage(600, 200)) }),
    );
    expect(res.status).toBe(202);
    expect((await put("rose", referencesForm({ k1: signaturePng(32, 5) }))).status).toBe(200);
    const latest = (await subject("rose")).references.find((r) => r.ref_id === "k1")!;
    expect(latest).toMatchObject({ status: "enrolled", replacement: null });
    // Once the queue has handled the other files, the superseded upload has changed nothing.
    const view = await until(
      () => subject("rose"),
      (v) => v.reference_counts.anchors >= 4,
      { what: "the queued references to be enrolled" },
    );
    expect(view.references.find((r) => r.ref_id === "k1")).toMatchObject({
      status: "enrolled",
      replacement: null,
      file: { sha256: latest.file.sha256 },
    });
    expect(await r2Keys(`orgs/${org.orgId}/subjects/rose/refs/k1/`)).toHaveLength(1);
  });

  it.each([".hidden", "learned-x", "a b", "x".repeat(129)])("refuses the ref_id %j with 400", async (refId) => {
    const res = await put("erin", referencesForm({ [refId]: signaturePng(5, 0) }));
    const problem = await expectProblem(res, 400);
    expect(problem.detail).toContain(refId.slice(0, 20));
    expect((await api("/sig/subjects/erin", { key: org.apiKey })).status).toBe(404);
  });

  it("refuses a bad source value with 400 naming the field", async () => {
    const res = await put("erin", referencesForm({ e1: signaturePng(5, 0) }, { e1: "notarised" }));
    expect((await expectProblem(res, 400)).detail).toContain("body.source.e1");
  });

  it("takes a file part named source.<x> as the reference of that ref_id, with or without its own source field", async () => {
    // source.card is a legal ref_id (spec 2.1); only a text part named source.<ref_id> is a source field.
    const res = await put("gail", referencesForm({ "source.card": signaturePng(6, 0) }));
    expect(res.status).toBe(200);
    expect(((await res.json()) as ReferencesResult).references).toMatchObject([{ ref_id: "source.card", status: "enrolled" }]);
    expect((await subject("gail")).references).toMatchObject([{ ref_id: "source.card", source: "unverified" }]);

    const withSource = await put("gail", referencesForm({ "source.card": signaturePng(6, 1) }, { "source.card": "signature_card" }));
    expect(withSource.status).toBe(200);
    expect(((await withSource.json()) as ReferencesResult).references).toMatchObject([
      { ref_id: "source.card", status: "enrolled", replaced: true },
    ]);
    expect((await subject("gail")).references).toMatchObject([{ ref_id: "source.card", source: "signature_card" }]);

    // Beside a reference named card, each gets its own source: the file part source.card is not card's source.
    const both = await put(
      "gail",
      referencesForm({ card: signaturePng(6, 2), "source.card": signaturePng(6, 0) }, { card: "confirmed_past" }),
    );
    expect(both.status).toBe(200);
    const view = await subject("gail");
    expect(view.references.find((r) => r.ref_id === "card")!.source).toBe("confirmed_past");
    expect(view.references.find((r) => r.ref_id === "source.card")!.source).toBe("unverified");
  });

  it("still refuses a text part that is not a source field, and a source field naming no file part", async () => {
    const note = referencesForm({ h1: signaturePng(7, 0) });
    note.append("note", "hello");
    expect((await expectProblem(await put("hank", note), 400)).detail).toContain("note");
    const orphan = referencesForm({ "source.card": signaturePng(7, 0) }, { card: "signature_card" });
    expect((await expectProblem(await put("hank", orphan), 400)).detail).toContain("body.source.card");
    expect((await api("/sig/subjects/hank", { key: org.apiKey })).status).toBe(404);
  });

  it("answers 413 for 21 files and leaves nothing behind", async () => {
    const files: Record<string, Uint8Array> = {};
    const png = signaturePng(6, 0);
    for (let i = 0; i < 21; i++) files[`f${i}`] = png;
    await expectProblem(await put("frank", referencesForm(files)), 413, "too_large");
    expect((await api("/sig/subjects/frank", { key: org.apiKey })).status).toBe(404);
    expect(await r2Keys(`orgs/${org.orgId}/subjects/frank/`)).toEqual([]);
  });

  it("answers 413 for more than 20 MB in total", async () => {
    const big = new Uint8Array(7 * 1024 * 1024);
    big.set(signaturePng(6, 1));
    await expectProblem(await put("frank", referencesForm({ g1: big, g2: big, g3: big })), 413, "too_large");
    expect((await api("/sig/subjects/frank", { key: org.apiKey })).status).toBe(404);
  });

  it("answers 415 for a body that is neither multipart nor JSON, and for a file that is not an image", async () => {
    const res = await api("/sig/subjects/gina/references", {
      method: "PUT",
      key: org.apiKey,
      body: "hello",
      headers: { "Content-Type": "text/plain" },
    });
    await expectProblem(res, 415, "unsupported_media_type");
    const text = new TextEncoder().encode("this is not an image at all");
    await expectProblem(await put("gina", referencesForm({ g1: signaturePng(7, 0), g2: text })), 415, "unsupported_media_type");
    expect((await api("/sig/subjects/gina", { key: org.apiKey })).status).toBe(404);
    expect(await r2Keys(`orgs/${org.orgId}/subjects/gina/`)).toEqual([]);
  });

  it("answers 422 for a corrupt image and leaves nothing behind", async () => {
    const png = signaturePng(7, 1);
    const truncated = png.slice(0, Math.floor(png.length / 2));
    const res = await put("hank", referencesForm({ h1: signaturePng(7, 2), h2: truncated }));
    const problem = await expectProblem(res, 422);
    expect(problem.detail).toContain("h2");
    expect((await api("/sig/subjects/hank", { key: org.apiKey })).status).toBe(404);
    expect(await r2Keys(`orgs/${org.orgId}/subjects/hank/`)).toEqual([]);
  });

  it("answers 400 for a malformed multipart body", async () => {
    const res = await api("/sig/subjects/ivan/references", {
      method: "PUT",
      key: org.apiKey,
      body: '--xyz\r\nContent-Disposition: form-data; name="a"\r\n\r\nunterminated',
      headers: { "Content-Type": "multipart/form-data; boundary=xyz" },
    });
    await expectProblem(res, 400);
  });
});

describe("PUT /sig/subjects/{s}/references (URLs)", () => {
  async function host(png: Uint8Array): Promise<string> {
    const path = uniquePath("ref.png");
    await registerOutside(path, { body_base64: toBase64(png), headers: { "content-type": "image/png" } });
    return outsideUrl(path);
  }

  it("fetches and enrols references from allowlisted URLs", async () => {
    const urls = [await host(signaturePng(8, 0)), await host(signaturePng(8, 1))];
    const res = await put("judy", {
      references: [
        { ref_id: "u1", url: urls[0], source: "confirmed_past" },
        { ref_id: "u2", url: urls[1] },
      ],
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as ReferencesResult).counts.enrolled).toBe(2);
    const view = await subject("judy");
    expect(view.references.find((r) => r.ref_id === "u1")).toMatchObject({
      source: "confirmed_past",
      provenance: { method: "url", source_url: urls[0] },
    });
  });

  it("refuses a host that is not allowlisted", async () => {
    const res = await put("judy2", { references: [{ ref_id: "u1", url: "https://evil.example.com/x.png" }] });
    const problem = await expectProblem(res, 400);
    expect(problem.detail).toContain("body.references.0.url");
    expect((await api("/sig/subjects/judy2", { key: org.apiKey })).status).toBe(404);
  });

  it("refuses a redirect to a host that is not allowlisted", async () => {
    const path = uniquePath("redirect.png");
    await registerOutside(path, { redirect: "https://evil.example.com/x.png" });
    const res = await put("judy3", { references: [{ ref_id: "u1", url: outsideUrl(path) }] });
    const problem = await expectProblem(res, 400);
    expect(problem.reason).toBe("redirect_not_allowed");
  });

  it("follows a redirect that stays on the allowlist", async () => {
    const target = await host(signaturePng(8, 2));
    const path = uniquePath("redirect-ok.png");
    await registerOutside(path, { redirect: target });
    const res = await put("judy4", { references: [{ ref_id: "u1", url: outsideUrl(path) }] });
    expect(res.status).toBe(200);
  });

  it("fails a stalled body with fetch_failed / body_stalled", async () => {
    const path = uniquePath("stall.png");
    // 1000 bytes, then nothing for far longer than the (injected, short) stall window.
    await registerOutside(path, { headers: { "content-type": "image/png" }, chunks: [{ size: 1000 }], stall: true, stall_ms: 20_000 });
    const settings = env as unknown as Record<string, string | undefined>;
    settings.URL_FETCH_STALL_WINDOW_MS = "200";
    try {
      const res = await put("judy5", { references: [{ ref_id: "u1", url: outsideUrl(path) }] });
      const problem = await expectProblem(res, 502, "fetch_failed");
      expect(problem.reason).toBe("body_stalled");
      expect(problem.detail).toContain("per 0.2 s");
    } finally {
      delete settings.URL_FETCH_STALL_WINDOW_MS;
    }
    expect((await api("/sig/subjects/judy5", { key: org.apiKey })).status).toBe(404);
  });

  it("answers 504 timeout with reason fetch_deadline when the shared deadline passes", async () => {
    const path = uniquePath("slow.png");
    await registerOutside(path, { delay_ms: 3000, body_base64: toBase64(signaturePng(8, 3)) });
    const settings = env as unknown as Record<string, string | undefined>;
    settings.URL_FETCH_DEADLINE_MS = "500";
    try {
      const problem = await expectProblem(await put("judy7", { references: [{ ref_id: "u1", url: outsideUrl(path) }] }), 504, "timeout");
      expect(problem.reason).toBe("fetch_deadline");
      expect((await api("/sig/subjects/judy7", { key: org.apiKey })).status).toBe(404);
    } finally {
      delete settings.URL_FETCH_DEADLINE_MS;
    }
  });

  it("validates the JSON body, naming the field", async () => {
    const res = await put("judy6", { references: [{ ref_id: "learned-1", url: "https://x.example/a.png" }] });
    expect((await expectProblem(res, 400)).detail).toContain("body.references.0.ref_id");
    const res2 = await put("judy6", { references: [] });
    await expectProblem(res2, 400);
  });
});

describe("GET /sig/subjects", () => {
  it("pages newest first, filters by prefix, and refuses a forged cursor", async () => {
    const own = await createOrg();
    for (const name of ["list-a", "list-b", "list-c", "other-d"]) {
      expect((await put(name, referencesForm({ r1: signaturePng(9, 0) }), own.apiKey)).status).toBe(200);
    }
    const page1 = (await (await api("/sig/subjects?limit=2", { key: own.apiKey })).json()) as {
      subjects: { subject_reference: string; reference_counts: { anchors: number } }[];
      next_cursor: string;
    };
    expect(page1.subjects.map((s) => s.subject_reference)).toEqual(["other-d", "list-c"]);
    expect(page1.subjects[0].reference_counts.anchors).toBe(1);
    const page2 = (await (
      await api(`/sig/subjects?limit=2&cursor=${encodeURIComponent(page1.next_cursor)}`, { key: own.apiKey })
    ).json()) as { subjects: { subject_reference: string }[]; next_cursor: string | null };
    expect(page2.subjects.map((s) => s.subject_reference)).toEqual(["list-b", "list-a"]);
    expect(page2.next_cursor).toBeNull();

    const prefixed = (await (await api("/sig/subjects?q=list-", { key: own.apiKey })).json()) as {
      subjects: { subject_reference: string }[];
    };
    expect(prefixed.subjects.map((s) => s.subject_reference)).toEqual(["list-c", "list-b", "list-a"]);

    const forged = page1.next_cursor.slice(0, -2) + (page1.next_cursor.endsWith("AA") ? "BB" : "AA");
    await expectProblem(await api(`/sig/subjects?limit=2&cursor=${encodeURIComponent(forged)}`, { key: own.apiKey }), 400);
    await expectProblem(await api(`/sig/subjects?cursor=garbage`, { key: own.apiKey }), 400);
    const empty = await expectProblem(await api("/sig/subjects?cursor=", { key: own.apiKey }), 400, "invalid_cursor");
    expect(empty.detail).toMatch(/^query\.cursor: /);
    const long = await expectProblem(await api(`/sig/subjects?q=${"x".repeat(129)}`, { key: own.apiKey }), 400);
    expect(long.detail).toMatch(/^query\.q: /);
  });
});

describe("deletes", () => {
  it("DELETE subject removes its rows and every file", async () => {
    expect((await put("kate", referencesForm({ k1: signaturePng(10, 0), k2: signaturePng(10, 1) }))).status).toBe(200);
    expect((await r2Keys(`orgs/${org.orgId}/subjects/kate/`)).length).toBeGreaterThan(0);
    const res = await api("/sig/subjects/kate", { method: "DELETE", key: org.apiKey });
    expect(res.status).toBe(204);
    expect((await api("/sig/subjects/kate", { key: org.apiKey })).status).toBe(404);
    expect(await r2Keys(`orgs/${org.orgId}/subjects/kate/`)).toEqual([]);
    const rows = await env.DB_US.prepare("SELECT COUNT(*) AS n FROM subject_references WHERE org_id = ? AND subject_reference = 'kate'")
      .bind(org.orgId)
      .first<{ n: number }>();
    expect(rows!.n).toBe(0);
    expect((await api("/sig/subjects/kate", { method: "DELETE", key: org.apiKey })).status).toBe(404);
  });

  it("DELETE reference removes it and its file; a learned reference is 409", async () => {
    expect((await put("liam", referencesForm({ l1: signaturePng(11, 0), l2: signaturePng(11, 1) }))).status).toBe(200);
    expect((await api("/sig/subjects/liam/references/l1", { method: "DELETE", key: org.apiKey })).status).toBe(204);
    const view = await subject("liam");
    expect(view.references.map((r) => r.ref_id)).toEqual(["l2"]);
    expect(await r2Keys(`orgs/${org.orgId}/subjects/liam/refs/l1/`)).toEqual([]);
    expect((await api("/sig/subjects/liam/references/l1", { method: "DELETE", key: org.apiKey })).status).toBe(404);

    // Learning is a later feature: plant a learned reference as the learning consumer will store it.
    await env.DB_US.prepare(
      "INSERT INTO subject_references (org_id, subject_reference, ref_id, kind, source, status, method, file_key, content_type, byte_size, sha256, upload_id, created_at) VALUES (?, 'liam', 'learned-1', 'learned', 'learned', 'enrolled', 'learned', 'x', 'image/png', 1, 'x', 'u', '2026-01-01T00:00:00Z')",
    )
      .bind(org.orgId)
      .run();
    const res = await api("/sig/subjects/liam/references/learned-1", { method: "DELETE", key: org.apiKey });
    expect((await expectProblem(res, 409, "conflict")).detail).toContain("unlearn");
  });

  it("DELETE .../references/unlearn deletes the reference named unlearn", async () => {
    expect((await put("mia", referencesForm({ unlearn: signaturePng(12, 0), m2: signaturePng(12, 1) }))).status).toBe(200);
    expect((await api("/sig/subjects/mia/references/unlearn", { method: "DELETE", key: org.apiKey })).status).toBe(204);
    expect((await subject("mia")).references.map((r) => r.ref_id)).toEqual(["m2"]);
    expect((await api("/sig/subjects/mia/references/unlearn", { method: "DELETE", key: org.apiKey })).status).toBe(404);
  });
});

describe("GET .../references/{ref_id}/image", () => {
  it("answers a grey PNG of at most 512 px with the privacy headers", async () => {
    const { encodePng, makeWriter, renderSignature } = await import("../fixtures/generator");
    const wide = encodePng(renderSignature(makeWriter(13), { width: 1400, height: 500 }));
    expect((await put("nora", referencesForm({ n1: wide }))).status).toBe(200);
    const res = await api("/sig/subjects/nora/references/n1/image", { key: org.apiKey });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toBe("image/png");
    expect(res.headers.get("Cache-Control")).toBe("private, no-store");
    expect(res.headers.get("X-Content-Type-Options")).toBe("nosniff");
    const png = new Uint8Array(await res.arrayBuffer());
    const view = new DataView(png.buffer);
    const [w, h, colourType] = [view.getUint32(16), view.getUint32(20), png[25]];
    expect(Math.max(w, h)).toBe(512);
    expect(colourType).toBe(0); // grey
    expect((await api("/sig/subjects/nora/references/zz/image", { key: org.apiKey })).status).toBe(404);
    // Once the file is gone, the image is 404 too.
    const row = await env.DB_US.prepare("SELECT file_key FROM subject_references WHERE org_id = ? AND ref_id = 'n1'")
      .bind(org.orgId)
      .first<{ file_key: string }>();
    await env.FILES_US.delete(row!.file_key);
    expect((await api("/sig/subjects/nora/references/n1/image", { key: org.apiKey })).status).toBe(404);
  });
});

describe("tenancy and permissions", () => {
  it("answers another tenant's subject as 404 on every route", async () => {
    expect((await put("olga", referencesForm({ o1: signaturePng(14, 0) }))).status).toBe(200);
    const other = await createOrg();
    const k = other.apiKey;
    expect((await api("/sig/subjects/olga", { key: k })).status).toBe(404);
    expect((await api("/sig/subjects/olga/references/o1/image", { key: k })).status).toBe(404);
    expect((await api("/sig/subjects/olga/references/o1", { method: "DELETE", key: k })).status).toBe(404);
    expect((await api("/sig/subjects/olga", { method: "DELETE", key: k })).status).toBe(404);
    const list = (await (await api("/sig/subjects", { key: k })).json()) as { subjects: unknown[] };
    expect(list.subjects).toEqual([]);
    // And the owner's subject is untouched.
    expect((await subject("olga")).reference_counts.anchors).toBe(1);
  });

  it("answers 403 naming the permission to a caller without it", async () => {
    const { apiKey } = await mintKey(org.orgId, ["org:read"]);
    const cases: [string, RequestInit][] = [
      ["/sig/subjects", {}],
      ["/sig/subjects/olga", {}],
      ["/sig/subjects/olga", { method: "DELETE" }],
      ["/sig/subjects/olga/references/o1", { method: "DELETE" }],
      ["/sig/subjects/olga/references/o1/image", {}],
    ];
    for (const [path, init] of cases) {
      const problem = await expectProblem(await api(path, { ...init, key: apiKey }), 403, "permission_denied");
      expect(problem.detail).toMatch(/sig:(subjects:read|references:delete)/);
    }
    const problem = await expectProblem(await put("olga", referencesForm({ o2: signaturePng(14, 1) }), apiKey), 403, "permission_denied");
    expect(problem.detail).toContain("sig:references:write");
  });

  it("answers a malformed subject reference in the path as 404", async () => {
    expect((await api("/sig/subjects/..", { key: org.apiKey })).status).toBe(404);
    expect((await api(`/sig/subjects/${"y".repeat(129)}`, { key: org.apiKey })).status).toBe(404);
  });
});

describe("a change whose model rebuild never ran (the process died in between)", () => {
  async function revisions(name: string) {
    return env.DB_US.prepare(
      "SELECT refs_revision AS refs, model_revision AS model, model_key AS key FROM subjects WHERE org_id = ? AND subject_reference = ?",
    )
      .bind(org.orgId, name)
      .first<{ refs: number; model: number; key: string }>();
  }

  it("is healed by the redelivered queue message", async () => {
    const files: Record<string, Uint8Array> = {};
    for (let i = 0; i < 4; i++) files[`r${i}`] = signaturePng(15, i);
    expect((await put("rita", referencesForm(files))).status).toBe(202);
    await until(
      () => subject("rita"),
      (v) => v.reference_counts.anchors >= 4,
      { what: "rita's queued references to be enrolled" },
    );
    // As if the consumer had enrolled r3 and died before rebuilding the model.
    await env.DB_US.prepare("UPDATE subjects SET refs_revision = refs_revision + 1 WHERE org_id = ? AND subject_reference = 'rita'")
      .bind(org.orgId)
      .run();
    const stale = await revisions("rita");
    expect(stale!.model).not.toBe(stale!.refs);

    const row = await env.DB_US.prepare("SELECT upload_id FROM subject_references WHERE org_id = ? AND ref_id = 'r3'")
      .bind(org.orgId)
      .first<{ upload_id: string }>();
    const { enrolQueued } = await import("../../src/services/enrolment");
    const { liveEngine } = await import("../../src/services/engine-live");
    const outcome = await enrolQueued(
      { store: { name: "us", db: env.DB_US, files: env.FILES_US }, engine: liveEngine() },
      { kind: "enrol", orgId: org.orgId, region: "us", subjectReference: "rita", refId: "r3", uploadId: row!.upload_id },
    );
    expect(outcome).toBe("enrolled");
    const healed = await revisions("rita");
    expect(healed!.model).toBe(healed!.refs);
    expect(await env.FILES_US.head(healed!.key)).not.toBeNull();
  });

  it("is healed before a check compares with the model", async () => {
    expect((await put("sam", referencesForm({ s1: signaturePng(16, 0), s2: signaturePng(16, 1) }))).status).toBe(200);
    await env.DB_US.prepare("UPDATE subjects SET refs_revision = refs_revision + 1 WHERE org_id = ? AND subject_reference = 'sam'")
      .bind(org.orgId)
      .run();
    const form = new FormData();
    form.append("request", JSON.stringify({ items: [{ file: "d", subject_reference: "sam" }] }));
    form.append("d", new Blob([signaturePng(16, 2)], { type: "image/png" }), "d.png");
    const res = await api("/sig/checks", { method: "POST", key: org.apiKey, body: form, headers: { "Idempotency-Key": "heal-1" } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { decision: string }).decision).toMatch(/APPROVE|FLAG/);
    const healed = await revisions("sam");
    expect(healed!.model).toBe(healed!.refs);
  });
});
