import { exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";

type Op = {
  tags?: string[];
  parameters?: { $ref?: string; name?: string }[];
  security?: Record<string, string[]>[];
  responses: Record<string, { content?: Record<string, unknown>; headers?: Record<string, unknown> }>;
  "x-permission"?: string;
  "x-credentials"?: string[];
  "x-idempotency"?: string;
  requestBody?: unknown;
};
type Doc = {
  openapi: string;
  paths: Record<string, Record<string, Op>>;
  components: { securitySchemes: Record<string, unknown>; parameters: Record<string, unknown>; schemas: Record<string, unknown> };
  tags: { name: string }[];
};

let doc: Doc;
let operations: { method: string; path: string; op: Op }[];

beforeAll(async () => {
  const res = await exports.default.fetch("https://api.countersign.localhost/openapi.json");
  expect(res.status).toBe(200);
  doc = (await res.json()) as Doc;
  operations = Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ method, path, op })));
});

type Schema = {
  type?: string | string[];
  description?: string;
  $ref?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  required?: string[];
  enum?: string[];
  oneOf?: Schema[];
  allOf?: Schema[];
  format?: string;
  pattern?: string;
  minimum?: number;
  default?: unknown;
  additionalProperties?: Schema | boolean;
  patternProperties?: Record<string, Schema>;
  [key: `x-${string}`]: unknown;
};
const schema = (name: string) => doc.components.schemas[name] as Schema;
/** Members without a description (a member that is a reference takes its component's, or describes itself beside it in allOf). */
const undescribed = (s: Schema) =>
  Object.entries(s.properties ?? {})
    .filter(([, m]) => !m.description && !m.$ref && !m.allOf?.some((part) => part.description))
    .map(([name]) => name);

const param = (path: string, name: string) =>
  (doc.paths[path].get.parameters ?? []).find((p) => p.name === name) as { schema: Schema; description?: string } | undefined;

const refs = (op: Op) => (op.parameters ?? []).map((p) => p.$ref ?? p.name);
const isProblem = (r: { content?: Record<string, unknown> }) => r.content !== undefined && "application/problem+json" in r.content;

describe("GET /openapi.json", () => {
  it("is an OpenAPI 3.1 document with security schemes, common parameters and tags", () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.components.securitySchemes)).toEqual(expect.arrayContaining(["apiKey", "dashboardJwt", "operator"]));
    expect(Object.keys(doc.components.parameters)).toEqual(
      expect.arrayContaining(["ServiceVersion", "XRequestId", "ServiceOrg", "IdempotencyKey"]),
    );
    const declared = new Set(doc.tags.map((t) => t.name));
    for (const { op, method, path } of operations) {
      expect(op.tags?.length, `${method} ${path} has a tag`).toBeGreaterThan(0);
      for (const tag of op.tags ?? []) expect(declared.has(tag), `tag ${tag}`).toBe(true);
    }
  });

  it("lists every route the app serves", () => {
    const app = createApp();
    const served = app.routes
      // Pages (the API reference, the capture and reviewer pages) are not API operations.
      .filter(
        (r) =>
          r.method !== "ALL" &&
          r.path !== "/openapi.json" &&
          r.path !== "/docs" &&
          !r.path.startsWith("/review") &&
          !r.path.startsWith("/capture"),
      )
      .map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:([^/]+)/g, "{$1}")}`);
    const documented = new Set(operations.map((o) => `${o.method} ${o.path}`));
    expect(served.length).toBeGreaterThan(5);
    for (const route of new Set(served)) expect(documented.has(route), route).toBe(true);
  });

  it("gives every route its permission, its security, the common headers and its problem responses", () => {
    for (const { method, path, op } of operations) {
      const name = `${method} ${path}`;
      expect(op["x-permission"], name).toBeDefined();
      expect(refs(op), name).toEqual(
        expect.arrayContaining(["#/components/parameters/XRequestId", "#/components/parameters/ServiceVersion"]),
      );
      const problems = Object.entries(op.responses)
        .filter(([, r]) => isProblem(r))
        .map(([s]) => s);
      expect(problems, name).toContain("500");
      for (const response of Object.values(op.responses)) {
        expect(Object.keys(response.headers ?? {}), name).toEqual(
          expect.arrayContaining(["X-Request-Id", "Service-Version", "Service-Latest-Version"]),
        );
      }
      const permission = op["x-permission"]!;
      if (permission === "none") continue;
      expect(op.security?.length, name).toBeGreaterThan(0);
      expect(problems, name).toContain("401");
      if (permission === "operator") continue;
      expect(refs(op), name).toContain("#/components/parameters/ServiceOrg");
      expect(problems, name).toEqual(expect.arrayContaining(["400", "403", "421", "429"]));
      if (op["x-idempotency"] === "required") {
        // Session tokens send no key (spec 4.2 rule 6): where they are accepted it is not required of every caller.
        const key = op["x-credentials"]?.includes("session") ? "IdempotencyKeyExceptSessions" : "IdempotencyKey";
        expect(refs(op), name).toContain(`#/components/parameters/${key}`);
        expect(problems, name).toContain("409");
      }
      if (op["x-idempotency"] === "optional") {
        expect(refs(op), name).toContain("#/components/parameters/IdempotencyKeyOptional");
        expect(refs(op), name).not.toContain("#/components/parameters/IdempotencyKey");
        expect(problems, name).toContain("409");
      }
      if (op.requestBody) expect(problems, name).toEqual(expect.arrayContaining(["413", "415"]));
    }
  });

  it("documents the 400 of a bad Service-Version on every route, and the 404 of a bad Service-Org wherever it is taken", async () => {
    for (const { method, path, op } of operations) {
      expect(Object.keys(op.responses), `${method} ${path}`).toContain("400");
      if (refs(op).includes("#/components/parameters/ServiceOrg")) expect(Object.keys(op.responses), `${method} ${path}`).toContain("404");
    }
    // As served: an unauthenticated route refuses a malformed Service-Version.
    const res = await exports.default.fetch("https://api.countersign.localhost/health", { headers: { "Service-Version": "2026-13-45" } });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string }).code).toBe("invalid_version");
  });

  it("gives every problem response the Problem schema, by reference, and leaks no zod internals", () => {
    // Problem responses added after generation once carried the zod object's internals ({ def: ... }).
    expect(JSON.stringify(doc)).not.toMatch(/"def":/);
    for (const { method, path, op } of operations) {
      for (const [status, response] of Object.entries(op.responses)) {
        if (!isProblem(response)) continue;
        const media = response.content!["application/problem+json"] as { schema?: { $ref?: string } };
        expect(media.schema?.$ref, `${method} ${path} ${status}`).toBe("#/components/schemas/Problem");
      }
    }
    const problem = doc.components.schemas.Problem as { properties: Record<string, { description?: string; enum?: string[] }> };
    for (const [member, schema] of Object.entries(problem.properties)) expect(schema.description, member).toBeTruthy();
    // 408 is `timeout` (spec part 7); the catalogue lists only codes the service sends.
    expect(problem.properties.code.enum).toContain("timeout");
    expect(problem.properties.code.enum).not.toContain("request_timeout");
  });

  it("keeps named components as declared: Confirmed is an object, never null; image routes state their headers", () => {
    expect((doc.components.schemas.Confirmed as { type: unknown }).type).toBe("object");
    for (const path of ["/sig/checks/{job_id}/items/{index}/image", "/sig/subjects/{subject_reference}/references/{ref_id}/image"]) {
      expect(Object.keys(doc.paths[path].get.responses["200"].headers ?? {}), path).toEqual(
        expect.arrayContaining(["Cache-Control", "X-Content-Type-Options"]),
      );
    }
    expect(Object.keys(doc.paths["/sig/bucket-keys"].post.responses["201"].headers ?? {})).toContain("Cache-Control");
  });

  it("documents the DELETE of the reference named unlearn on its own path (spec 4.3)", () => {
    const item = doc.paths["/sig/subjects/{subject_reference}/references/unlearn"];
    expect(Object.keys(item).sort()).toEqual(["delete", "post"]);
    expect(item.delete["x-permission"]).toBe("sig:references:delete");
    expect(Object.keys(item.delete.responses)).toEqual(expect.arrayContaining(["204", "404"]));
  });

  it("documents the headers a response may carry: Link on deprecated versions, Idempotent-Replayed on replays", () => {
    for (const { method, path, op } of operations) {
      for (const [status, response] of Object.entries(op.responses)) {
        const headers = Object.keys(response.headers ?? {});
        expect(headers, `${method} ${path} ${status}`).toEqual(expect.arrayContaining(["Deprecation", "Sunset", "Link"]));
        if (op["x-idempotency"] !== undefined && op["x-idempotency"] !== "none" && status.startsWith("2"))
          expect(headers, `${method} ${path} ${status}`).toContain("Idempotent-Replayed");
      }
    }
  });

  it("documents POST /sig/checks's Idempotency-Key as not required of session tokens, and Retry-After on its 503 and 504", () => {
    const post = doc.paths["/sig/checks"].post;
    expect(post["x-credentials"]).toContain("session");
    expect(refs(post)).toContain("#/components/parameters/IdempotencyKeyExceptSessions");
    expect(refs(post)).not.toContain("#/components/parameters/IdempotencyKey");
    const param = doc.components.parameters.IdempotencyKeyExceptSessions as { name: string; required: boolean; description: string };
    expect(param).toMatchObject({ name: "Idempotency-Key", required: false });
    expect(param.description).toMatch(/session token sends none/);
    expect((doc.components.parameters.IdempotencyKey as { required: boolean }).required).toBe(true);
    for (const status of ["503", "504"]) expect(Object.keys(post.responses[status].headers ?? {}), status).toContain("Retry-After");
  });

  it("documents integer query parameters as integers with their bounds", () => {
    const ints = operations.flatMap(({ method, path, op }) =>
      (op.parameters ?? [])
        .filter((p) => p.name === "limit" || p.name === "signature")
        .map((p) => ({ name: `${method} ${path} ${p.name}`, schema: (p as { schema?: { type?: string; minimum?: number } }).schema })),
    );
    expect(ints.length).toBeGreaterThan(5);
    for (const { name, schema } of ints) {
      expect(schema?.type, name).toBe("integer");
      expect(schema?.minimum, name).toBeTypeOf("number");
    }
  });

  it("documents the policy routes with their permissions and the designed PolicySpec", () => {
    expect(doc.paths["/sig/policies"].get["x-permission"]).toBe("org:read");
    expect(doc.paths["/sig/policies/{name}"].get["x-permission"]).toBe("org:read");
    const put = doc.paths["/sig/policies/{name}"].put;
    expect(put["x-permission"]).toBe("sig:settings:manage");
    expect(Object.keys(put.responses)).toEqual(expect.arrayContaining(["200", "201", "400", "401", "403", "404", "413", "415", "429"]));
    expect(doc.components.schemas).toHaveProperty("PolicySpec");
    expect(doc.components.schemas).toHaveProperty("Policy");
    expect(doc.paths["/health"].get["x-permission"]).toBe("none");
  });

  it("documents the check stream: its framing, and each event's data as a named, described schema (spec 6.1)", () => {
    const media = doc.paths["/sig/checks"].post.responses["200"].content!["text/event-stream"] as { schema: Schema };
    expect(media.schema.type).toBe("string");
    expect(media.schema.description).toMatch(/event: <name>/);
    expect(media.schema.description).toMatch(/: keep-alive. is sent every 10 s/);
    const events = media.schema["x-events"] as Record<string, Schema>;
    expect(Object.keys(events)).toEqual(["received", "quality", "located", "comparing", "decision", "error"]);
    expect(events.decision.$ref).toBe("#/components/schemas/CheckResult");
    expect(events.error.$ref).toBe("#/components/schemas/Problem");
    for (const name of ["CheckStreamReceived", "CheckStreamQuality", "CheckStreamLocated", "CheckStreamComparing"]) {
      expect(
        Object.values(events).map((e) => e.$ref),
        name,
      ).toContain(`#/components/schemas/${name}`);
      expect(schema(name).description, name).toBeTruthy();
      expect(undescribed(schema(name)), name).toEqual([]);
    }
    // What create.ts sends (checks-stream.test.ts holds the stream to these members).
    expect(schema("CheckStreamReceived").required).toEqual(["job_id"]);
    expect(schema("CheckStreamQuality").required).toEqual(["page", "score", "cue", "figures"]);
    expect(schema("CheckStreamQuality").properties!.cue.enum).toContain("hold_steady");
    expect(undescribed(schema("QualityFigures"))).toEqual([]);
    expect(schema("CheckStreamLocated").properties!.signatures.items!.required).toEqual(["index", "page", "box", "confidence", "cut_off"]);
    expect(schema("CheckStreamComparing").required).toEqual(["reference_count"]);
    // One parsed record: a union over the event name.
    const records = schema("CheckStreamEvent").oneOf!;
    expect(records.map((r) => r.properties!.event.enum![0])).toEqual(Object.keys(events));
  });

  it("documents that UnlearnRequest takes exactly one of since or checks", () => {
    const unlearn = schema("UnlearnRequest");
    expect(Object.keys(unlearn.properties!).sort()).toEqual(["checks", "since"]);
    // A body matches a branch when it has the members the branch requires; exactly one branch must match.
    const matches = (body: object) => unlearn.oneOf!.filter((b) => (b.required ?? []).every((m) => m in body)).length;
    expect(matches({})).not.toBe(1);
    expect(matches({ since: "2026-01-01T00:00:00Z", checks: ["a/0"] })).not.toBe(1);
    expect(matches({ since: "2026-01-01T00:00:00Z" })).toBe(1);
    expect(matches({ checks: ["a/0"] })).toBe(1);
  });

  it("describes the enrolment and unlearn results, their members and the reasons a reference is rejected", () => {
    for (const name of ["Unlearned", "ReferencesResult", "ReferencesByUrl", "ReferenceOutcome"]) {
      expect(schema(name).description, name).toBeTruthy();
      expect(undescribed(schema(name)), name).toEqual([]);
    }
    const removed = schema("Unlearned").properties!.removed.items!;
    expect(undescribed(removed)).toEqual([]);
    expect(removed.properties!.learned_at.format).toBe("date-time");
    expect(undescribed(schema("ReferencesResult").properties!.counts)).toEqual([]);
    expect(undescribed(schema("ReferencesByUrl").properties!.references.items!)).toEqual([]);
    const reason = schema("ReferenceOutcome").properties!.reason.description!;
    expect(reason).not.toContain("...");
    // The reasons enrolment gives within the request (services/engine-live.ts); unreadable files fail the request.
    for (const r of ["no_signature", "unreadable"]) expect(reason).toContain(`\`${r}\``);
    expect(schema("ReferenceRecord").properties!.rejected_reason.description).toContain("processing_failed");
  });

  it("documents the query forms the server accepts: the usage period and the policy version", () => {
    const period = param("/sig/usage", "period")!.schema;
    expect(period.default).toBe("current");
    const pattern = new RegExp(period.pattern!);
    for (const ok of ["current", "2026-01", "2026-12", "0000-01"]) expect(pattern.test(ok), ok).toBe(true);
    for (const bad of ["", "now", "2026-1", "2026-13", "2026-00", "26-01", "2026-01-01"]) expect(pattern.test(bad), bad).toBe(false);

    const version = param("/sig/policies/{name}", "version")!.schema;
    expect(version).toMatchObject({ type: "integer", minimum: 1 });
    expect(version.pattern).toBeUndefined();
  });

  it("documents each list route's limit default, as the route applies it", () => {
    // Spec 8: result pages default to 100; the list routes' defaults are designed here, and documented.
    expect(param("/sig/checks/{job_id}", "limit")!.schema.default).toBe(100);
    expect(param("/sig/checks", "limit")!.schema.default).toBe(50);
    for (const { method, path, op } of operations) {
      const limit = (op.parameters ?? []).find((p) => p.name === "limit") as { schema: Schema } | undefined;
      if (!limit) continue;
      expect(limit.schema.default, `${method} ${path}`).toBeTypeOf("number");
      expect(limit.schema.description, `${method} ${path}`).toContain(`default ${limit.schema.default}`);
    }
  });

  it("describes PUT .../references's multipart form: file parts named by ref_id, text fields source.<ref_id>", () => {
    const body = doc.paths["/sig/subjects/{subject_reference}/references"].put.requestBody as {
      content: Record<string, { schema: Schema }>;
    };
    const form = body.content["multipart/form-data"].schema;
    expect(form.description).toMatch(/named by its ref_id/);
    expect(form.additionalProperties).toMatchObject({ type: "string", format: "binary" });
    const [pattern, source] = Object.entries(form.patternProperties ?? {})[0] ?? [];
    expect(new RegExp(pattern!).test("source.card-1")).toBe(true);
    expect(new RegExp(pattern!).test("card-1")).toBe(false);
    // A text field takes a source; a file part of that name is a reference all the same.
    const [text, file] = (source as { anyOf: Schema[] }).anyOf;
    expect(text.enum).toEqual(["signature_card", "confirmed_past", "unverified"]);
    expect(file).toMatchObject({ type: "string", format: "binary" });
    expect(body.content["application/json"].schema.$ref).toBe("#/components/schemas/ReferencesByUrl");
  });
});
