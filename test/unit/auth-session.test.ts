import { env } from "cloudflare:workers";
import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { authenticate } from "../../src/http/auth";
import type { AppEnv } from "../../src/http/context";
import { isProblemError } from "../../src/http/problem";
import { resolveRules } from "../../src/http/route";

// Session tokens are recognised by prefix; issuing them is tested in test/integration/sessions.test.ts.
function appFor(credentials: ("api_key" | "user" | "session")[]) {
  const app = new Hono<AppEnv>();
  app.onError((err, c) => (isProblemError(err) ? c.json({ code: err.code, detail: err.detail }, err.status as 401) : c.text("boom", 500)));
  app.get("/x", authenticate(resolveRules("get", { permission: "sig:checks:create", credentials })), (c) => c.text("ok"));
  return app;
}

describe("session tokens", () => {
  it("are refused with 401 on routes that do not take them, saying where they are accepted", async () => {
    const res = await appFor(["api_key", "user"]).request("/x", { headers: { Authorization: "Bearer svc_ses_abc" } }, env);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/accepted only on GET \/sig\/live/);
  });

  it("are refused with 401 on routes that take them when malformed or unknown", async () => {
    const res = await appFor(["api_key", "user", "session"]).request("/x", { headers: { Authorization: "Bearer svc_ses_abc" } }, env);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/session token is malformed/);
    const unknown = `svc_ses_1u${"A".repeat(48)}`;
    const res2 = await appFor(["api_key", "user", "session"]).request("/x", { headers: { Authorization: `Bearer ${unknown}` } }, env);
    expect(res2.status).toBe(401);
    expect(((await res2.json()) as { detail: string }).detail).toMatch(/session token is not valid/);
  });
});
