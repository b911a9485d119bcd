import { Hono } from "hono";
import { env as workerEnv, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { AppEnv } from "../../src/http/context";
import type { Tenant } from "../../src/domain/tenancy";
import { ProblemError, isProblemError, renderProblem } from "../../src/http/problem";
import { requestId } from "../../src/http/request-id";
import { pinnedVersion, versioning } from "../../src/http/versioning";
import { REGISTRY, versionProblem, versionStatus } from "../../src/versions/registry";
import { renderForVersion } from "../../src/versions/render";
import type { VersionRegistry } from "../../src/versions/types";

/**
 * A registry made up for the test: the latest shape has `amount_cents` (renamed from `amount` in
 * 2026-01-01) and a structured `name` (a string `full_name` before 2025-06-01).
 */
const TEST_REGISTRY: VersionRegistry = {
  versions: [{ date: "2026-09-27" }, { date: "2026-01-01" }, { date: "2025-06-01" }, { date: "2024-01-01", sunset: "2025-01-01" }],
  changes: [
    {
      version: "2025-06-01",
      description: "name became an object",
      routes: ["GET /things/:id"],
      resources: ["thing"],
      down: (b) => {
        const { name, ...rest } = b as { name: { first: string; last: string } };
        return { ...rest, full_name: `${name.first} ${name.last}` };
      },
    },
    {
      version: "2026-01-01",
      description: "amount renamed amount_cents",
      routes: ["GET /things/:id"],
      resources: ["thing"],
      down: (b) => {
        const { amount_cents, ...rest } = b as { amount_cents: number };
        return { ...rest, amount: amount_cents };
      },
    },
  ],
};

const NOW = new Date("2026-11-22T00:00:00Z");
const DOCS = "https://docs.example.test";

function testApp() {
  const app = new Hono<AppEnv>();
  app.use("*", requestId());
  app.use("*", versioning({ registry: TEST_REGISTRY, now: () => NOW }));
  // Stands in for tenancy: the organisation's pin, known only once the request is authenticated.
  app.use("*", async (c, next) => {
    const pin = c.req.header("X-Test-Pin");
    if (pin) c.set("tenant", { org: { pinnedVersion: pin } } as unknown as Tenant);
    await next();
  });
  app.get("/things/:id", (c) => c.json({ id: c.req.param("id"), amount_cents: 250, name: { first: "Ada", last: "Lovelace" } }));
  app.get("/other", (c) => c.json({ amount_cents: 1 }));
  app.get("/seen", pinnedVersion({ registry: TEST_REGISTRY, now: () => NOW }), (c) => c.json({ version: c.get("version") }));
  app.get("/fail", () => {
    throw new ProblemError("not_found", "nothing here");
  });
  app.onError((err, c) => renderProblem(isProblemError(err) ? err : new ProblemError("internal_error", "x"), DOCS, c.get("requestId")));
  // The Worker's own (valid) environment, with this test's docs address: middleware reads it through configOf.
  const env = { ...workerEnv, DOCS_URL: DOCS };
  return (path: string, headers: Record<string, string> = {}) => app.request(path, { headers }, env);
}

describe("version registry", () => {
  it("derives deprecation from the next version and sunset 24 months later", () => {
    expect(versionStatus("2026-09-27", NOW, TEST_REGISTRY)).toEqual({ status: "current" });
    expect(versionStatus("2026-01-01", NOW, TEST_REGISTRY)).toEqual({
      status: "deprecated",
      deprecatedAt: "2026-09-27",
      sunset: "2028-09-27",
    });
    expect(versionStatus("2024-01-01", NOW, TEST_REGISTRY)).toMatchObject({ status: "sunset", sunset: "2025-01-01" });
    expect(versionStatus("2023-05-05", NOW, TEST_REGISTRY)).toBeNull();
  });

  it("refuses malformed, unknown and sunset versions", () => {
    expect(versionProblem("2026-9-27", NOW, TEST_REGISTRY)).toMatch(/YYYY-MM-DD/);
    expect(versionProblem("2026-13-45", NOW, TEST_REGISTRY)).toMatch(/YYYY-MM-DD/);
    expect(versionProblem("2023-05-05", NOW, TEST_REGISTRY)).toMatch(/not a known version/);
    expect(versionProblem("2024-01-01", NOW, TEST_REGISTRY)).toMatch(/sunset/);
    expect(versionProblem("2025-06-01", NOW, TEST_REGISTRY)).toBeNull();
  });

  it("the production registry's current version is 2026-09-27", () => {
    expect(REGISTRY.versions[0].date).toBe("2026-09-27");
    expect(versionStatus("2026-09-27", new Date(), REGISTRY)).toEqual({ status: "current" });
  });
});

describe("renderForVersion", () => {
  const latest = { id: "t1", amount_cents: 250, name: { first: "Ada", last: "Lovelace" } };

  it("applies every change newer than the version, newest first", () => {
    expect(renderForVersion("thing", latest, "2026-09-27", TEST_REGISTRY)).toEqual(latest);
    // A change belongs to the version that introduced it: 2026-01-01 already has amount_cents.
    expect(renderForVersion("thing", latest, "2026-01-01", TEST_REGISTRY)).toEqual(latest);
    expect(renderForVersion("thing", latest, "2025-06-01", TEST_REGISTRY)).toEqual({ id: "t1", amount: 250, name: latest.name });
    expect(renderForVersion("thing", latest, "2024-01-01", TEST_REGISTRY)).toEqual({ id: "t1", amount: 250, full_name: "Ada Lovelace" });
  });

  it("leaves other resource types alone", () => {
    expect(renderForVersion("other", latest, "2024-01-01", TEST_REGISTRY)).toEqual(latest);
  });
});

describe("versioning middleware", () => {
  const request = testApp();

  it("uses the latest version without a header or pin", async () => {
    const res = await request("/things/1");
    expect(res.headers.get("Service-Version")).toBe("2026-09-27");
    expect(res.headers.get("Service-Latest-Version")).toBe("2026-09-27");
    expect(res.headers.get("Deprecation")).toBeNull();
    expect(await res.json()).toEqual({ id: "1", amount_cents: 250, name: { first: "Ada", last: "Lovelace" } });
  });

  it("renders the pinned version and marks it deprecated", async () => {
    const res = await request("/things/1", { "X-Test-Pin": "2025-06-01" });
    expect(res.headers.get("Service-Version")).toBe("2025-06-01");
    expect(res.headers.get("Service-Latest-Version")).toBe("2026-09-27");
    expect(await res.json()).toEqual({ id: "1", amount: 250, name: { first: "Ada", last: "Lovelace" } });
    // Deprecated when 2026-01-01 replaced it, sunset 24 months later.
    expect(res.headers.get("Deprecation")).toBe(`@${Date.UTC(2026, 0, 1) / 1000}`);
    expect(res.headers.get("Sunset")).toBe("Sat, 01 Jan 2028 00:00:00 GMT");
    expect(res.headers.get("Link")).toBe(`<${DOCS}/changelog#2025-06-01>; rel="deprecation", <${DOCS}/upgrading#2025-06-01>; rel="sunset"`);
  });

  it("lets the header override the pin for one request", async () => {
    const res = await request("/things/1", { "X-Test-Pin": "2026-01-01", "Service-Version": "2025-06-01" });
    expect(res.headers.get("Service-Version")).toBe("2025-06-01");
    expect(await res.json()).toEqual({ id: "1", amount: 250, name: { first: "Ada", last: "Lovelace" } });
    const latest = await request("/things/1", { "X-Test-Pin": "2025-06-01", "Service-Version": "2026-09-27" });
    expect(latest.headers.get("Service-Version")).toBe("2026-09-27");
    expect(latest.headers.get("Deprecation")).toBeNull();
    expect(await latest.json()).toMatchObject({ amount_cents: 250 });
  });

  it("lets handlers see the pinned version once the tenant is known", async () => {
    expect(await (await request("/seen", { "X-Test-Pin": "2025-06-01" })).json()).toEqual({ version: "2025-06-01" });
    expect(await (await request("/seen", { "X-Test-Pin": "2025-06-01", "Service-Version": "2026-01-01" })).json()).toEqual({
      version: "2026-01-01",
    });
    // An unknown or sunset pin falls back to the latest version.
    expect(await (await request("/seen", { "X-Test-Pin": "2024-01-01" })).json()).toEqual({ version: "2026-09-27" });
  });

  it("transforms only the routes a change names", async () => {
    const res = await request("/other", { "Service-Version": "2025-06-01" });
    expect(await res.json()).toEqual({ amount_cents: 1 });
    expect(res.headers.get("Deprecation")).not.toBeNull();
  });

  it("answers 400 invalid_version for malformed, unknown or sunset versions, with the headers", async () => {
    for (const v of ["yesterday", "2026-09-27x", "2023-05-05", "2024-01-01"]) {
      const res = await request("/things/1", { "Service-Version": v });
      expect(res.status, v).toBe(400);
      expect(res.headers.get("Content-Type")).toBe("application/problem+json");
      const body = (await res.json()) as { code: string; errors: { field: string }[] };
      expect(body.code).toBe("invalid_version");
      expect(body.errors[0].field).toBe("Service-Version");
      expect(res.headers.get("Service-Version")).toBe("2026-09-27");
      expect(res.headers.get("Service-Latest-Version")).toBe("2026-09-27");
      expect(res.headers.get("X-Request-Id")).toMatch(/^req_/);
    }
  });

  it("stamps error responses too, in the version used", async () => {
    const res = await request("/fail", { "Service-Version": "2026-01-01" });
    expect(res.status).toBe(404);
    expect(res.headers.get("Service-Version")).toBe("2026-01-01");
    expect(res.headers.get("Deprecation")).not.toBeNull();
  });
});

describe("versioning in the Worker", () => {
  const base = "https://api.countersign.localhost";

  it("accepts the current version and refuses unknown ones on unauthenticated routes", async () => {
    const ok = await exports.default.fetch(`${base}/health`, { headers: { "Service-Version": "2026-09-27" } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("Service-Version")).toBe("2026-09-27");
    const bad = await exports.default.fetch(`${base}/health`, { headers: { "Service-Version": "2019-01-01" } });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { code: string }).code).toBe("invalid_version");
    expect(bad.headers.get("Service-Latest-Version")).toBe("2026-09-27");
    expect(bad.headers.get("X-Request-Id")).toMatch(/^req_/);
  });

  it("stamps a 404 for an unknown route", async () => {
    const res = await exports.default.fetch(`${base}/nope`);
    expect(res.status).toBe(404);
    expect(res.headers.get("Service-Version")).toBe("2026-09-27");
    expect(res.headers.get("Service-Latest-Version")).toBe("2026-09-27");
  });
});
