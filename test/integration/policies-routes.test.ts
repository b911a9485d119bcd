import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_POLICY_SPEC } from "../../src/domain/policy";
import { BASE, api, createOrg, type CreatedOrg } from "../helpers/tenant";

type PolicyBody = { name: string; version: number; spec: typeof DEFAULT_POLICY_SPEC; created_at: string; builtin: boolean };
type Problem = { code: string; status: number; detail: string; errors?: { field: string; message: string }[] };

const SPEC = {
  thresholds: { auto_approve: 0.95, approve: 0.75, flag: 0.5 },
  quality_floor: 0.3,
  min_references: 2,
  learning: { enabled: false, min_score: 0.9 },
};

let a: CreatedOrg;
let b: CreatedOrg;

// Fresh organisations for each test: each test stays well inside one tenant's rate limit.
beforeEach(async () => {
  a = await createOrg();
  b = await createOrg();
});

const put = (org: CreatedOrg, name: string, json: unknown) => api(`/sig/policies/${name}`, { method: "PUT", key: org.apiKey, json });

describe("policies", () => {
  it("every tenant has the built-in default policy, version 1", async () => {
    const res = await api("/sig/policies", { key: a.apiKey });
    expect(res.status).toBe(200);
    const { policies } = (await res.json()) as { policies: PolicyBody[] };
    expect(policies).toHaveLength(1);
    expect(policies[0]).toMatchObject({ name: "default", version: 1, builtin: true, spec: DEFAULT_POLICY_SPEC });

    const one = await api("/sig/policies/default", { key: a.apiKey });
    expect(one.status).toBe(200);
    expect(await one.json()).toMatchObject({ name: "default", version: 1, builtin: true });
  });

  it("PUT creates version 1 (201), an equal body returns it (200), a different body creates version 2", async () => {
    const first = await put(a, "strict", SPEC);
    expect(first.status).toBe(201);
    const v1 = (await first.json()) as PolicyBody;
    expect(v1).toMatchObject({ name: "strict", version: 1, spec: SPEC, builtin: false });
    expect(first.headers.get("Location")).toBe(`${BASE}/sig/policies/strict?version=1`);

    // Same meaning, different member order and number formatting.
    const reordered =
      '{"min_references":2.0,"learning":{"min_score":9e-1,"enabled":false},"quality_floor":0.30,"thresholds":{"flag":0.5,"approve":0.750,"auto_approve":0.95}}';
    const same = await api("/sig/policies/strict", {
      method: "PUT",
      key: a.apiKey,
      body: reordered,
      headers: { "Content-Type": "application/json" },
    });
    expect(same.status).toBe(200);
    expect(await same.json()).toEqual(v1);

    const changed = await put(a, "strict", { ...SPEC, min_references: 3 });
    expect(changed.status).toBe(201);
    expect(await changed.json()).toMatchObject({ version: 2, spec: { min_references: 3 } });

    // Versions are immutable: version 1 still reads as it was.
    const old = await api("/sig/policies/strict?version=1", { key: a.apiKey });
    expect(await old.json()).toEqual(v1);
    const latest = (await (await api("/sig/policies/strict", { key: a.apiKey })).json()) as PolicyBody;
    expect(latest.version).toBe(2);

    const { policies } = (await (await api("/sig/policies", { key: a.apiKey })).json()) as { policies: PolicyBody[] };
    expect(policies.map((p) => [p.name, p.version])).toEqual([
      ["strict", 2],
      ["default", 1],
    ]);
  });

  it("fills omitted members from the default, so an empty body equals the built-in default", async () => {
    const res = await put(a, "default", {});
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ name: "default", version: 1, builtin: true });
    const custom = await put(a, "default", { quality_floor: 0.5 });
    expect(custom.status).toBe(201);
    expect(await custom.json()).toMatchObject({ version: 2, spec: { ...DEFAULT_POLICY_SPEC, quality_floor: 0.5 } });
  });

  it("audits each new version as policy.update", async () => {
    await put(a, "audited", SPEC);
    await put(a, "audited", SPEC);
    const { results } = await env.DB_US.prepare("SELECT actor, action, target, detail FROM audit_log WHERE org_id = ? AND target = ?")
      .bind(a.orgId, "policy:audited")
      .all<{ actor: string; action: string; detail: string }>();
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ action: "policy.update", actor: `key:${a.keyId}` });
    expect(JSON.parse(results[0].detail)).toMatchObject({ version: 1 });
  });

  it("answers another tenant's policy exactly like a missing one", async () => {
    await put(a, "private-one", SPEC);
    const other = await api("/sig/policies/private-one", { key: b.apiKey });
    const missing = await api("/sig/policies/never-made", { key: b.apiKey });
    expect(other.status).toBe(404);
    expect(missing.status).toBe(404);
    const [o, m] = (await Promise.all([other.json(), missing.json()])) as Problem[];
    expect(o.code).toBe("not_found");
    expect(o.detail).toBe(m.detail);
    const { policies } = (await (await api("/sig/policies", { key: b.apiKey })).json()) as { policies: PolicyBody[] };
    expect(policies.map((p) => p.name)).toEqual(["default"]);
    // Writing the same name in b creates b's own version 1, leaving a's alone.
    expect((await put(b, "private-one", { ...SPEC, min_references: 5 })).status).toBe(201);
    const mine = (await (await api("/sig/policies/private-one", { key: a.apiKey })).json()) as PolicyBody;
    expect(mine.spec.min_references).toBe(2);
  });

  it("404 for an unknown version or a malformed name; 400 for a malformed version", async () => {
    await put(a, "versions", SPEC);
    expect((await api("/sig/policies/versions?version=7", { key: a.apiKey })).status).toBe(404);
    expect((await api("/sig/policies/default?version=2", { key: b.apiKey })).status).toBe(404);
    expect((await api("/sig/policies/bad%20name", { key: a.apiKey })).status).toBe(404);
    expect((await api("/sig/policies/..", { key: a.apiKey })).status).toBe(404);
    for (const v of ["0", "-1", "abc", "1.5"]) {
      const res = await api(`/sig/policies/versions?version=${v}`, { key: a.apiKey });
      expect(res.status, v).toBe(400);
      const body = (await res.json()) as Problem;
      expect(body.errors?.[0].field).toBe("query.version");
    }
  });

  it("validates the PolicySpec and names the offending member", async () => {
    const cases: [unknown, string][] = [
      [{ thresholds: { auto_approve: 1.2, approve: 0.7, flag: 0.4 } }, "body.thresholds.auto_approve"],
      [{ thresholds: { auto_approve: 0.6, approve: 0.7, flag: 0.4 } }, "body.thresholds.approve"],
      [{ thresholds: { auto_approve: 0.9, approve: 0.7, flag: 0.8 } }, "body.thresholds.flag"],
      [{ thresholds: { auto_approve: 0.9, approve: 0.7 } }, "body.thresholds.flag"],
      [{ quality_floor: "high" }, "body.quality_floor"],
      [{ min_references: 0 }, "body.min_references"],
      [{ min_references: 1.5 }, "body.min_references"],
      [{ learning: { enabled: "yes" } }, "body.learning.enabled"],
      [{ learning: { min_score: -0.1 } }, "body.learning.min_score"],
    ];
    for (const [json, field] of cases) {
      const res = await put(a, "invalid", json);
      expect(res.status, field).toBe(400);
      expect(res.headers.get("Content-Type")).toBe("application/problem+json");
      const body = (await res.json()) as Problem;
      expect(body.code).toBe("invalid_request");
      expect(body.errors?.[0].field, JSON.stringify(json)).toBe(field);
    }
    const unknown = await put(a, "invalid", { ...SPEC, surprise: true });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as Problem).detail).toContain("surprise");
    const nested = await put(a, "invalid", { learning: { enabled: true, extra: 1 } });
    expect(nested.status).toBe(400);
    expect(((await nested.json()) as Problem).errors?.[0].field).toBe("body.learning");
    // Nothing was published by the refused bodies.
    expect((await api("/sig/policies/invalid", { key: a.apiKey })).status).toBe(404);
  });

  it("refuses malformed JSON (400 naming body), other content types (415) and bodies over 64 KiB (413)", async () => {
    const malformed = await api("/sig/policies/p", {
      method: "PUT",
      key: a.apiKey,
      body: '{"thresholds":',
      headers: { "Content-Type": "application/json" },
    });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as Problem).errors?.[0].field).toBe("body");

    const text = await api("/sig/policies/p", { method: "PUT", key: a.apiKey, body: "{}", headers: { "Content-Type": "text/plain" } });
    expect(text.status).toBe(415);
    expect(((await text.json()) as Problem).code).toBe("unsupported_media_type");

    const big = await put(a, "p", { ...SPEC, padding: "x".repeat(70 * 1024) });
    expect(big.status).toBe(413);
    expect(((await big.json()) as Problem).code).toBe("too_large");
  });

  it("requires org:read to read and sig:settings:manage to publish", async () => {
    const reader = await createOrg({ permissions: ["org:read"] });
    expect((await api("/sig/policies", { key: reader.apiKey })).status).toBe(200);
    const denied = await put(reader, "x", SPEC);
    expect(denied.status).toBe(403);
    expect(((await denied.json()) as Problem).detail).toContain("sig:settings:manage");
    const writer = await createOrg({ permissions: ["sig:settings:manage"] });
    const denied2 = await api("/sig/policies", { key: writer.apiKey });
    expect(denied2.status).toBe(403);
    expect(((await denied2.json()) as Problem).detail).toContain("org:read");
    expect((await api("/sig/policies")).status).toBe(401);
  });
});
