import { describe, expect, it } from "vitest";
import { api, createOrg } from "../helpers/tenant";

/**
 * Who the caller is comes before what the body should have been: a caller without a valid credential gets
 * 401, and one without the route's permission 403, before a route's media type (415) or its own size limit
 * (413) is checked. Only the service's overall maximum (51 MB) is refused before anything else, as a front
 * proxy would.
 */
describe("the order of refusals", () => {
  it("answers 401 before 415 or a route's 413, and 403 before them", async () => {
    const text = { "Content-Type": "text/plain" };
    const cases: [string, string, RequestInit][] = [
      ["PUT", "/sig/policies/p", { headers: text, body: "x" }],
      ["PUT", "/sig/subjects/s/references", { headers: text, body: "x" }],
      ["POST", "/sig/templates", { headers: { ...text, "Idempotency-Key": "k1" }, body: "x" }],
      // Over the policy route's 64 KiB, far under the service's maximum.
      ["PUT", "/sig/policies/p", { headers: { "Content-Type": "application/json" }, body: " ".repeat(70 * 1024) }],
    ];
    const outsider = await createOrg({ permissions: ["sig:checks:read"] });
    for (const [method, path, init] of cases) {
      const anonymous = await api(path, { method, ...init });
      expect([method, path, anonymous.status]).toEqual([method, path, 401]);
      expect(((await anonymous.json()) as { code: string }).code).toBe("unauthorized");
      const invalid = await api(path, { method, ...init, key: "sk_live_not_a_key" });
      expect([method, path, invalid.status]).toEqual([method, path, 401]);
      const denied = await api(path, { method, ...init, key: outsider.apiKey });
      expect([method, path, denied.status]).toEqual([method, path, 403]);
      expect(((await denied.json()) as { code: string }).code).toBe("permission_denied");
    }
    // With the credential and the permission, the body's rules answer.
    const org = await createOrg();
    for (const [method, path, init] of cases) {
      const res = await api(path, { method, ...init, key: org.apiKey });
      expect([method, path, res.status]).toEqual([method, path, init.body === "x" ? 415 : 413]);
    }
  });
});
