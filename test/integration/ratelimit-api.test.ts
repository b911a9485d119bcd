import { describe, expect, it } from "vitest";
import { api, createOrg } from "../helpers/tenant";

type Problem = { code: string; detail: string };

describe("rate limit through the Worker", () => {
  it("answers 429 rate_limited after the burst of 50, with Retry-After, and recovers after it", async () => {
    const { apiKey } = await createOrg({ permissions: ["org:read"] });
    const other = await createOrg({ permissions: ["org:read"] });
    // Sent at once: the bucket holds 50 and refills at 20/s while they are answered.
    const responses = await Promise.all(Array.from({ length: 90 }, () => api("/sig/policies", { key: apiKey })));
    const ok = responses.filter((r) => r.status === 200);
    const limited = responses.filter((r) => r.status === 429);
    expect(ok.length + limited.length).toBe(90);
    expect(ok.length).toBeGreaterThanOrEqual(50);
    expect(limited.length).toBeGreaterThan(0);

    const res = limited[0];
    // One token is at most 1/20 s away: Retry-After is the ceiling, 1 s.
    expect(res.headers.get("Retry-After")).toBe("1");
    expect(res.headers.get("Content-Type")).toBe("application/problem+json");
    expect(((await res.json()) as Problem).code).toBe("rate_limited");
    expect(res.headers.get("X-Request-Id")).toMatch(/^req_/);
    expect(res.headers.get("Service-Version")).toBe("2026-09-27");
    expect(res.headers.get("Service-Latest-Version")).toBe("2026-09-27");
    await Promise.all(responses.filter((r) => !r.bodyUsed).map((r) => r.body?.cancel()));

    // Another tenant has its own bucket.
    expect((await api("/sig/policies", { key: other.apiKey })).status).toBe(200);

    // Waiting the advertised time is enough.
    await new Promise((r) => setTimeout(r, 1000));
    expect((await api("/sig/policies", { key: apiKey })).status).toBe(200);
  });
});
