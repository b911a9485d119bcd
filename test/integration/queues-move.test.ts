/**
 * Every queue consumer waits out its organisation's move with fresh delayed messages (src/queues/defer.ts),
 * never with retries: however many times a message comes back during a move, none of its max_retries is
 * spent, so nothing is dead-lettered, and once the move ends the last copy is processed as usual.
 *
 * The work is queued through the Worker's fetch with an env whose queues keep what is sent (so the real
 * consumer does not take it first), then each copy is delivered to the real consumer as the runtime would.
 */
import { env } from "cloudflare:workers";
import { createExecutionContext, createMessageBatch, getQueueResult, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { directory } from "../../src/storage/directory";
import { regionStore } from "../../src/storage/regions";
import { publishEvent } from "../../src/services/webhooks";
import { MOVE_DELAY_SECONDS } from "../../src/queues/defer";
import { BASE, api, createOrg, operator } from "../helpers/tenant";
import { checkForm, enrolWriter, waitForJob, type CheckResultBody } from "../helpers/checks";
import { referencesForm, signaturePng } from "../helpers/signatures";
import { registerReceiver, outsideUrl, receivedWebhooks, uniquePath, waitForWebhooks } from "../helpers/outside";
import { until } from "../helpers/wait";

const WRITER = 41;
/** More deliveries than any consumer's max_retries (wrangler.toml: at most 10) would allow. */
const DELIVERIES = 12;

type Sent = { queue: string; body: Record<string, unknown>; delaySeconds?: number };

/** The real env with its work queues replaced by ones that keep what is sent to them. */
function capturing(): { env: typeof env; sent: Sent[] } {
  const sent: Sent[] = [];
  const queue = (name: string) => ({
    send: async (body: unknown, o?: { delaySeconds?: number }) =>
      void sent.push({ queue: name, body: body as never, delaySeconds: o?.delaySeconds }),
    sendBatch: async (messages: { body: unknown; delaySeconds?: number }[], o?: { delaySeconds?: number }) => {
      for (const m of messages) sent.push({ queue: name, body: m.body as never, delaySeconds: m.delaySeconds ?? o?.delaySeconds });
    },
  });
  const captured = {
    ...env,
    CHECK_QUEUE: queue("countersign-check-items"),
    ENROL_QUEUE: queue("countersign-enrolments"),
    LEARN_QUEUE: queue("countersign-learning"),
    WEBHOOK_QUEUE: queue("countersign-webhook-deliveries"),
  } as unknown as typeof env;
  return { env: captured, sent };
}

/** A request to the Worker with another env (its queues capturing). */
async function fetchWith(to: typeof env, path: string, init: RequestInit & { key: string }): Promise<Response> {
  const headers = new Headers(init.headers);
  headers.set("Authorization", `Bearer ${init.key}`);
  const ctx = createExecutionContext();
  const res = await worker.fetch(new Request(BASE + path, { ...init, headers }), to, ctx);
  await waitOnExecutionContext(ctx);
  return res;
}

let round = 0;
/** Delivers bodies to a queue's consumer as one batch: its acks and retries. */
async function consume(queue: string, bodies: unknown[], to: typeof env) {
  const batch = createMessageBatch(
    queue,
    bodies.map((body) => ({ id: `m-${++round}`, timestamp: new Date(), attempts: 1, body })),
  );
  const ctx = createExecutionContext();
  await worker.queue(batch, to, ctx);
  const result = await getQueueResult(batch, ctx);
  return {
    ids: batch.messages.map((m) => m.id),
    acks: result.explicitAcks,
    retries: result.retryMessages.map((m: { msgId: string }) => m.msgId),
  };
}

/**
 * Delivers the messages again and again while their organisation moves, each time the copies the last
 * delivery sent, as the runtime delivers them: every delivery is acked (no retry is spent) and sends
 * exactly one delayed copy, the same body plus the same deadline. Returns the last copies.
 */
async function deliverWhileMoving(queue: string, bodies: Record<string, unknown>[], captured: ReturnType<typeof capturing>) {
  const strip = ({ deferUntil: _, ...rest }: Record<string, unknown>) => rest;
  const sorted = <T>(xs: T[]) => [...xs].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
  let current = bodies;
  // Each message's deadline is set at its first deferral (messages of one batch may differ by a millisecond)
  // and then carried unchanged by every copy.
  let deadlines: number[] | undefined;
  for (let i = 0; i < DELIVERIES; i++) {
    const from = captured.sent.length;
    const got = await consume(queue, current, captured.env);
    expect(got.retries).toEqual([]);
    expect(got.acks.sort()).toEqual(got.ids.sort());
    const copies = captured.sent.slice(from);
    expect(copies.map((c) => [c.queue, c.delaySeconds])).toEqual(current.map(() => [queue, MOVE_DELAY_SECONDS]));
    expect(sorted(copies.map((c) => strip(c.body)))).toEqual(sorted(bodies.map(strip)));
    const now = copies.map((c) => c.body.deferUntil as number).sort((a, b) => a - b);
    for (const d of now) expect(d).toBeGreaterThan(Date.now() + 23 * 3600_000);
    if (deadlines) expect(now).toEqual(deadlines);
    deadlines = now;
    current = copies.map((c) => c.body);
  }
  return current;
}

const beginMove = (orgId: string) => operator("POST", `/platform/orgs/${orgId}/move/begin`, { region: "eu" });
const completeMove = (orgId: string) => operator("POST", `/platform/orgs/${orgId}/move/complete`);

describe("queue consumers wait out an organisation's move without spending retries", () => {
  it("enrolment: a queued reference waits through a long move, then is enrolled in the new region", async () => {
    const org = await createOrg();
    const captured = capturing();
    const files: Record<string, Uint8Array> = {};
    for (let i = 0; i < 4; i++) files[`q${i}`] = signaturePng(WRITER, i);
    const res = await fetchWith(captured.env, "/sig/subjects/quinn/references", {
      method: "PUT",
      key: org.apiKey,
      body: referencesForm(files),
    });
    expect(res.status, await res.clone().text()).toBe(202);
    const queued = captured.sent.filter((s) => s.queue === "countersign-enrolments").map((s) => s.body);
    expect(queued).toHaveLength(1);
    expect(queued[0]).toMatchObject({ kind: "enrol", refId: "q3" });

    await beginMove(org.orgId);
    const [last] = await deliverWhileMoving("countersign-enrolments", queued, captured);
    // Past the deadline of its wait it is retried as a failure (and dead-lettered once those run out).
    const late = await consume("countersign-enrolments", [{ ...last, deferUntil: Date.now() - 1 }], captured.env);
    expect(late).toMatchObject({ acks: [], retries: late.ids });

    await completeMove(org.orgId);
    const view = async () =>
      (await (await api("/sig/subjects/quinn", { key: org.apiKey })).json()) as { references: { ref_id: string; status: string }[] };
    expect((await view()).references.find((r) => r.ref_id === "q3")?.status).toBe("queued");
    const done = await consume("countersign-enrolments", [last], env);
    expect(done.acks).toEqual(done.ids);
    expect((await view()).references.map((r) => [r.ref_id, r.status])).toEqual([
      ["q0", "enrolled"],
      ["q1", "enrolled"],
      ["q2", "enrolled"],
      ["q3", "enrolled"],
    ]);
  });

  it("webhooks: a delivery waits through a long move, then reaches its receiver once, as attempt 1", async () => {
    const org = await createOrg();
    const path = uniquePath("move-hook");
    const created = await api("/sig/webhooks", {
      method: "POST",
      key: org.apiKey,
      json: { url: outsideUrl(path), events: ["reference.enrolled"] },
    });
    expect(created.status).toBe(201);
    const endpoint = (await created.json()) as { webhook_id: string; secret: string };
    await registerReceiver(path, { secrets: [endpoint.secret] });
    const captured = capturing();
    const dirOrg = (await directory(env.DIRECTORY).getOrg(org.orgId))!;
    await publishEvent({ env: captured.env, org: dirOrg, store: regionStore(env, dirOrg.region) }, "sig", {
      id: "evt-move-1",
      type: "reference.enrolled",
      data: {
        subject_reference: "s",
        ref_id: "r",
        status: "enrolled",
        source: "unverified",
        rejected_reason: null,
        rejected_detail: null,
        at: new Date().toISOString(),
      },
    });
    const queued = captured.sent.map((s) => s.body);
    expect(queued).toEqual([expect.objectContaining({ kind: "webhook_delivery", attempt: 1 })]);

    await beginMove(org.orgId);
    const [last] = await deliverWhileMoving("countersign-webhook-deliveries", queued, captured);
    expect(await receivedWebhooks(path)).toHaveLength(0);

    await completeMove(org.orgId);
    const done = await consume("countersign-webhook-deliveries", [last], env);
    expect(done.acks).toEqual(done.ids);
    const got = await waitForWebhooks(path, (g) => g.length === 1);
    expect(got[0]).toMatchObject({ id: "evt-move-1", status: 200 });
    expect(got[0].verified[0]).toBe(true);
    const list = await api(`/sig/webhooks/${endpoint.webhook_id}/deliveries`, { key: org.apiKey });
    expect(((await list.json()) as { deliveries: { status: string; attempts: number }[] }).deliveries).toEqual([
      expect.objectContaining({ status: "succeeded", attempts: 1 }),
    ]);
  });

  it("checks: a queued job's items wait through a long move, then the job completes with every item decided", async () => {
    const org = await createOrg();
    await enrolWriter(org.apiKey, "alice", WRITER, 3);
    const captured = capturing();
    const form = checkForm(
      {
        job_id: "moving-1",
        items: [
          { file: "a", subject_reference: "alice" },
          { file: "b", subject_reference: "alice" },
        ],
      },
      { a: signaturePng(WRITER, 5), b: signaturePng(WRITER, 6) },
    );
    const res = await fetchWith(captured.env, "/sig/checks", {
      method: "POST",
      key: org.apiKey,
      body: form,
      headers: { "Idempotency-Key": `k-${crypto.randomUUID()}` },
    });
    expect(res.status, await res.clone().text()).toBe(202);
    const queued = captured.sent.filter((s) => s.queue === "countersign-check-items").map((s) => s.body);
    expect(queued).toHaveLength(2);

    await beginMove(org.orgId);
    const last = await deliverWhileMoving("countersign-check-items", queued, captured);

    await completeMove(org.orgId);
    expect(((await (await api("/sig/checks/moving-1", { key: org.apiKey })).json()) as { status: string }).status).not.toMatch(
      /completed|failed/,
    );
    const done = await consume("countersign-check-items", last, env);
    expect(done.acks.sort()).toEqual(done.ids.sort());
    const job = await waitForJob(org.apiKey, "moving-1");
    expect(job).toMatchObject({ status: "completed", completed_items: 2 });
    expect(job.results.every((r: CheckResultBody) => r.errors.length === 0 && r.decision !== null)).toBe(true);
  });

  it("learning: a confirmed item waits through a long move, then is learned", async () => {
    const org = await createOrg();
    await enrolWriter(org.apiKey, "alice", WRITER, 3);
    const policy = { thresholds: { auto_approve: 1, approve: 1, flag: 0 }, learning: { enabled: true, min_score: 0 } };
    expect([200, 201]).toContain((await api("/sig/policies/review", { method: "PUT", key: org.apiKey, json: policy })).status);
    const checked = await api("/sig/checks", {
      method: "POST",
      key: org.apiKey,
      body: checkForm(
        { job_id: "learn-move", policy: "review", items: [{ file: "doc", subject_reference: "alice" }] },
        // A signature the learning bar takes (variant 7 lies 1.51 spreads out with feature version 7, just
        // past the bar's 1.5): this test is about the move, not the bar.
        { doc: signaturePng(WRITER, 8) },
      ),
      headers: { "Idempotency-Key": `k-${crypto.randomUUID()}` },
    });
    expect(checked.status, await checked.clone().text()).toBe(200);
    const captured = capturing();
    const confirmed = await fetchWith(captured.env, "/sig/checks/learn-move/items/0/confirm", {
      method: "POST",
      key: org.apiKey,
      headers: { "Idempotency-Key": `k-${crypto.randomUUID()}` },
    });
    expect(confirmed.status, await confirmed.clone().text()).toBe(200);
    const queued = captured.sent.filter((s) => s.queue === "countersign-learning").map((s) => s.body);
    expect(queued).toEqual([expect.objectContaining({ kind: "learn", jobId: "learn-move", index: 0 })]);

    await beginMove(org.orgId);
    const [last] = await deliverWhileMoving("countersign-learning", queued, captured);

    await completeMove(org.orgId);
    const learning = async () => {
      const job = (await (await api("/sig/checks/learn-move", { key: org.apiKey })).json()) as {
        results: { review: { learning: { status: string } } | null }[];
      };
      return job.results[0].review!.learning.status;
    };
    expect(await learning()).toBe("queued");
    const done = await consume("countersign-learning", [last], env);
    expect(done.acks).toEqual(done.ids);
    expect(await until(learning, (s) => s !== "queued", { what: "the item to be learned" })).toBe("learned");
  });
});
