/**
 * The pure webhook rules: endpoint addresses, the retry schedule and the disable threshold, signing
 * (checked against the standardwebhooks library as the reference) and the version-pin rules, each with
 * an injected clock.
 */
import { describe, expect, it } from "vitest";
import { Webhook } from "standardwebhooks";
import { hostIsPublic, isPublicAddress, refuseWebhookUrl } from "../../src/domain/webhook-url";
import {
  DEFAULT_RETRY_DELAYS_S,
  MAX_QUEUE_DELAY_S,
  hopDelaySeconds,
  retryConfig,
  retryDelaySeconds,
  scheduledAttempts,
  shouldDisable,
} from "../../src/domain/webhook-retry";
import { PREVIOUS_SECRET_TTL_MS, newSigningSecret, signingHeaders } from "../../src/domain/webhook-signature";
import { EVENT_KINDS, deterministicEventId, productReceives, subscribableTypes } from "../../src/domain/webhook-events";
import { decidePinChange, rollbackAvailable, upgradeTargets } from "../../src/domain/version-pins";
import type { VersionRegistry } from "../../src/versions/types";

describe("endpoint addresses", () => {
  it("accepts https on public hosts only", () => {
    expect(refuseWebhookUrl("https://hooks.example.com/x")).toBeNull();
    expect(refuseWebhookUrl("https://93.184.216.34:8443/x")).toBeNull();
    expect(refuseWebhookUrl("https://[2606:4700::1111]/x")).toBeNull();
    expect(refuseWebhookUrl("http://hooks.example.com/x")).toBe("scheme_not_allowed");
    expect(refuseWebhookUrl("ftp://hooks.example.com/x")).toBe("scheme_not_allowed");
    expect(refuseWebhookUrl("https://a:b@hooks.example.com/")).toBe("credentials_in_url");
    expect(refuseWebhookUrl(`https://hooks.example.com/${"a".repeat(2100)}`)).toBe("too_long");
    for (const u of [
      "https://127.0.0.1/",
      "https://127.1/",
      "https://0177.0.0.1/",
      "https://0/",
      "https://[::]/",
      "https://100.64.0.1/",
      "https://224.0.0.1/",
      "https://printer.local/",
      "https://svc.internal/",
    ]) {
      expect(refuseWebhookUrl(u), u).toBe("host_not_public");
    }
  });

  it("lets the development setting reach its loopback host:port over http, and nothing else", () => {
    expect(refuseWebhookUrl("http://127.0.0.1:4000/h", ["127.0.0.1:4000"])).toBeNull();
    expect(refuseWebhookUrl("http://127.0.0.1:4001/h", ["127.0.0.1:4000"])).toBe("scheme_not_allowed");
    expect(refuseWebhookUrl("https://127.0.0.1:4001/h", ["127.0.0.1:4000"])).toBe("host_not_public");
  });

  it("judges resolved addresses: private, loopback, link-local, mapped and NAT64 forms are not public", () => {
    for (const ip of [
      "10.0.0.1",
      "172.31.255.255",
      "192.168.1.1",
      "169.254.169.254",
      "127.0.0.53",
      "::1",
      "fe80::1",
      "fc00::1",
      "::ffff:192.168.0.1",
      "64:ff9b::a00:1",
      "2001:db8::1",
      "ff02::1",
    ]) {
      expect(isPublicAddress(ip), ip).toBe(false);
    }
    for (const ip of ["1.1.1.1", "8.8.8.8", "2606:4700:4700::1111", "::ffff:1.1.1.1", "172.32.0.1"])
      expect(isPublicAddress(ip), ip).toBe(true);
    expect(hostIsPublic("localhost")).toBe(false);
    expect(hostIsPublic("hooks.example.com")).toBe(true);
  });
});

describe("retry schedule", () => {
  it("spreads eleven attempts over about three days, every step within what one queue message can be delayed or hopped", () => {
    const config = retryConfig({});
    expect(scheduledAttempts(config)).toBe(11);
    const total = DEFAULT_RETRY_DELAYS_S.reduce((a, b) => a + b, 0);
    expect(total / 86400).toBeGreaterThan(2.8);
    expect(total / 86400).toBeLessThan(3.1);
    // Exponential-ish: never shorter than the step before.
    for (let i = 1; i < DEFAULT_RETRY_DELAYS_S.length; i++)
      expect(DEFAULT_RETRY_DELAYS_S[i]).toBeGreaterThanOrEqual(DEFAULT_RETRY_DELAYS_S[i - 1]);
    expect(retryDelaySeconds(config, 1, 0.99)).toBe(10);
    expect(retryDelaySeconds(config, 9, 0)).toBe(86400);
    expect(retryDelaySeconds(config, 9, 0.5)).toBe(90720);
  });

  it("waits longer than 12 hours in hops", () => {
    const now = 1_000_000;
    expect(hopDelaySeconds(now + 86400_000, now)).toBe(MAX_QUEUE_DELAY_S);
    expect(hopDelaySeconds(now + 3600_000, now)).toBe(3600);
    expect(hopDelaySeconds(now - 5, now)).toBe(0);
  });

  it("disables an endpoint only once it has failed for the threshold", () => {
    const config = retryConfig({});
    const since = Date.parse("2026-11-01T00:00:00Z");
    expect(shouldDisable(null, since + 10 * 86400_000, config)).toBe(false);
    expect(shouldDisable(since, since + 5 * 86400_000 - 1, config)).toBe(false);
    expect(shouldDisable(since, since + 5 * 86400_000, config)).toBe(true);
    expect(retryConfig({ schedule: "0,0", disableAfter: "0" })).toMatchObject({ delaysS: [0, 0], disableAfterS: 0 });
  });
});

describe("signing", () => {
  it("signs as Standard Webhooks does; after a rotation both secrets sign for 24 h, then only the new one", async () => {
    const oldSecret = newSigningSecret();
    const newSecret = newSigningSecret();
    const rotatedAt = Date.parse("2026-11-20T12:00:00Z");
    const secrets = { current: newSecret, previous: { secret: oldSecret, expiresAt: rotatedAt + PREVIOUS_SECRET_TTL_MS } };
    const body = JSON.stringify({ type: "job.completed", data: { job_id: "j" } });
    const expected = (secret: string, at: number) => new Webhook(secret).sign("evt_1", new Date(at), body);

    const during = rotatedAt + PREVIOUS_SECRET_TTL_MS - 1000;
    const h1 = await signingHeaders(secrets, "evt_1", body, during);
    expect(h1["Service-Webhook-Id"]).toBe("evt_1");
    expect(h1["Service-Webhook-Timestamp"]).toBe(String(Math.floor(during / 1000)));
    expect(h1["Service-Signature"].split(" ")).toEqual([expected(newSecret, during), expected(oldSecret, during)]);

    const after = rotatedAt + PREVIOUS_SECRET_TTL_MS;
    const h2 = await signingHeaders(secrets, "evt_1", body, after);
    expect(h2["Service-Signature"]).toBe(expected(newSecret, after));

    // A message signed now verifies with the library (which also refuses stale timestamps).
    const now = Date.now();
    const fresh = await signingHeaders({ current: newSecret }, "evt_2", body, now);
    const asStandard = {
      "webhook-id": fresh["Service-Webhook-Id"],
      "webhook-timestamp": fresh["Service-Webhook-Timestamp"],
      "webhook-signature": fresh["Service-Signature"],
    };
    expect(new Webhook(newSecret).verify(body, asStandard)).toMatchObject({ type: "job.completed" });
    const stale = await signingHeaders({ current: newSecret }, "evt_2", body, now - 10 * 60_000);
    expect(() =>
      new Webhook(newSecret).verify(body, {
        "webhook-id": "evt_2",
        "webhook-timestamp": stale["Service-Webhook-Timestamp"],
        "webhook-signature": stale["Service-Signature"],
      }),
    ).toThrow(/timestamp/i);
  });
});

describe("event catalogue", () => {
  it("keeps the products apart and has the seven archive kinds", () => {
    expect(subscribableTypes("archive")).toHaveLength(7);
    expect(subscribableTypes("sig")).toEqual(
      expect.arrayContaining(["check.completed", "job.completed", "job.failed", "reference.enrolled", "reference.rejected"]),
    );
    for (const t of subscribableTypes("sig")) expect(productReceives("archive", t), t).toBe(false);
    for (const t of subscribableTypes("archive")) expect(productReceives("sig", t), t).toBe(false);
    expect(new Set(EVENT_KINDS.map((k) => k.type)).size).toBe(EVENT_KINDS.length);
  });

  it("derives event ids from what happened", async () => {
    const a = await deterministicEventId("org_1", "check.completed", "job/0");
    expect(a).toMatch(/^evt_[0-9a-z]{26}$/);
    expect(await deterministicEventId("org_1", "check.completed", "job/0")).toBe(a);
    expect(await deterministicEventId("org_1", "check.completed", "job/1")).not.toBe(a);
    expect(await deterministicEventId("org_2", "check.completed", "job/0")).not.toBe(a);
  });
});

describe("version pins", () => {
  const registry: VersionRegistry = {
    versions: [{ date: "2027-03-01" }, { date: "2026-09-27" }, { date: "2025-01-01", sunset: "2026-01-01" }],
    changes: [],
  };
  const t0 = new Date("2027-04-01T00:00:00Z");
  const upgrade = { from: "2026-09-27", to: "2027-03-01", kind: "upgrade" as const, at: t0.toISOString() };

  it("upgrades to any supported newer version; refuses unknown and sunset ones", () => {
    expect(decidePinChange("2026-09-27", "2027-03-01", null, t0, registry)).toEqual({
      kind: "upgrade",
      from: "2026-09-27",
      to: "2027-03-01",
    });
    expect(decidePinChange("2026-09-27", "2026-09-27", null, t0, registry)).toEqual({ kind: "unchanged" });
    expect(decidePinChange("2026-09-27", "2028-01-01", null, t0, registry)).toMatchObject({ refused: "invalid_version" });
    expect(decidePinChange("2026-09-27", "2025-01-01", null, t0, registry)).toMatchObject({ refused: "invalid_version" });
    expect(upgradeTargets("2026-09-27", t0, registry)).toEqual(["2027-03-01"]);
  });

  it("rolls the last upgrade back within 72 hours, and only to where it came from", () => {
    const at = (h: number) => new Date(t0.getTime() + h * 3600_000);
    expect(decidePinChange("2027-03-01", "2026-09-27", upgrade, at(71.9), registry)).toEqual({
      kind: "rollback",
      from: "2027-03-01",
      to: "2026-09-27",
    });
    expect(decidePinChange("2027-03-01", "2026-09-27", upgrade, at(72), registry)).toMatchObject({ refused: "rollback_expired" });
    expect(decidePinChange("2027-03-01", "2026-09-27", null, at(1), registry)).toMatchObject({ refused: "not_rollback_target" });
    expect(decidePinChange("2027-03-01", "2026-09-27", { ...upgrade, kind: "rollback" }, at(1), registry)).toMatchObject({
      refused: "not_rollback_target",
    });
    expect(rollbackAvailable("2027-03-01", upgrade, at(1))).toEqual({ to: "2026-09-27", until: at(72).toISOString() });
    expect(rollbackAvailable("2027-03-01", upgrade, at(72))).toBeNull();
  });
});
