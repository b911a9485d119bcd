import { env } from "cloudflare:workers";
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import worker from "../../src/index";
import { directory } from "../../src/storage/directory";
import { regionStore } from "../../src/storage/regions";
import { getLatestPolicy } from "../../src/storage/policies";
import { DEFAULT_POLICY_NAME } from "../../src/domain/policy";
import { liveCheckEngine } from "../../src/services/check-engine-live";
import { createJob, type PreparedItem } from "../../src/services/checks";
import { BASE, api, createOrg, operator, type CreatedOrg } from "../helpers/tenant";
import { checkForm, enrolWriter, expectProblem, postCheck, waitForJob } from "../helpers/checks";
import { BOX_SPEC, blankFormPng, otherForm, photographedForm, postTemplate, templateBody } from "../helpers/forms";
import { boxIoU, encodeJpeg, blankPage, toPdf } from "../fixtures/generator";

let org: CreatedOrg;
let other: CreatedOrg;
const blank = blankFormPng();
const WRITER = 21;

beforeAll(async () => {
  [org, other] = await Promise.all([createOrg(), createOrg()]);
  await enrolWriter(org.apiKey, "bob", WRITER, 4);
});

interface TemplateBody {
  template_id: string;
  name: string | null;
  boxes: { name: string; page: number; x: number; y: number; w: number; h: number }[];
  blank: { media_type: string; bytes: number; sha256: string; pages: { page: number; width: number; height: number }[] };
  created_at: string;
}

describe("template routes", () => {
  it("creates a template from a PNG blank: 201 with its boxes in pixels, Location, and an audit entry", async () => {
    const res = await postTemplate(
      org.apiKey,
      templateBody({ template_id: "loan-v3", name: "Loan v3", boxes: BOX_SPEC }, blank),
      "create-loan-v3",
    );
    const text = await res.text();
    expect(res.status, text).toBe(201);
    // Absolute, as the check route's Location is.
    expect(res.headers.get("Location")).toBe(`${BASE}/sig/templates/loan-v3`);
    const t = JSON.parse(text) as TemplateBody;
    expect(t).toMatchObject({
      template_id: "loan-v3",
      name: "Loan v3",
      blank: { media_type: "image/png", bytes: blank.byteLength, pages: [{ page: 1, width: 1240, height: 1754 }] },
    });
    expect(t.boxes).toEqual(BOX_SPEC);

    // Retrying the key replays the creation.
    const again = await postTemplate(
      org.apiKey,
      templateBody({ template_id: "loan-v3", name: "Loan v3", boxes: BOX_SPEC }, blank),
      "create-loan-v3",
    );
    expect(again.status).toBe(201);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");

    const audit = (await (await operator("GET", `/platform/orgs/${org.orgId}/audit`)).json()) as {
      entries: { action: string; target: string }[];
    };
    expect(audit.entries).toContainEqual(expect.objectContaining({ action: "template.create", target: "template:loan-v3" }));
  });

  it("stores the registration model once, beside the blank", async () => {
    const row = await env.DB_US.prepare("SELECT model_key, blank_key FROM templates WHERE org_id = ? AND template_id = 'loan-v3'")
      .bind(org.orgId)
      .first<{ model_key: string; blank_key: string }>();
    const model = (await (await env.FILES_US.get(row!.model_key))!.json()) as {
      pages: { page: number; names: string[]; model: { keypoints: number[]; zones: unknown[] } }[];
    };
    expect(model.pages).toHaveLength(1);
    expect(model.pages[0].names).toEqual(["borrower", "co_borrower"]);
    expect(model.pages[0].model.zones).toHaveLength(2);
    expect(model.pages[0].model.keypoints.length).toBeGreaterThan(400);
    expect((await env.FILES_US.head(row!.blank_key))?.size).toBe(blank.byteLength);
  });

  it("lists and reads templates; another tenant's is 404", async () => {
    const list = (await (await api("/sig/templates", { key: org.apiKey })).json()) as { templates: TemplateBody[] };
    expect(list.templates.map((t) => t.template_id)).toContain("loan-v3");
    const one = await api("/sig/templates/loan-v3", { key: org.apiKey });
    expect(one.status).toBe(200);
    expect(((await one.json()) as TemplateBody).boxes.map((b) => b.name)).toEqual(["borrower", "co_borrower"]);
    await expectProblem(await api("/sig/templates/loan-v3", { key: other.apiKey }), 404, "not_found");
    await expectProblem(await api("/sig/templates/nope", { key: org.apiKey }), 404, "not_found");
    expect(((await (await api("/sig/templates", { key: other.apiKey })).json()) as { templates: unknown[] }).templates).toEqual([]);
  });

  it("409 when the template id exists", async () => {
    const body = await expectProblem(
      await postTemplate(org.apiKey, templateBody({ template_id: "loan-v3", boxes: BOX_SPEC }, blank)),
      409,
      "conflict",
    );
    expect(body.detail).toMatch(/delete it first/);
  });

  it("takes boxes as fractions of the page, and the JSON part as a file typed application/json", async () => {
    const form = new FormData();
    const fractions = { template_id: "fractions", unit: "fraction", boxes: [{ name: "sig", page: 1, x: 0.1, y: 0.75, w: 0.4, h: 0.1 }] };
    form.append("template", new Blob([JSON.stringify(fractions)], { type: "application/json" }), "template.json");
    form.append("blank", new Blob([blank], { type: "image/png" }), "blank.png");
    const res = await postTemplate(org.apiKey, form);
    expect(res.status, await res.clone().text()).toBe(201);
    expect(((await res.json()) as TemplateBody).boxes).toEqual([{ name: "sig", page: 1, x: 124, y: 1316, w: 496, h: 175 }]);
  });

  it("takes a PDF blank", async () => {
    const pdf = await toPdf([{ png: blank }]);
    const res = await postTemplate(org.apiKey, templateBody({ template_id: "pdf-form", boxes: BOX_SPEC }, pdf, "application/pdf"));
    expect(res.status, await res.clone().text()).toBe(201);
    expect(((await res.json()) as TemplateBody).blank.media_type).toBe("application/pdf");
  });

  it("400 names what is wrong in the template part", async () => {
    const cases: [unknown, string][] = [
      [{ template_id: "x", boxes: [] }, "body.template.boxes"],
      [{ template_id: "../x", boxes: BOX_SPEC }, "body.template.template_id"],
      [{ template_id: "x", boxes: [BOX_SPEC[0], { ...BOX_SPEC[1], name: "borrower" }] }, "body.template.boxes.1.name"],
      [{ template_id: "x", boxes: [{ name: "a", page: 1, x: 5000, y: 10, w: 100, h: 100 }] }, "body.template.boxes.0"],
      [{ template_id: "x", boxes: [{ name: "a", page: 2, x: 10, y: 10, w: 100, h: 100 }] }, "body.template.boxes.0.page"],
      [{ template_id: "x", boxes: BOX_SPEC, colour: "red" }, "body.template"],
    ];
    for (const [template, field] of cases) {
      const body = await expectProblem(await postTemplate(org.apiKey, templateBody(template, blank)), 400);
      expect(body.errors?.[0]?.field, JSON.stringify(template)).toBe(field);
    }
    const noBlank = new FormData();
    noBlank.append("template", JSON.stringify({ template_id: "x", boxes: BOX_SPEC }));
    expect((await expectProblem(await postTemplate(org.apiKey, noBlank), 400)).errors[0].field).toBe("body.blank");
    const badJson = new FormData();
    badJson.append("template", "{not json");
    badJson.append("blank", new Blob([blank]), "b.png");
    expect((await expectProblem(await postTemplate(org.apiKey, badJson), 400)).errors[0].field).toBe("body.template");
    // Two blanks: which one would be registered must not depend on the order of the parts.
    const twoBlanks = templateBody({ template_id: "x", boxes: BOX_SPEC }, blank);
    twoBlanks.append("blank", new Blob([blank], { type: "image/png" }), "b2.png");
    expect((await expectProblem(await postTemplate(org.apiKey, twoBlanks), 400)).errors[0].field).toBe("body.blank");
  });

  it("415 for a blank that is not PNG or PDF, and for a body that is not multipart", async () => {
    const jpeg = encodeJpeg(blankPage(400, 400));
    const body = await expectProblem(
      await postTemplate(org.apiKey, templateBody({ template_id: "jpeg", boxes: BOX_SPEC }, jpeg, "image/jpeg")),
      415,
      "unsupported_media_type",
    );
    expect(body.detail).toMatch(/PNG or PDF/);
    await expectProblem(
      await api("/sig/templates", {
        method: "POST",
        key: org.apiKey,
        json: { template_id: "j", boxes: BOX_SPEC },
        headers: { "Idempotency-Key": "json-1" },
      }),
      415,
      "unsupported_media_type",
    );
  });

  it("413 for a blank over 20 MB", async () => {
    const big = new Uint8Array(20 * 1024 * 1024 + 1);
    big.set(blank.subarray(0, 64));
    await expectProblem(await postTemplate(org.apiKey, templateBody({ template_id: "big", boxes: BOX_SPEC }, big)), 413, "too_large");
    expect((await api("/sig/templates/big", { key: org.apiKey })).status).toBe(404);
  });

  it("needs sig:settings:manage to create and an Idempotency-Key", async () => {
    const reader = await createOrg({ permissions: ["org:read"] });
    await expectProblem(
      await postTemplate(reader.apiKey, templateBody({ template_id: "x", boxes: BOX_SPEC }, blank)),
      403,
      "permission_denied",
    );
    expect((await api("/sig/templates", { key: reader.apiKey })).status).toBe(200);
    const res = await api("/sig/templates", {
      method: "POST",
      key: org.apiKey,
      body: templateBody({ template_id: "x", boxes: BOX_SPEC }, blank),
    });
    expect(res.status).toBe(400);
  });

  it("409 once the tenant has 200 templates", async () => {
    const full = await createOrg();
    // 199 rows written directly: creating them through the route would take 199 requests of the rate limit.
    const now = new Date().toISOString();
    const rows = Array.from({ length: 199 }, (_, i) =>
      env.DB_US.prepare(
        "INSERT INTO templates (org_id, template_id, boxes, blank_key, blank_type, blank_bytes, blank_sha256, pages, model_key, created_by, created_at) VALUES (?, ?, '[]', 'k', 'image/png', 1, 'x', '[]', 'k', 'test', ?)",
      ).bind(full.orgId, `t${i}`, now),
    );
    await env.DB_US.batch(rows);
    const last = await postTemplate(full.apiKey, templateBody({ template_id: "t-200", boxes: BOX_SPEC }, blank));
    expect(last.status, await last.clone().text()).toBe(201);
    const over = await expectProblem(
      await postTemplate(full.apiKey, templateBody({ template_id: "t-201", boxes: BOX_SPEC }, blank)),
      409,
      "conflict",
    );
    expect(over.detail).toMatch(/200 templates/);
  });
});

describe("checks with a template", () => {
  it("finds the signature in the named box of a photographed form", async () => {
    const { png, inkBox } = photographedForm(WRITER, 1);
    const res = await postCheck(
      org.apiKey,
      checkForm({ items: [{ file: "doc", subject_reference: "bob", template_id: "loan-v3", input_type: "photo" }] }, { doc: png }),
    );
    const text = await res.text();
    expect(res.status, text).toBe(200);
    const result = JSON.parse(text);
    expect(result.template).toEqual({ template_id: "loan-v3", registered: true, pages: [{ page: 1, registered: true }], detail: null });
    expect(result.signatures).toHaveLength(1);
    expect(result.signatures[0].box_name).toBe("co_borrower");
    // The photo is turned 2 degrees about its centre: the found box still covers most of the ink.
    expect(boxIoU(result.signatures[0].box, inkBox)).toBeGreaterThan(0.6);
    expect(result.best_match.signature_index).toBe(0);
    // bob's references are clean images; the photo is out of focus and is compared in the blurred regime,
    // so his own signature is not failed (compared as captured, it was).
    expect(["FLAG", "APPROVE", "AUTO_APPROVE"]).toContain(result.decision);
  });

  it("falls back to the free search when the document does not register, and says so", async () => {
    const res = await postCheck(
      org.apiKey,
      checkForm({ items: [{ file: "doc", subject_reference: "bob", template_id: "loan-v3" }] }, { doc: otherForm(WRITER) }),
    );
    const text = await res.text();
    expect(res.status, text).toBe(200);
    const result = JSON.parse(text);
    expect(result.errors).toEqual([]);
    expect(result.template).toMatchObject({ template_id: "loan-v3", registered: false, pages: [{ page: 1, registered: false }] });
    expect(result.template.detail).toMatch(/did not register/);
    expect(result.signatures.length).toBeGreaterThan(0);
    expect(result.signatures.every((s: { box_name: string | null }) => s.box_name === null)).toBe(true);
    expect(result.decision).not.toBeNull();
  });

  it("400 for a template_id the tenant does not have", async () => {
    const body = await expectProblem(
      await postCheck(
        org.apiKey,
        checkForm({ items: [{ file: "doc", subject_reference: "bob", template_id: "nope" }] }, { doc: otherForm(WRITER) }),
      ),
      400,
    );
    expect(body.errors[0].field).toBe("body.request.items.0.template_id");
    await expectProblem(
      await postCheck(
        other.apiKey,
        checkForm({ items: [{ file: "doc", subject_reference: "bob", template_id: "loan-v3" }] }, { doc: otherForm(WRITER) }),
      ),
      400,
    );
  });

  it("a queued item whose template was deleted and created again under its id ends with template_not_found", async () => {
    const created = await postTemplate(org.apiKey, templateBody({ template_id: "swap-v1", boxes: BOX_SPEC }, blank));
    expect(created.status).toBe(201);

    // The job is created as POST /sig/checks creates it, but its messages are delivered below, by hand,
    // so the template can be replaced while its items wait in the queue.
    const tenant = (await directory(env.DIRECTORY).getOrg(org.orgId))!;
    const store = regionStore(env, tenant.region);
    const ctx = { env, org: tenant, store, engine: liveCheckEngine() };
    const policy = (await getLatestPolicy(store.db, tenant, DEFAULT_POLICY_NAME))!;
    const item = (index: number, templateId: string | null): PreparedItem => ({
      item: {
        index,
        file: { part: `doc${index}` },
        fileName: `doc${index}.png`,
        subjectReference: "bob",
        references: [],
        target: null,
        templateId,
        inputType: "photo",
        reference: null,
        process: null,
        metadata: null,
      },
      input: { bytes: photographedForm(WRITER, 1).png, contentType: "image/png", fileName: `doc${index}.png` },
      pages: 1,
      references: [],
    });
    const jobId = "tpl-swapped";
    await createJob(ctx, {
      jobId,
      mode: "queued",
      policy,
      metadata: null,
      actor: "test",
      items: [item(0, "swap-v1"), item(1, "swap-v1"), item(2, null)],
    });

    expect((await api("/sig/templates/swap-v1", { method: "DELETE", key: org.apiKey })).status).toBe(204);
    const again = await postTemplate(org.apiKey, templateBody({ template_id: "swap-v1", boxes: [BOX_SPEC[0]] }, blank));
    expect(again.status).toBe(201);

    const messages = [0, 1, 2].map((index) => ({
      id: `swap-${index}`,
      timestamp: new Date(),
      attempts: 1,
      body: { kind: "check_item", orgId: org.orgId, jobId, index },
    }));
    const batch = createMessageBatch("countersign-check-items", messages);
    const qctx = createExecutionContext();
    await worker.queue(batch, env, qctx);
    expect((await getQueueResult(batch, qctx)).explicitAcks.length).toBe(3);

    const job = await waitForJob(org.apiKey, jobId);
    expect(job.status).toBe("completed");
    for (const r of job.results.slice(0, 2)) {
      expect(r).toMatchObject({ decision: null, billable: false, errors: [{ code: "template_not_found" }] });
      expect(r.errors[0].detail).toMatch(/swap-v1 was deleted, or replaced, after the check was submitted/);
    }
    // The item that named no template is checked as usual.
    expect(job.results[2].errors).toEqual([]);
    expect(job.results[2].decision).not.toBeNull();
  });

  it("deletes a template and its files: 204, then 404", async () => {
    const row = await env.DB_US.prepare("SELECT model_key FROM templates WHERE org_id = ? AND template_id = 'fractions'")
      .bind(org.orgId)
      .first<{ model_key: string }>();
    expect((await api("/sig/templates/fractions", { method: "DELETE", key: org.apiKey })).status).toBe(204);
    expect(await env.FILES_US.head(row!.model_key)).toBeNull();
    await expectProblem(await api("/sig/templates/fractions", { key: org.apiKey }), 404);
    await expectProblem(await api("/sig/templates/fractions", { method: "DELETE", key: org.apiKey }), 404);
    await expectProblem(await api("/sig/templates/loan-v3", { method: "DELETE", key: other.apiKey }), 404);
    const audit = (await (await operator("GET", `/platform/orgs/${org.orgId}/audit`)).json()) as {
      entries: { action: string; target: string }[];
    };
    expect(audit.entries).toContainEqual(expect.objectContaining({ action: "template.delete", target: "template:fractions" }));
  });
});
