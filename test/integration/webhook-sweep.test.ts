/**
 * The scheduled webhook sweep: the delivery log is kept 30 days, and a delivery whose queue message was
 * lost is sent again.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { directory } from "../../src/storage/directory";
import { regionStore } from "../../src/storage/regions";
import { webhooksRepo, type DeliveryRow } from "../../src/storage/webhooks";
import { renderEvent } from "../../src/services/webhooks";
import { sweepWebhooks } from "../../src/services/webhook-sweep";
import { api, createOrg } from "../helpers/tenant";
import { outsideUrl, registerReceiver, uniquePath, waitForWebhooks } from "../helpers/outside";

const DAY = 86400_000;

function delivery(
  orgId: string,
  webhookId: string,
  id: string,
  eventId: string,
  at: string,
  extra: Partial<DeliveryRow> = {},
): DeliveryRow {
  return {
    org_id: orgId,
    delivery_id: id,
    webhook_id: webhookId,
    event_id: eventId,
    event_type: "job.failed",
    status: "pending",
    trigger: "event",
    attempts: 0,
    final_attempt: 3,
    next_attempt_at: at,
    lease_until: null,
    last_status_code: null,
    last_error: null,
    created_at: at,
    updated_at: at,
    completed_at: null,
    ...extra,
  };
}

describe("webhook sweep", () => {
  it("drops log rows, finished deliveries and events older than 30 days, and resends a delivery whose message was lost", async () => {
    const created = await createOrg();
    const org = (await directory(env.DIRECTORY).getOrg(created.orgId))!;
    const { db } = regionStore(env, org.region);
    const repo = webhooksRepo(db);
    const path = uniquePath("sweep");
    const res = await api("/sig/webhooks", {
      method: "POST",
      key: created.apiKey,
      json: { url: outsideUrl(path), events: ["job.failed"] },
    });
    const endpoint = (await res.json()) as { webhook_id: string; secret: string };
    await registerReceiver(path, { secrets: [endpoint.secret] });

    const now = new Date();
    const old = new Date(now.getTime() - 31 * DAY).toISOString();
    const recent = new Date(now.getTime() - 29 * DAY).toISOString();
    const lost = new Date(now.getTime() - 20 * 60_000).toISOString();
    const body = (id: string) => renderEvent(org, { id, type: "job.failed", data: { job_id: id } }, "2026-09-27", lost);
    await repo.recordEvent(
      { org_id: org.id, event_id: "evt_old", type: "job.failed", version: "2026-09-27", body: body("evt_old"), created_at: old },
      [delivery(org.id, endpoint.webhook_id, "whd_old", "evt_old", old, { status: "succeeded", attempts: 1, completed_at: old })],
    );
    await repo.recordEvent(
      { org_id: org.id, event_id: "evt_recent", type: "job.failed", version: "2026-09-27", body: body("evt_recent"), created_at: recent },
      [
        delivery(org.id, endpoint.webhook_id, "whd_recent", "evt_recent", recent, {
          status: "succeeded",
          attempts: 1,
          completed_at: recent,
        }),
      ],
    );
    // Finished deliveries (recordEvent records them pending).
    for (const [id, at] of [
      ["whd_old", old],
      ["whd_recent", recent],
    ]) {
      await db
        .prepare("UPDATE webhook_deliveries SET status = 'succeeded', attempts = 1, completed_at = ? WHERE org_id = ? AND delivery_id = ?")
        .bind(at, org.id, id)
        .run();
    }
    for (const [id, at] of [
      ["wha_old", old],
      ["wha_recent", recent],
    ] as const) {
      await repo.recordAttempt(
        {
          org_id: org.id,
          attempt_id: id,
          delivery_id: id === "wha_old" ? "whd_old" : "whd_recent",
          webhook_id: endpoint.webhook_id,
          event_id: "e",
          event_type: "job.failed",
          attempt: 1,
          trigger: "event",
          started_at: at,
          duration_ms: 5,
          status_code: 200,
          error: null,
          response_body: "ok",
          succeeded: 1,
        },
        { status: "succeeded", nextAttemptAt: null, completedAt: at },
      );
    }
    // Recorded as due 20 minutes ago, its queue message never sent.
    await repo.recordEvent(
      { org_id: org.id, event_id: "evt_lost", type: "job.failed", version: "2026-09-27", body: body("evt_lost"), created_at: lost },
      [delivery(org.id, endpoint.webhook_id, "whd_lost", "evt_lost", lost)],
    );

    const swept = await sweepWebhooks(env, now);
    expect(swept.requeued).toBeGreaterThanOrEqual(1);
    expect(await repo.delivery(org.id, "whd_old")).toBeNull();
    expect(await repo.event(org.id, "evt_old")).toBeNull();
    expect(await repo.delivery(org.id, "whd_recent")).not.toBeNull();
    expect(await repo.event(org.id, "evt_recent")).not.toBeNull();
    const log = await repo.listAttempts(org.id, endpoint.webhook_id, { limit: 10 });
    expect(log.map((a) => a.attempt_id)).not.toContain("wha_old");
    expect(log.map((a) => a.attempt_id)).toContain("wha_recent");

    const [got] = await waitForWebhooks(path, (g) => g.length === 1);
    expect(got.id).toBe("evt_lost");
    expect(got.verified).toEqual([true]);
  });
});
