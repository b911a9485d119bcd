import { env } from "cloudflare:workers";
import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { ConfigError, DEFAULTS, configOf, parseConfig } from "../../src/config";
import worker from "../../src/index";

const raw = env as unknown as Record<string, unknown>;

function issuesOf(overrides: Record<string, unknown>): string[] {
  try {
    parseConfig({ ...raw, ...overrides });
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
  return [];
}

describe("configuration", () => {
  it("parses the test environment into a typed Config, with production timings where nothing is set", () => {
    const config = parseConfig(raw);
    expect(config.regionHosts).toEqual({ us: "us.api.countersign.localhost", eu: "eu.api.countersign.localhost" });
    expect(config.jwt.jwksUrl).toBe(`${env.TEST_OUTSIDE_URL}/jwks.json`);
    expect(config.jwt.jwksInline).toBeNull();
    expect(config.insecureFetchHosts).toEqual([new URL(env.TEST_OUTSIDE_URL).host, new URL(env.TEST_CLOSED_URL).host]);
    expect(config.checks).toEqual({
      itemBudgetMs: DEFAULTS.checkItemBudgetMs,
      capacity: DEFAULTS.checkCapacity,
      keepAliveMs: DEFAULTS.checkKeepAliveMs,
    });
    expect(config.urlFetch).toEqual({ deadlineMs: DEFAULTS.urlFetchDeadlineMs, stallWindowMs: DEFAULTS.urlFetchStallWindowMs });
    expect(config.live.timings).toEqual({ idleMs: 60_000, maxMs: 600_000, recheckMs: 30_000 });
    expect(config.live.limits).toEqual({ tenant: 20, instance: 200 });
    expect(config.webhooks.devHosts).toEqual([new URL(env.TEST_OUTSIDE_URL).host]);
    expect(config.webhooks.retry.delaysS).toEqual([0, 0]);
    // Without CURSOR_SECRET, cursors are keyed from the operator secret.
    expect(config.cursorSecret).toBe(env.OPERATOR_TOKEN);
  });

  it("refuses a live re-check slower than the spec's 30 s and a malformed webhook schedule, naming each", () => {
    expect(() => parseConfig({ ...raw, LIVE_RECHECK_MS: "45000", WEBHOOK_RETRY_SCHEDULE: "10,soon" })).toThrow(
      /LIVE_RECHECK_MS[\s\S]*WEBHOOK_RETRY_SCHEDULE|WEBHOOK_RETRY_SCHEDULE[\s\S]*LIVE_RECHECK_MS/,
    );
  });

  it("takes timings as strings (wrangler vars) or numbers (bindings), and CURSOR_SECRET over the operator secret", () => {
    const config = parseConfig({ ...raw, CHECK_CAPACITY: "0", URL_FETCH_STALL_WINDOW_MS: 250, CURSOR_SECRET: "a-dedicated-cursor-secret" });
    expect(config.checks.capacity).toBe(0);
    expect(config.urlFetch.stallWindowMs).toBe(250);
    expect(config.cursorSecret).toBe("a-dedicated-cursor-secret");
  });

  it("refuses bad values, naming every bad variable at once", () => {
    const issues = issuesOf({
      CHECK_CAPACITY: "-1",
      CHECK_ITEM_BUDGET_MS: "soon",
      URL_FETCH_STALL_WINDOW_MS: "1.5",
      REGION_HOSTS: '{"us":"https://us.example.com"}',
      DOCS_URL: "docs",
      OPERATOR_TOKEN: "",
      JWKS_INLINE: '{"keys":3}',
      CURSOR_SECRET: "short",
    });
    const named = issues.map((i) => i.split(" ")[0]).sort();
    expect(named).toEqual([
      "CHECK_CAPACITY",
      "CHECK_ITEM_BUDGET_MS",
      "CURSOR_SECRET",
      "DOCS_URL",
      "JWKS_INLINE",
      "OPERATOR_TOKEN",
      "REGION_HOSTS",
      "URL_FETCH_STALL_WINDOW_MS",
    ]);
    expect(issues.find((i) => i.startsWith("CHECK_CAPACITY"))).toContain("at least 0");
    expect(issues.find((i) => i.startsWith("REGION_HOSTS"))).toContain("bare host name");
  });

  it("refuses REGION_HOSTS that is not JSON, or names a region that does not exist", () => {
    expect(issuesOf({ REGION_HOSTS: "{us:" })[0]).toMatch(/^REGION_HOSTS must be JSON/);
    expect(issuesOf({ REGION_HOSTS: '{"mars":"mars.example.com"}' })[0]).toMatch(/^REGION_HOSTS/);
  });

  it("parses once per env and again when a variable on it changes", () => {
    const own = { ...raw } as unknown as typeof env;
    const first = configOf(own);
    expect(configOf(own)).toBe(first);
    (own as unknown as Record<string, unknown>).CHECK_KEEPALIVE_MS = "15";
    expect(configOf(own).checks.keepAliveMs).toBe(15);
  });

  it("answers every request 500 before any handler runs when the configuration is bad", async () => {
    const bad = { ...raw, CHECK_CAPACITY: "many" } as unknown as typeof env;
    const ctx = createExecutionContext();
    const res = await worker.fetch(new Request("https://api.countersign.localhost/health"), bad, ctx);
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(500);
    expect(res.headers.get("Content-Type")).toBe("application/problem+json");
    const body = (await res.json()) as { code: string; detail: string };
    expect(body.code).toBe("internal_error");
    // The details are the operator's, not the caller's.
    expect(body.detail).not.toContain("CHECK_CAPACITY");
    // The headers every response carries (spec 4.1, part 9), though no middleware ran.
    expect(res.headers.get("X-Request-Id")).toMatch(/^req_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(res.headers.get("Service-Version")).toBe("2026-09-27");
    expect(res.headers.get("Service-Latest-Version")).toBe("2026-09-27");
    const echoed = await worker.fetch(
      new Request("https://api.countersign.localhost/health", { headers: { "X-Request-Id": "caller.id-1" } }),
      bad,
      createExecutionContext(),
    );
    expect(echoed.headers.get("X-Request-Id")).toBe("caller.id-1");
    expect(((await echoed.json()) as { request_id: string }).request_id).toBe("caller.id-1");
    // The same request on the good configuration is served.
    const ok = await worker.fetch(new Request("https://api.countersign.localhost/health"), env, createExecutionContext());
    expect(ok.status).toBe(200);
  });
});
