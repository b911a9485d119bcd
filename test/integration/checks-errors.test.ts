import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { REGION_BASE, api, createOrg, mintKey, type CreatedOrg } from "../helpers/tenant";
import { outsideRequests, outsideUrl, registerOutside, uniquePath } from "../helpers/outside";
import { signaturePng, toBase64 } from "../helpers/signatures";
import { checkForm, enrolWriter, expectProblem, postCheck, waitForJob, type CheckResultBody } from "../helpers/checks";

const outsideHost = new URL(env.TEST_OUTSIDE_URL).host;
const settings = env as unknown as Record<string, string | undefined>;
let org: CreatedOrg;

beforeAll(async () => {
  org = await createOrg({ allowHosts: [outsideHost] });
  await enrolWriter(org.apiKey, "alice", 11, 3);
});

/** `[[[...]]]`, `depth` arrays deep (built in a loop: the value is deeper than a recursive builder likes). */
function nestedArrays(depth: number): unknown[] {
  let v: unknown[] = [];
  for (let i = 1; i < depth; i++) v = [v];
  return v;
}

const one = (extra: Record<string, unknown> = {}) =>
  checkForm({ items: [{ file: "d", subject_reference: "alice", ...extra }] }, { d: signaturePng(11, 5) });

describe("POST /sig/checks refusals", () => {
  it("401 without a valid credential", async () => {
    await expectProblem(
      await api("/sig/checks", { method: "POST", body: one(), headers: { "Idempotency-Key": "k-401" } }),
      401,
      "unauthorized",
    );
    await expectProblem(await postCheck("svc_test_not-a-key", one()), 401, "unauthorized");
    await expectProblem(await api("/sig/checks/x"), 401, "unauthorized");
    await expectProblem(await api("/sig/usage"), 401, "unauthorized");
  });

  it("402 billing_required while billing is inactive; reads stay open", async () => {
    const unpaid = await createOrg({ billing: "inactive" });
    await expectProblem(await postCheck(unpaid.apiKey, one()), 402, "billing_required");
    expect((await api("/sig/usage", { key: unpaid.apiKey })).status).toBe(200);
  });

  it("429 quota_exceeded with Retry-After once the month's quota is used", async () => {
    const small = await createOrg({ monthlyQuota: 1 });
    await enrolWriter(small.apiKey, "alice", 11, 3);
    expect((await postCheck(small.apiKey, one())).status).toBe(200);
    const res = await postCheck(small.apiKey, one());
    await expectProblem(res, 429, "quota_exceeded");
    expect(Number(res.headers.get("Retry-After"))).toBeGreaterThan(0);
  });

  it("403 without sig:checks:create, and 403 on reading without sig:checks:read", async () => {
    const { apiKey } = await mintKey(org.orgId, ["sig:checks:read"]);
    const problem = await expectProblem(await postCheck(apiKey, one()), 403, "permission_denied");
    expect(problem.detail).toContain("sig:checks:create");
    const { apiKey: writer } = await mintKey(org.orgId, ["sig:checks:create"]);
    await expectProblem(await api("/sig/checks/whatever", { key: writer }), 403, "permission_denied");
  });

  it("400 for malformed requests, naming the field", async () => {
    const cases: [FormData | object, string][] = [
      [checkForm({ items: [] }, {}), "body.request.items"],
      [checkForm({ items: [{ file: "d" }] }, { d: signaturePng(11, 1) }), "body.request.items.0"],
      [checkForm({ items: [{ file: "missing", subject_reference: "alice" }] }, {}), "body.request.items"],
      [
        checkForm({ items: [{ file: "d", subject_reference: "alice" }] }, { d: signaturePng(11, 1), extra: signaturePng(11, 2) }),
        "body.extra",
      ],
      [checkForm({ items: [{ file: ".d", subject_reference: "alice" }] }, {}), "body.request.items.0.file"],
      [checkForm({ job_id: "a/b", items: [{ file: "d", subject_reference: "alice" }] }, { d: signaturePng(11, 1) }), "body.request.job_id"],
      [
        checkForm({ policy: "nope", items: [{ file: "d", subject_reference: "alice" }] }, { d: signaturePng(11, 1) }),
        "body.request.policy",
      ],
      [
        checkForm({ items: [{ file: "d", subject_reference: "alice", input_type: "Photo!" }] }, { d: signaturePng(11, 1) }),
        "body.request.items.0.input_type",
      ],
      [{ items: [{ file: "d", subject_reference: "alice" }] }, "body.items.0"],
      [{ items: [{ file: { url: "https://x.example/a.png" } }] }, "body.items.0"],
      // Metadata nested past 32 levels: thousands of levels fit in 16 KB, and overflowed the stack later.
      [
        checkForm({ metadata: { a: nestedArrays(6000) }, items: [{ file: "d", subject_reference: "alice" }] }, { d: signaturePng(11, 1) }),
        "body.request.metadata",
      ],
      [
        checkForm({ items: [{ file: "d", subject_reference: "alice", metadata: { a: nestedArrays(32) } }] }, { d: signaturePng(11, 1) }),
        "body.request.items.0.metadata",
      ],
    ];
    for (const [body, field] of cases) {
      const problem = await expectProblem(await postCheck(org.apiKey, body), 400, "invalid_request");
      expect(problem.errors?.[0]?.field, JSON.stringify(problem)).toBe(field);
      expect(problem.detail, JSON.stringify(problem)).toMatch(new RegExp(`^${field.replaceAll(".", "\\.")}: `));
    }
    const noRequest = new FormData();
    noRequest.append("d", new Blob([signaturePng(11, 1)]), "d.png");
    expect((await postCheck(org.apiKey, noRequest)).status).toBe(400);
    // A part name held twice: which file would be checked must not depend on the order of the parts.
    const twice = checkForm({ items: [{ file: "d", subject_reference: "alice" }] }, { d: signaturePng(11, 1) });
    twice.append("d", new Blob([signaturePng(11, 2)], { type: "image/png" }), "d2.png");
    const repeated = await expectProblem(await postCheck(org.apiKey, twice), 400, "invalid_request");
    expect(repeated.errors[0]).toMatchObject({ field: "body.d", message: "appears more than once" });
    const requestTwice = checkForm({ items: [{ file: "d", subject_reference: "alice" }] }, { d: signaturePng(11, 1) });
    requestTwice.append("request", JSON.stringify({ items: [{ file: "d", subject_reference: "bob" }] }));
    expect((await expectProblem(await postCheck(org.apiKey, requestTwice), 400)).errors[0].field).toBe("body.request");
    const badJson = new FormData();
    badJson.append("request", "{not json");
    expect((await expectProblem(await postCheck(org.apiKey, badJson), 400)).detail).toContain("request");
    // The Idempotency-Key is the job id unless request.job_id is given: it must then be an identifier.
    const problem = await expectProblem(await postCheck(org.apiKey, one(), { idem: "not:an:id" }), 400);
    expect(problem.errors[0].field).toBe("body.request.job_id");
    expect((await api("/sig/checks", { method: "POST", key: org.apiKey, body: one() })).status).toBe(400);
  });

  it("415 for a body or a document of the wrong type, 422 for a corrupt document, 413 for an oversized body", async () => {
    const text = await api("/sig/checks", {
      method: "POST",
      key: org.apiKey,
      body: "hello",
      headers: { "Content-Type": "text/plain", "Idempotency-Key": "t-415" },
    });
    await expectProblem(text, 415);
    const gif = new TextEncoder().encode("GIF89a....................");
    await expectProblem(await postCheck(org.apiKey, checkForm({ items: [{ file: "d", subject_reference: "alice" }] }, { d: gif })), 415);
    const corrupt = signaturePng(11, 1).slice(0, 80);
    const problem = await expectProblem(
      await postCheck(org.apiKey, checkForm({ items: [{ file: "d", subject_reference: "alice" }] }, { d: corrupt })),
      422,
    );
    expect(problem.detail).toContain("body.request.items.0.file");
    const huge = new Uint8Array(52 * 1024 * 1024);
    await expectProblem(
      await postCheck(org.apiKey, checkForm({ items: [{ file: "d", subject_reference: "alice" }] }, { d: huge })),
      413,
      "too_large",
    );
  });

  it("421 on another region's address", async () => {
    await expectProblem(
      await postCheck(org.apiKey, one(), { headers: {} }).then(() => api("/sig/checks/x", { key: org.apiKey, base: REGION_BASE.eu })),
      421,
      "wrong_region",
    );
  });
});

describe("URL inputs", () => {
  it("fetches each URL once from the allowlisted host and checks it", async () => {
    const path = uniquePath("doc.png");
    await registerOutside(path, { body_base64: toBase64(signaturePng(11, 5)), headers: { "content-type": "image/png" } });
    const res = await postCheck(org.apiKey, {
      job_id: "url-1",
      items: [
        { file: { url: outsideUrl(path) }, subject_reference: "alice" },
        { file: { url: outsideUrl(path) }, subject_reference: "alice", references: [{ url: outsideUrl(path) }] },
      ],
    });
    expect(res.status).toBe(202);
    const job = await waitForJob(org.apiKey, "url-1");
    expect(job.results.map((r) => r.file_name)).toEqual(["doc.png", "doc.png"]);
    expect(job.results.every((r) => r.decision !== null)).toBe(true);
    expect(job.results[1].best_match?.ref_id).toBe("references[0]");
    expect(await outsideRequests(path)).toHaveLength(1);
  });

  it("takes {url} inputs in a multipart body too, beside file parts, fetching each URL once", async () => {
    const path = uniquePath("mixed.png");
    await registerOutside(path, { body_base64: toBase64(signaturePng(11, 5)), headers: { "content-type": "image/png" } });
    const res = await postCheck(
      org.apiKey,
      checkForm(
        {
          job_id: "url-mp-1",
          items: [
            { file: { url: outsideUrl(path) }, subject_reference: "alice" },
            { file: "d", references: [{ url: outsideUrl(path) }, "r"] },
          ],
        },
        { d: signaturePng(11, 6), r: signaturePng(11, 1) },
      ),
    );
    expect(res.status, await res.clone().text()).toBe(202);
    const job = await waitForJob(org.apiKey, "url-mp-1");
    expect(job.results.map((r) => r.file_name)).toEqual(["mixed.png", "d.png"]);
    expect(job.results.every((r) => r.decision !== null)).toBe(true);
    expect(await outsideRequests(path)).toHaveLength(1);

    // Refused like a JSON body's URL (400 naming the member), and nothing is stored.
    const problem = await expectProblem(
      await postCheck(
        org.apiKey,
        checkForm(
          { job_id: "url-mp-2", items: [{ file: "d", references: [{ url: "https://elsewhere.example/a.png" }] }] },
          { d: signaturePng(11, 6) },
        ),
      ),
      400,
      "invalid_request",
    );
    expect(problem.errors?.[0]?.field).toBe("body.request.items.0.references.0.url");
    expect((await api("/sig/checks/url-mp-2", { key: org.apiKey })).status).toBe(404);
  });

  it("refuses a host outside the allowlist with 400 and stores nothing", async () => {
    const problem = await expectProblem(
      await postCheck(org.apiKey, {
        job_id: "url-2",
        items: [{ file: { url: "https://elsewhere.example/a.png" }, subject_reference: "alice" }],
      }),
      400,
    );
    expect(problem.errors[0].field).toBe("body.items.0.file.url");
    expect((await api("/sig/checks/url-2", { key: org.apiKey })).status).toBe(404);
  });

  it("504 timeout with reason fetch_deadline when the shared deadline passes", async () => {
    const path = uniquePath("slow.png");
    await registerOutside(path, { delay_ms: 3000, body_base64: toBase64(signaturePng(11, 5)) });
    settings.URL_FETCH_DEADLINE_MS = "500";
    try {
      const problem = await expectProblem(
        await postCheck(org.apiKey, { items: [{ file: { url: outsideUrl(path) }, subject_reference: "alice" }] }),
        504,
        "timeout",
      );
      expect(problem.reason).toBe("fetch_deadline");
    } finally {
      delete settings.URL_FETCH_DEADLINE_MS;
    }
  });

  it("fetch_failed with reason body_stalled when the body stalls", async () => {
    const path = uniquePath("stall.png");
    // 1000 bytes, then nothing for far longer than the (injected, short) stall window.
    await registerOutside(path, { headers: { "content-type": "image/png" }, chunks: [{ size: 1000 }], stall: true, stall_ms: 15_000 });
    settings.URL_FETCH_STALL_WINDOW_MS = "200";
    try {
      const problem = await expectProblem(
        await postCheck(org.apiKey, { items: [{ file: { url: outsideUrl(path) }, subject_reference: "alice" }] }),
        502,
        "fetch_failed",
      );
      expect(problem.reason).toBe("body_stalled");
      expect(problem.detail).toContain("per 0.2 s");
    } finally {
      delete settings.URL_FETCH_STALL_WINDOW_MS;
    }
  });
});

describe("reading jobs", () => {
  it("answers an unknown or malformed job id with 404", async () => {
    await expectProblem(await api("/sig/checks/no-such-job", { key: org.apiKey }), 404, "not_found");
    await expectProblem(await api("/sig/checks/..", { key: org.apiKey }), 404);
  });

  it("keeps a synchronous result readable as its job", async () => {
    const res = await postCheck(org.apiKey, one({ reference: "ref-9" }), { idem: "read-1" });
    const result = (await res.json()) as CheckResultBody;
    const job = await waitForJob(org.apiKey, "read-1");
    expect(job).toMatchObject({ status: "completed", item_count: 1, completed_items: 1 });
    // The job read adds the item's review (a reviewer's verdict, docs/learning.md): none yet.
    expect(job.results[0]).toEqual({ ...result, review: null });
  });
});

describe("OpenAPI", () => {
  it("documents the check routes with CheckRequest, CheckResult, CheckAccepted, Job and Usage", async () => {
    const res = await api("/openapi.json");
    expect(res.status).toBe(200);
    const doc = (await res.json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    for (const name of ["CheckRequest", "CheckResult", "CheckAccepted", "Job", "Usage"])
      expect(Object.keys(doc.components.schemas)).toContain(name);
    expect(Object.keys(doc.components.schemas.CheckRequest.properties!)).toEqual(
      expect.arrayContaining(["items", "policy", "metadata", "job_id"]),
    );
    expect(Object.keys(doc.paths["/sig/checks"].post.responses)).toEqual(
      expect.arrayContaining(["200", "202", "402", "409", "429", "503", "504"]),
    );
    expect(doc.paths["/sig/checks/{job_id}"].get).toBeDefined();
    expect(doc.paths["/sig/checks/{job_id}/items/{index}/image"].get).toBeDefined();
    expect(doc.paths["/sig/usage"].get).toBeDefined();
  });
});
