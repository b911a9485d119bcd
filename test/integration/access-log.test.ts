import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { api, createOrg } from "../helpers/tenant";

// The Worker runs in this isolate, so its console is this console: capture what it writes.
let lines: { method: string; text: string }[];
beforeEach(() => {
  lines = [];
  for (const method of ["log", "warn", "error"] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      lines.push({ method, text: args.map(String).join(" ") });
    });
  }
});
afterEach(() => {
  vi.restoreAllMocks();
});

type Line = Record<string, unknown>;
function jsonLines(): Line[] {
  return lines.map(({ text }) => {
    // Every line the request path writes is one JSON object.
    expect(() => JSON.parse(text), text).not.toThrow();
    return JSON.parse(text) as Line;
  });
}
const requestLines = (requestId: string) => jsonLines().filter((l) => l.msg === "request" && l.request_id === requestId);

describe("access log", () => {
  it("writes one JSON line per request carrying its X-Request-Id, route template, status and duration", async () => {
    const res = await api("/health", { headers: { "X-Request-Id": "log-health-1" } });
    expect(res.status).toBe(200);
    const mine = requestLines("log-health-1");
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ level: "info", method: "GET", route: "/health", status: 200, org_id: null });
    expect(typeof mine[0].duration_ms).toBe("number");
    expect(mine[0]).not.toHaveProperty("code");
  });

  it("names the organisation and the route template, never the raw path with its ids", async () => {
    const org = await createOrg();
    lines = [];
    const res = await api("/sig/subjects/nobody-here", { key: org.apiKey, headers: { "X-Request-Id": "log-subject-1" } });
    expect(res.status).toBe(404);
    const [line] = requestLines("log-subject-1");
    expect(line).toMatchObject({
      method: "GET",
      route: "/sig/subjects/:subject_reference",
      status: 404,
      org_id: org.orgId,
      code: "not_found",
    });
    expect(JSON.stringify(line)).not.toContain("nobody-here");
  });

  it("gives a refused request's problem code, and a minted request id when the caller sent none", async () => {
    const res = await api("/platform/me", { key: "svc_test_not-a-key" });
    expect(res.status).toBe(401);
    const id = res.headers.get("X-Request-Id")!;
    expect(id).toMatch(/^req_/);
    const [line] = requestLines(id);
    expect(line).toMatchObject({ route: "/platform/me", status: 401, code: "unauthorized", org_id: null });
  });

  it("logs a path no route serves without a route template", async () => {
    await api("/no/such/route", { headers: { "X-Request-Id": "log-404-1" } });
    expect(requestLines("log-404-1")).toEqual([expect.objectContaining({ route: null, status: 404, code: "not_found" })]);
  });
});
