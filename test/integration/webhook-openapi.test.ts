/** The webhook catalogue and routes in the OpenAPI document, and the catalogue as the archive publish contract. */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { EVENT_KINDS, subscribableTypes } from "../../src/domain/webhook-events";
import { api, createOrg, operator } from "../helpers/tenant";
import { env } from "cloudflare:workers";

type Doc = {
  paths: Record<string, Record<string, { "x-permission"?: string; "x-idempotency"?: string; responses: Record<string, unknown> }>>;
  webhooks: Record<
    string,
    {
      post: { requestBody: { content: { "application/json": { schema: { $ref: string } } } }; parameters?: { name: string; in: string }[] };
    }
  >;
  components: { schemas: Record<string, { properties?: Record<string, { description?: string; items?: { enum?: string[] } }> }> };
};

type Body = { requestBody: { content: { "application/json": { schema: { $ref: string } } } } };

describe("webhooks in the OpenAPI document", () => {
  it("documents every event of the catalogue with its payload and signing headers, and the endpoint routes with their rules", async () => {
    const doc = (await (await exports.default.fetch("https://api.countersign.localhost/openapi.json")).json()) as Doc;
    expect(Object.keys(doc.webhooks).sort()).toEqual(EVENT_KINDS.map((k) => k.type).sort());
    for (const kind of EVENT_KINDS) {
      const op = doc.webhooks[kind.type].post;
      const ref = op.requestBody.content["application/json"].schema.$ref.split("/").pop()!;
      expect(doc.components.schemas[ref].properties, kind.type).toHaveProperty("data");
      expect(op.parameters?.map((p) => p.name)).toEqual(
        expect.arrayContaining(["Service-Webhook-Id", "Service-Webhook-Timestamp", "Service-Signature"]),
      );
    }
    expect(doc.components.schemas).toHaveProperty("JobEventData");
    expect(doc.components.schemas).toHaveProperty("CheckResult");
    expect(doc.paths["/sig/webhooks"].get["x-permission"]).toBe("org:read");
    expect(doc.paths["/sig/webhooks"].post["x-permission"]).toBe("sig:settings:manage");
    // Exempt from Idempotency-Key (spec 4.1), but a key sent is honoured.
    expect(doc.paths["/sig/webhooks"].post["x-idempotency"]).toBe("optional");
    expect(doc.paths["/sig/webhooks/{webhook_id}/rotate-secret"].post["x-idempotency"]).toBe("optional");
    expect(doc.paths["/sig/webhooks/{webhook_id}/attempts"].get["x-permission"]).toBe("org:read");
    expect(doc.paths["/archive/webhooks"].post["x-permission"]).toBe("archive:webhooks:manage");
    expect(doc.paths["/archive/webhooks/{webhook_id}"].delete.responses).toHaveProperty("204");
    expect(doc.paths["/platform/org/version"].put["x-permission"]).toBe("sig:settings:manage");
    expect(doc.paths["/platform/orgs/{org_id}/archive-events"].post["x-permission"]).toBe("operator");
  });

  it("refuses archive event data that does not match the catalogue, naming the member", async () => {
    const { orgId } = await createOrg();
    const res = await exports.default.fetch(`https://api.countersign.localhost/platform/orgs/${orgId}/archive-events`, {
      method: "POST",
      headers: { Authorization: `Bearer ${env.OPERATOR_TOKEN}`, "Content-Type": "application/json" },
      body: JSON.stringify({ type: "archive.hold.applied", data: { hold_id: "h" } }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { errors: { field: string }[] }).errors[0].field).toBe("body.data.record_id");
    const bad = await exports.default.fetch(`https://api.countersign.localhost/platform/orgs/${orgId}/archive-events`, {
      method: "POST",
      headers: { Authorization: `Bearer ${env.OPERATOR_TOKEN}`, "Content-Type": "application/json" },
      body: JSON.stringify({ type: "check.completed", data: { record_id: "r" } }),
    });
    expect(bad.status).toBe(400);
    expect(
      (
        await operator("POST", `/platform/orgs/${orgId}/archive-events`, {
          type: "archive.hold.applied",
          data: { record_id: "r", hold_id: "h" },
        })
      ).status,
    ).toBe(202);
  });

  it("documents, per product, the events an endpoint may choose; the server still answers any other with its own 400", async () => {
    const doc = (await (await exports.default.fetch("https://api.countersign.localhost/openapi.json")).json()) as Doc;
    const body = (path: string, method: string) => {
      const name = (doc.paths[path][method] as unknown as Body).requestBody.content["application/json"].schema.$ref.split("/").pop()!;
      return { name, events: doc.components.schemas[name].properties!.events };
    };
    const sigCreate = body("/sig/webhooks", "post");
    const sigUpdate = body("/sig/webhooks/{webhook_id}", "patch");
    const archiveCreate = body("/archive/webhooks", "post");
    expect(archiveCreate.name).not.toBe(sigCreate.name);
    for (const b of [sigCreate, sigUpdate]) {
      expect(b.events.items?.enum, b.name).toEqual(subscribableTypes("sig"));
      expect(b.events.description, b.name).toContain("check.completed");
    }
    expect(archiveCreate.events.items?.enum).toEqual(subscribableTypes("archive"));
    expect(archiveCreate.events.items?.enum).not.toContain("check.completed");
    expect(subscribableTypes("sig")).not.toContain("webhook.test");

    const { apiKey } = await createOrg();
    for (const [path, event] of [
      ["/sig/webhooks", "archive.record.filed"],
      ["/archive/webhooks", "check.completed"],
    ]) {
      const res = await api(path, {
        method: "POST",
        key: apiKey,
        json: { url: "https://hooks.example.com/x", events: [event] },
        headers: { "Idempotency-Key": `events-${path}` },
      });
      expect(res.status, path).toBe(400);
      const problem = (await res.json()) as { detail: string; errors: { field: string }[] };
      expect(problem.errors[0].field, path).toBe("body.events.0");
      expect(problem.detail, path).toMatch(/choose among/);
    }
  });
});
