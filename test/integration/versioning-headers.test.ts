import { describe, expect, it } from "vitest";
import { BASE, api, createOrg } from "../helpers/tenant";

type Problem = { code: string; errors?: { field: string }[] };

const expectCommon = (res: Response, version = "2026-09-27") => {
  expect(res.headers.get("Service-Version")).toBe(version);
  expect(res.headers.get("Service-Latest-Version")).toBe("2026-09-27");
  expect(res.headers.get("X-Request-Id")).toBeTruthy();
  // The current version is not deprecated.
  expect(res.headers.get("Deprecation")).toBeNull();
  expect(res.headers.get("Sunset")).toBeNull();
};

describe("headers on every response (spec 4.1, part 9)", () => {
  it("carries X-Request-Id, Service-Version and Service-Latest-Version on successes and on each kind of error", async () => {
    const { apiKey } = await createOrg({ permissions: ["org:read"] });
    const cases: [string, Response][] = [
      ["200", await api("/sig/policies", { key: apiKey })],
      ["401", await api("/sig/policies")],
      ["403", await api("/sig/policies/x", { key: apiKey, method: "PUT", json: {} })],
      ["404 route", await api("/sig/nothing-here", { key: apiKey })],
      ["404 resource", await api("/sig/policies/missing", { key: apiKey })],
      ["400", await api("/sig/policies/x?version=zero", { key: apiKey })],
      ["400 version", await api("/sig/policies", { key: apiKey, headers: { "Service-Version": "1999-01-01" } })],
    ];
    for (const [name, res] of cases) {
      expect(res.status, name).toBe(name === "200" ? 200 : Number(name.slice(0, 3)));
      expectCommon(res);
      if (res.status >= 400) expect(res.headers.get("Content-Type"), name).toBe("application/problem+json");
      await res.body?.cancel();
    }
  });

  it("echoes a well-formed X-Request-Id and replaces any other with req_<ulid>", async () => {
    const { apiKey } = await createOrg({ permissions: ["org:read"] });
    const good = ["a", "abc.DEF_123-xyz", "x".repeat(128)];
    for (const id of good) {
      const res = await api("/sig/policies", { key: apiKey, headers: { "X-Request-Id": id } });
      expect(res.headers.get("X-Request-Id")).toBe(id);
      const err = await api("/sig/policies/missing", { key: apiKey, headers: { "X-Request-Id": id } });
      expect(err.headers.get("X-Request-Id")).toBe(id);
      expect(((await err.json()) as { request_id?: string }).request_id).toBe(id);
    }
    for (const id of ["", "x".repeat(129), "has space", "slash/es", "per%cent"]) {
      const res = await api("/sig/policies", { key: apiKey, headers: { "X-Request-Id": id } });
      expect(res.headers.get("X-Request-Id")).toMatch(/^req_[0-9A-HJKMNP-TV-Z]{26}$/);
    }
  });

  it("uses the organisation's pin without a header, and the header when given", async () => {
    const { apiKey } = await createOrg({ permissions: ["org:read"], pinnedVersion: "2026-09-27" });
    expectCommon(await api("/sig/policies", { key: apiKey }));
    expectCommon(await api("/sig/policies", { key: apiKey, headers: { "Service-Version": "2026-09-27" } }));
  });

  it("refuses an unknown or malformed Service-Version with 400 invalid_version before authentication", async () => {
    for (const v of ["2020-01-01", "2026-09-27T00:00:00Z", "latest", "2026-02-30"]) {
      const res = await fetchNoKey("/sig/policies", { "Service-Version": v });
      expect(res.status, v).toBe(400);
      const body = (await res.json()) as Problem;
      expect(body.code).toBe("invalid_version");
      expect(body.errors?.[0].field).toBe("Service-Version");
      expectCommon(res);
    }
  });
});

async function fetchNoKey(path: string, headers: Record<string, string>): Promise<Response> {
  const { exports } = await import("cloudflare:workers");
  return exports.default.fetch(BASE + path, { headers });
}
