/**
 * The webhook events of bucket drops (`bucket.drop.completed`) and of learning (`reference.learned`),
 * delivered to the loopback receiver, which verifies each message with the npm standardwebhooks library.
 * Everything runs through the Worker: the S3 endpoint and its bucket-event queue, the check, learning
 * and webhook queues.
 */
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { GetObjectCommand, PutObjectCommand, type S3Client } from "@aws-sdk/client-s3";
import { api, createOrg, operator, type CreatedOrg } from "../helpers/tenant";
import { checkForm, enrolWriter, postCheck } from "../helpers/checks";
import { signaturePng } from "../helpers/signatures";
import { issueBucketKey, s3Client } from "../helpers/s3";
import { outsideUrl, registerReceiver, uniquePath, waitForWebhooks, type ReceivedWebhook } from "../helpers/outside";
import { until } from "../helpers/wait";

const WRITER = 23;
const FORGER = 71;
const idem = () => ({ "Idempotency-Key": `k-${crypto.randomUUID()}` });
const json = (o: unknown) => new TextEncoder().encode(JSON.stringify(o));

/** A verification endpoint for `events` and a receiver at a fresh path that verifies its signatures. */
async function receiver(org: CreatedOrg, events: string[]): Promise<string> {
  const path = uniquePath("events");
  const res = await api("/sig/webhooks", { method: "POST", key: org.apiKey, json: { url: outsideUrl(path), events } });
  expect(res.status, await res.clone().text()).toBe(201);
  const { secret } = (await res.json()) as { secret: string };
  await registerReceiver(path, { secrets: [secret] });
  return path;
}

const ofType = (got: ReceivedWebhook[], type: string) => got.filter((g) => g.body?.type === type);

async function readSummary(client: S3Client, bucket: string, key: string): Promise<Record<string, unknown>> {
  const read = async () => {
    try {
      const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return JSON.parse(await got.Body!.transformToString()) as Record<string, unknown>;
    } catch (err) {
      if ((err as { name?: string }).name !== "NoSuchKey") throw err;
      return null;
    }
  };
  return (await until(read, (s) => s !== null, { what: `${key} to appear`, pauseMs: 150 }))!;
}

describe("bucket.drop.completed", () => {
  it("is sent once per drop, naming its job, bucket, summary and counts as summary.json does", async () => {
    const org = await createOrg();
    await enrolWriter(org.apiKey, "alice", WRITER, 3);
    const path = await receiver(org, ["bucket.drop.completed"]);
    const key = await issueBucketKey(org.apiKey);
    const s3 = s3Client(key.access_key_id, key.secret_access_key);
    const folder = `${key.prefix}batches/ev-1/`;
    await s3.send(new PutObjectCommand({ Bucket: key.bucket, Key: `${folder}a.png`, Body: signaturePng(WRITER, 5) }));
    await s3.send(new PutObjectCommand({ Bucket: key.bucket, Key: `${folder}b.png`, Body: signaturePng(FORGER, 1) }));
    await s3.send(
      new PutObjectCommand({
        Bucket: key.bucket,
        Key: `${folder}manifest.json`,
        Body: json({ defaults: { subject_reference: "alice" }, items: [{ file: "a.png" }, { file: "b.png" }] }),
      }),
    );
    const summary = await readSummary(s3, key.bucket, `${folder}summary.json`);

    const got = await waitForWebhooks(path, (g) => ofType(g, "bucket.drop.completed").length >= 1);
    const events = ofType(got, "bucket.drop.completed");
    expect(events).toHaveLength(1);
    expect(events[0].verified).toEqual([true]);
    expect(events[0].body?.data).toEqual({
      job_id: summary.job_id,
      bucket: key.bucket,
      summary_key: `${folder}summary.json`,
      status: "completed",
      item_count: 2,
      decided_count: 2,
      errors: [],
      status_url: summary.status_url,
    });
  });

  it("tells of every drop into one folder: a second manifest, a second job, a second event", async () => {
    const org = await createOrg();
    await enrolWriter(org.apiKey, "alice", WRITER, 3);
    const path = await receiver(org, ["bucket.drop.completed"]);
    const key = await issueBucketKey(org.apiKey);
    const s3 = s3Client(key.access_key_id, key.secret_access_key);
    const folder = `${key.prefix}batches/ev-twice/`;
    await s3.send(new PutObjectCommand({ Bucket: key.bucket, Key: `${folder}a.png`, Body: signaturePng(WRITER, 5) }));
    const drop = async (items: unknown[]) => {
      await s3.send(
        new PutObjectCommand({
          Bucket: key.bucket,
          Key: `${folder}manifest.json`,
          Body: json({ defaults: { subject_reference: "alice" }, items }),
        }),
      );
    };
    await drop([{ file: "a.png" }]);
    const first = await readSummary(s3, key.bucket, `${folder}summary.json`);
    await waitForWebhooks(path, (g) => ofType(g, "bucket.drop.completed").length >= 1);
    await s3.send(new PutObjectCommand({ Bucket: key.bucket, Key: `${folder}b.png`, Body: signaturePng(WRITER, 6) }));
    await drop([{ file: "a.png" }, { file: "b.png" }]);
    const second = await until(
      () => readSummary(s3, key.bucket, `${folder}summary.json`),
      (s) => s.job_id !== first.job_id,
      { what: "the second drop's summary", pauseMs: 150 },
    );
    const got = await waitForWebhooks(path, (g) => ofType(g, "bucket.drop.completed").length >= 2);
    expect(ofType(got, "bucket.drop.completed").map((e) => (e.body!.data as { job_id: string }).job_id)).toEqual([
      first.job_id,
      second.job_id,
    ]);
  });

  it("tells of a drop refused for billing, with the reason", async () => {
    const org = await createOrg();
    const path = await receiver(org, ["bucket.drop.completed"]);
    const key = await issueBucketKey(org.apiKey);
    await operator("PUT", `/platform/orgs/${org.orgId}/billing`, { billing: "canceled" });
    const s3 = s3Client(key.access_key_id, key.secret_access_key);
    const folder = `${key.prefix}batches/ev-2/`;
    await s3.send(new PutObjectCommand({ Bucket: key.bucket, Key: `${folder}a.png`, Body: signaturePng(WRITER, 2) }));
    await s3.send(
      new PutObjectCommand({
        Bucket: key.bucket,
        Key: `${folder}manifest.json`,
        Body: json({ items: [{ file: "a.png", subject_reference: "alice" }] }),
      }),
    );
    await readSummary(s3, key.bucket, `${folder}summary.json`);
    const got = await waitForWebhooks(path, (g) => ofType(g, "bucket.drop.completed").length >= 1);
    const [event] = ofType(got, "bucket.drop.completed");
    expect(event.body?.data).toMatchObject({ status: "rejected", item_count: 1, decided_count: 0, errors: [{ code: "billing_required" }] });
  });
});

describe("reference.learned", () => {
  let org: CreatedOrg;
  let path: string;

  /** A synchronous FLAG check of one image under a policy that learns, then its confirmation. */
  async function checkAndConfirm(jobId: string, png: Uint8Array, policy: string): Promise<void> {
    const res = await postCheck(
      org.apiKey,
      checkForm({ job_id: jobId, policy, items: [{ file: "doc", subject_reference: "ann" }] }, { doc: png }),
    );
    expect(res.status, await res.clone().text()).toBe(200);
    const confirmed = await api(`/sig/checks/${jobId}/items/0/confirm`, { method: "POST", key: org.apiKey, headers: idem() });
    expect(confirmed.status, await confirmed.clone().text()).toBe(200);
  }

  beforeAll(async () => {
    org = await createOrg();
    for (const [name, minScore] of [
      ["learns", 0.3],
      ["learns-any", 0],
    ] as const) {
      const spec = { thresholds: { auto_approve: 1, approve: 1, flag: 0 }, learning: { enabled: true, min_score: minScore } };
      const res = await api(`/sig/policies/${name}`, { method: "PUT", key: org.apiKey, json: spec });
      expect([200, 201]).toContain(res.status);
    }
    await enrolWriter(org.apiKey, "ann", WRITER, 3);
    path = await receiver(org, ["reference.learned"]);
  });

  it("tells of a learned item with its reference, of a refusal with its reason, and of an unlearn", async () => {
    await checkAndConfirm("ev-learn", signaturePng(WRITER, 5), "learns");
    await checkAndConfirm("ev-outlier", signaturePng(FORGER, 2), "learns-any");
    let got = await waitForWebhooks(path, (g) => ofType(g, "reference.learned").length >= 2);
    const byCheck = (all: ReceivedWebhook[], check: string) =>
      ofType(all, "reference.learned").filter((g) => g.body?.data.check_id === check);
    expect(byCheck(got, "ev-learn/0").map((g) => g.body?.data)).toEqual([
      { outcome: "learned", check_id: "ev-learn/0", subject_reference: "ann", ref_id: "learned-ev-learn.0", reason: null },
    ]);
    expect(byCheck(got, "ev-outlier/0").map((g) => g.body?.data)).toEqual([
      { outcome: "refused", check_id: "ev-outlier/0", subject_reference: "ann", ref_id: null, reason: "outlier" },
    ]);
    expect(got.every((g) => g.verified[0])).toBe(true);

    const res = await api("/sig/subjects/ann/references/unlearn", {
      method: "POST",
      key: org.apiKey,
      json: { checks: ["ev-learn/0"] },
      headers: idem(),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    got = await waitForWebhooks(path, (g) => byCheck(g, "ev-learn/0").length >= 2);
    expect(byCheck(got, "ev-learn/0").map((g) => g.body?.data.outcome)).toEqual(["learned", "unlearned"]);
    expect(byCheck(got, "ev-learn/0")[1].body?.data.ref_id).toBe("learned-ev-learn.0");
  });

  it("tells once of a confirmation refused at once, its input having expired from the inbox", async () => {
    const res = await postCheck(
      org.apiKey,
      checkForm(
        { job_id: "ev-expired", policy: "learns", items: [{ file: "doc", subject_reference: "ann" }] },
        { doc: signaturePng(WRITER, 6) },
      ),
    );
    expect(res.status, await res.clone().text()).toBe(200);
    await env.DB_US.prepare(
      "UPDATE check_jobs SET inbox_expires_at = '2000-01-01T00:00:00.000Z' WHERE org_id = ? AND job_id = 'ev-expired'",
    )
      .bind(org.orgId)
      .run();
    for (let i = 0; i < 2; i++) {
      const confirmed = await api("/sig/checks/ev-expired/items/0/confirm", { method: "POST", key: org.apiKey, headers: idem() });
      expect(confirmed.status, await confirmed.clone().text()).toBe(200);
    }
    const got = await waitForWebhooks(path, (g) => ofType(g, "reference.learned").some((w) => w.body?.data.check_id === "ev-expired/0"));
    expect(
      ofType(got, "reference.learned")
        .filter((g) => g.body?.data.check_id === "ev-expired/0")
        .map((g) => g.body?.data),
    ).toEqual([{ outcome: "refused", check_id: "ev-expired/0", subject_reference: "ann", ref_id: null, reason: "input_expired" }]);
  });
});
