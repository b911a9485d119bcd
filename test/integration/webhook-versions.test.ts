/**
 * Webhooks follow the organisation's pinned version; the pin is upgraded and rolled back (within 72 h)
 * by a dashboard-only route. The rendering and the pin rules are shown with an injected registry (a
 * made-up newer version with a breaking change to a webhook payload) and an injected clock, as the
 * versioning unit tests do; the route itself is exercised with the production registry.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { directory } from "../../src/storage/directory";
import { regionStore } from "../../src/storage/regions";
import { webhooksRepo } from "../../src/storage/webhooks";
import { publishEvent } from "../../src/services/webhooks";
import { attemptDelivery } from "../../src/services/webhook-delivery";
import { changePin } from "../../src/services/version-pins";
import { retryConfig } from "../../src/domain/webhook-retry";
import type { VersionRegistry } from "../../src/versions/types";
import { api, createOrg, type CreatedOrg } from "../helpers/tenant";
import { dashboardToken } from "../helpers/jwt";
import { outsideUrl, registerReceiver, uniquePath, waitForWebhooks } from "../helpers/outside";
import { referencesForm, signaturePng } from "../helpers/signatures";
import { blankPage, encodePng } from "../fixtures/generator";

/** 2027-03-01 renamed the reference events' `time` to `at` (the code produces the latest shape). */
const TEST_REGISTRY: VersionRegistry = {
  versions: [{ date: "2027-03-01" }, { date: "2026-09-27" }],
  changes: [
    {
      version: "2027-03-01",
      description: "reference events: `time` renamed `at`",
      resources: ["reference.enrolled"],
      down: (b) => {
        const { at, ...rest } = b as { at: string };
        return { ...rest, time: at };
      },
    },
  ],
};

async function tenantOf(orgId: string) {
  const org = (await directory(env.DIRECTORY).getOrg(orgId))!;
  return { env, org, store: regionStore(env, org.region) };
}

async function hook(org: CreatedOrg, events: string[]) {
  const path = uniquePath("hook");
  const res = await api("/sig/webhooks", { method: "POST", key: org.apiKey, json: { url: outsideUrl(path), events } });
  expect(res.status).toBe(201);
  const endpoint = (await res.json()) as { webhook_id: string; secret: string };
  await registerReceiver(path, { secrets: [endpoint.secret] });
  return { path, endpoint };
}

const enrolled = (n: number) => ({
  subject_reference: "s",
  ref_id: `r${n}`,
  status: "enrolled",
  source: "unverified",
  rejected_reason: null,
  rejected_detail: null,
  at: "2027-04-01T00:00:00.000Z",
});

describe("webhooks follow the pinned version", () => {
  it("a pin upgrade changes the Service-Version a webhook is rendered in; a rollback after 72 h is refused", async () => {
    const org = await createOrg();
    const { path } = await hook(org, ["reference.enrolled"]);
    const t0 = new Date();
    const hours = (h: number) => () => new Date(t0.getTime() + h * 3600_000);

    await publishEvent({ ...(await tenantOf(org.orgId)), registry: TEST_REGISTRY }, "sig", {
      id: "evt_pin_1",
      type: "reference.enrolled",
      data: enrolled(1),
    });
    const [before] = await waitForWebhooks(path, (g) => g.length === 1);
    expect(before.version).toBe("2026-09-27");
    expect(before.body).toMatchObject({ version: "2026-09-27", data: { ref_id: "r1", time: "2027-04-01T00:00:00.000Z" } });
    expect(before.body!.data).not.toHaveProperty("at");

    const up = await changePin({ ...(await tenantOf(org.orgId)), registry: TEST_REGISTRY, now: hours(0) }, "2027-03-01", "user:u1");
    expect(up.state).toMatchObject({ pinned_version: "2027-03-01", rollback: { to: "2026-09-27" } });
    await publishEvent({ ...(await tenantOf(org.orgId)), registry: TEST_REGISTRY }, "sig", {
      id: "evt_pin_2",
      type: "reference.enrolled",
      data: enrolled(2),
    });
    const got = await waitForWebhooks(path, (g) => g.length === 2);
    expect(got[1].version).toBe("2027-03-01");
    expect(got[1].body).toMatchObject({ version: "2027-03-01", data: { ref_id: "r2", at: "2027-04-01T00:00:00.000Z" } });
    expect(got[1].verified).toEqual([true]);

    // Within 72 h the upgrade can be undone; webhooks follow the pin back.
    const back = await changePin({ ...(await tenantOf(org.orgId)), registry: TEST_REGISTRY, now: hours(71.5) }, "2026-09-27", "user:u1");
    expect(back.state.pinned_version).toBe("2026-09-27");
    await publishEvent({ ...(await tenantOf(org.orgId)), registry: TEST_REGISTRY }, "sig", {
      id: "evt_pin_3",
      type: "reference.enrolled",
      data: enrolled(3),
    });
    expect((await waitForWebhooks(path, (g) => g.length === 3))[2].version).toBe("2026-09-27");

    // Upgraded again; 72 hours later the rollback is refused.
    await changePin({ ...(await tenantOf(org.orgId)), registry: TEST_REGISTRY, now: hours(72) }, "2027-03-01", "user:u1");
    await expect(
      changePin({ ...(await tenantOf(org.orgId)), registry: TEST_REGISTRY, now: hours(144) }, "2026-09-27", "user:u1"),
    ).rejects.toMatchObject({
      code: "conflict",
      status: 409,
      extensions: { reason: "rollback_expired" },
    });
    expect((await directory(env.DIRECTORY).getOrg(org.orgId))!.pinnedVersion).toBe("2027-03-01");

    const audit = (await (await api("/platform/audit", { key: org.apiKey })).json()) as {
      entries: { action: string; actor: string; detail: unknown }[];
    };
    const pins = audit.entries.filter((e) => e.action.startsWith("org.version_")).map((e) => [e.action, e.detail]);
    expect(pins).toEqual([
      ["org.version_upgrade", { from: "2026-09-27", to: "2027-03-01" }],
      ["org.version_rollback", { from: "2027-03-01", to: "2026-09-27" }],
      ["org.version_upgrade", { from: "2026-09-27", to: "2027-03-01" }],
    ]);
  });

  it("the pin route is for dashboard users only, and refuses unknown versions", async () => {
    const org = await createOrg();
    const byKey = await api("/platform/org/version", { method: "PUT", key: org.apiKey, json: { version: "2026-09-27" } });
    expect(byKey.status).toBe(403);
    expect(((await byKey.json()) as { detail: string }).detail).toMatch(/dashboard users only/);
    const token = await dashboardToken({ orgId: org.orgId, permissions: ["org:read", "sig:settings:manage"] });
    const same = await api("/platform/org/version", { method: "PUT", key: token, json: { version: "2026-09-27" } });
    expect(same.status).toBe(200);
    expect(await same.json()).toMatchObject({ pinned_version: "2026-09-27", latest_version: "2026-09-27", upgrades: [], rollback: null });
    const unknown = await api("/platform/org/version", { method: "PUT", key: token, json: { version: "2031-01-01" } });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { errors: { field: string }[] }).errors[0].field).toBe("body.version");
    const reader = await dashboardToken({ orgId: org.orgId, permissions: ["org:read"] });
    expect((await api("/platform/org/version", { method: "PUT", key: reader, json: { version: "2026-09-27" } })).status).toBe(403);
    expect((await api("/platform/org/version", { key: org.apiKey })).status).toBe(200);
  });
});

describe("queued enrolments", () => {
  it("send reference.enrolled and reference.rejected once each queued reference has its outcome", async () => {
    const org = await createOrg();
    const { path } = await hook(org, ["reference.enrolled", "reference.rejected"]);
    const files: Record<string, Uint8Array> = {
      r0: signaturePng(21, 0),
      r1: signaturePng(21, 1),
      r2: signaturePng(21, 2),
      r3: signaturePng(21, 3),
      r4: encodePng(blankPage(600, 300)),
    };
    const res = await api("/sig/subjects/carol/references", { method: "PUT", key: org.apiKey, body: referencesForm(files) });
    expect(res.status).toBe(202);
    const got = await waitForWebhooks(path, (g) => g.length === 2);
    const byRef = Object.fromEntries(got.map((g) => [(g.body!.data as { ref_id: string }).ref_id, g.body!]));
    expect(byRef.r3).toMatchObject({ type: "reference.enrolled", data: { subject_reference: "carol", status: "enrolled" } });
    expect(byRef.r4).toMatchObject({ type: "reference.rejected", data: { subject_reference: "carol", status: "rejected" } });
    expect(got.every((g) => g.verified[0])).toBe(true);
  });

  it("sends reference.rejected for a queued upload that was to replace a live reference, which stays", async () => {
    const org = await createOrg();
    const first = await api("/sig/subjects/dina/references", {
      method: "PUT",
      key: org.apiKey,
      body: referencesForm({ k1: signaturePng(22, 0) }),
    });
    expect(first.status).toBe(200);
    const { path } = await hook(org, ["reference.enrolled", "reference.rejected"]);
    const files: Record<string, Uint8Array> = {
      r0: signaturePng(22, 1),
      r1: signaturePng(22, 2),
      r2: signaturePng(22, 3),
      k1: encodePng(blankPage(600, 300)),
    };
    const res = await api("/sig/subjects/dina/references", { method: "PUT", key: org.apiKey, body: referencesForm(files) });
    expect(res.status).toBe(202);
    const [got] = await waitForWebhooks(path, (g) => g.length === 1);
    expect(got.body).toMatchObject({
      type: "reference.rejected",
      data: { subject_reference: "dina", ref_id: "k1", status: "rejected", rejected_reason: "no_signature" },
    });
    expect((got.body!.data as { rejected_detail: string }).rejected_detail).toMatch(/stays live/);
    const view = (await (await api("/sig/subjects/dina", { key: org.apiKey })).json()) as {
      references: { ref_id: string; status: string }[];
    };
    expect(view.references.find((r) => r.ref_id === "k1")!.status).toBe("enrolled");
  });
});

describe("address checks at every delivery", () => {
  it("refuses to send when the endpoint's name now resolves to a private address, and logs why", async () => {
    const org = await createOrg();
    const res = await api("/sig/webhooks", {
      method: "POST",
      key: org.apiKey,
      json: { url: "https://rebind.example.com/hook", events: ["job.failed"] },
    });
    expect(res.status).toBe(201);
    const { webhook_id } = (await res.json()) as { webhook_id: string };
    const tenant = await tenantOf(org.orgId);
    const now = new Date().toISOString();
    // Recorded without a queue message, so this test drives the one attempt itself.
    await webhooksRepo(tenant.store.db).recordEvent(
      { org_id: org.orgId, event_id: "evt_rebind", type: "job.failed", version: "2026-09-27", body: "{}", created_at: now },
      [
        {
          org_id: org.orgId,
          delivery_id: "whd_rebind",
          webhook_id,
          event_id: "evt_rebind",
          event_type: "job.failed",
          status: "pending",
          trigger: "event",
          attempts: 0,
          final_attempt: 3,
          next_attempt_at: now,
          lease_until: null,
          last_status_code: null,
          last_error: null,
          created_at: now,
          updated_at: now,
          completed_at: null,
        },
      ],
    );
    let fetched = 0;
    const outcome = await attemptDelivery(
      {
        ...tenant,
        resolve: async () => ["93.184.216.34", "10.0.0.7"],
        fetch: (async () => {
          fetched++;
          return new Response("ok");
        }) as typeof fetch,
        config: retryConfig({ schedule: "0,0", disableAfter: "0" }),
      },
      { kind: "webhook_delivery", orgId: org.orgId, deliveryId: "whd_rebind", attempt: 1, due: Date.now() },
    );
    expect(fetched).toBe(0);
    expect(outcome).toMatchObject({ kind: "next", message: { attempt: 2 } });
    const log = (await (await api(`/sig/webhooks/${webhook_id}/attempts`, { key: org.apiKey })).json()) as {
      attempts: { error: string; status_code: number | null }[];
    };
    expect(log.attempts).toHaveLength(1);
    expect(log.attempts[0]).toMatchObject({ status_code: null });
    expect(log.attempts[0].error).toMatch(/^address_not_allowed: rebind\.example\.com resolves to 10\.0\.0\.7/);
    // A duplicate of the same attempt's message finds it taken and sends nothing.
    expect(
      await attemptDelivery(
        { ...tenant, resolve: async () => ["93.184.216.34"] },
        { kind: "webhook_delivery", orgId: org.orgId, deliveryId: "whd_rebind", attempt: 1, due: Date.now() },
      ),
    ).toEqual({
      kind: "done",
    });
  });

  it("gives each attempt a deadline, and logs the first KB of an answer", async () => {
    const org = await createOrg();
    const slow = uniquePath("slow");
    const chatty = uniquePath("chatty");
    const tenant = await tenantOf(org.orgId);
    const now = new Date().toISOString();
    const ids: Record<string, string> = {};
    for (const path of [slow, chatty]) {
      const res = await api("/sig/webhooks", { method: "POST", key: org.apiKey, json: { url: outsideUrl(path), events: ["job.failed"] } });
      const endpoint = (await res.json()) as { webhook_id: string; secret: string };
      ids[path] = endpoint.webhook_id;
      const eventId = `evt_${path.split("/")[2]}`;
      await webhooksRepo(tenant.store.db).recordEvent(
        { org_id: org.orgId, event_id: eventId, type: "job.failed", version: "2026-09-27", body: "{}", created_at: now },
        [
          {
            org_id: org.orgId,
            delivery_id: `whd_${path.split("/")[2]}`,
            webhook_id: endpoint.webhook_id,
            event_id: eventId,
            event_type: "job.failed",
            status: "pending",
            trigger: "event",
            attempts: 0,
            final_attempt: 1,
            next_attempt_at: now,
            lease_until: null,
            last_status_code: null,
            last_error: null,
            created_at: now,
            updated_at: now,
            completed_at: null,
          },
        ],
      );
    }
    await registerReceiver(slow, { secrets: [], delay_ms: 3000 });
    await registerReceiver(chatty, { secrets: [], statuses: [502], body: "e".repeat(5000) });
    const config = { ...retryConfig({ schedule: "0,0", disableAfter: "999999" }), attemptTimeoutMs: 300 };
    for (const path of [slow, chatty]) {
      const outcome = await attemptDelivery(
        { ...tenant, config },
        { kind: "webhook_delivery", orgId: org.orgId, deliveryId: `whd_${path.split("/")[2]}`, attempt: 1, due: Date.now() },
      );
      expect(outcome).toEqual({ kind: "done" });
    }
    const log = async (path: string) =>
      (
        (await (await api(`/sig/webhooks/${ids[path]}/attempts`, { key: org.apiKey })).json()) as {
          attempts: { error: string; status_code: number | null; response_body: string | null; duration_ms: number }[];
        }
      ).attempts[0];
    const timedOut = await log(slow);
    expect(timedOut).toMatchObject({ status_code: null, response_body: null });
    expect(timedOut.error).toMatch(/^timeout: no answer within 300 ms/);
    const answered = await log(chatty);
    expect(answered.status_code).toBe(502);
    expect(answered.response_body).toBe("e".repeat(1024));
    // One attempt was all it had: the delivery is failed.
    const [d] = (
      (await (await api(`/sig/webhooks/${ids[chatty]}/deliveries`, { key: org.apiKey })).json()) as { deliveries: { status: string }[] }
    ).deliveries;
    expect(d.status).toBe("failed");
  });
});
