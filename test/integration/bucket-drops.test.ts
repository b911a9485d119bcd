import { LATEST_VERSION } from "../../src/http/versioning";
import { env, exports } from "cloudflare:workers";
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import {
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  UploadPartCommand,
  type S3Client,
} from "@aws-sdk/client-s3";
import worker from "../../src/index";
import { api, createOrg, operator, type CreatedOrg } from "../helpers/tenant";
import { enrolWriter, expectProblem } from "../helpers/checks";
import { signaturePng } from "../helpers/signatures";
import { S3_ENDPOINT, issueBucketKey, s3Client, type IssuedBucketKey } from "../helpers/s3";
import { BOX_SPEC, blankFormPng, photographedForm, postTemplate, templateBody } from "../helpers/forms";
import { until } from "../helpers/wait";
import { outsideUrl, registerReceiver, uniquePath } from "../helpers/outside";
import { MAX_DOCUMENT_BYTES } from "../../src/domain/check-request";
import { MANIFEST_NAME as MANIFEST } from "../../src/domain/drop";

const WRITER = 31;
let org: CreatedOrg;
let key: IssuedBucketKey;
let s3: S3Client;

beforeAll(async () => {
  org = await createOrg();
  await enrolWriter(org.apiKey, "alice", WRITER, 3);
  key = await issueBucketKey(org.apiKey);
  s3 = s3Client(key.access_key_id, key.secret_access_key);
});

interface Summary {
  job_id: string | null;
  status: string;
  status_url: string | null;
  source: string;
  error: { code: string; detail: string } | null;
  counts: { items: number; decided: number; errors: number };
  items: {
    file: string;
    item_index: number | null;
    check_id: string | null;
    reference: string | null;
    decision: string | null;
    score: number | null;
    best_match: { signature_index: number; ref_id: string; score: number } | null;
    located: { page: number; box: { x: number; y: number; w: number; h: number }; box_name: string | null } | null;
    errors: { code: string; detail: string }[];
  }[];
}

/** Reads an object back through the S3 client, waiting while it does not exist yet (NoSuchKey). */
async function waitForObject(client: S3Client, bucket: string, objectKey: string): Promise<string> {
  const read = async () => {
    try {
      const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: objectKey }));
      return await got.Body!.transformToString();
    } catch (err) {
      if ((err as { name?: string }).name !== "NoSuchKey") throw err;
      return null;
    }
  };
  return (await until(read, (body) => body !== null, { what: `${objectKey} to appear`, pauseMs: 150 })) as string;
}

async function s3Error(p: Promise<unknown>): Promise<{ name: string; status: number }> {
  try {
    await p;
  } catch (err) {
    const e = err as { name: string; $metadata?: { httpStatusCode?: number } };
    return { name: e.name, status: e.$metadata?.httpStatusCode ?? 0 };
  }
  throw new Error("the request succeeded");
}

const json = (o: unknown) => new TextEncoder().encode(JSON.stringify(o));
/** What getQueueResult tells of a delivered batch (the parts these tests read). */
type QueueResult = { explicitAcks: string[]; retryMessages: { msgId: string }[] };

/** The R2 event notification of an object just stored, as the bucket-events queue carries it. */
function putEvent(bucket: string, objectKey: string, stored: { size: number; etag: string }, opts: { action?: string; at?: Date } = {}) {
  return {
    account: "local",
    action: opts.action ?? "PutObject",
    bucket,
    object: { key: objectKey, size: stored.size, eTag: stored.etag },
    eventTime: (opts.at ?? new Date()).toISOString(),
  };
}

/** The state of the drop its object started (waiting, submitted, summarised), or undefined before it is recorded. */
async function dropState(orgId: string, objectKey: string): Promise<string | undefined> {
  const row = await env.DB_US.prepare("SELECT state FROM bucket_drops WHERE org_id = ? AND object_key = ?")
    .bind(orgId, objectKey)
    .first<{ state: string }>();
  return row?.state;
}

/** Delivers messages to a queue's consumer as one batch, as the runtime would: its acks and retries. */
async function consume(
  messages: { id: string; body: unknown; attempts?: number }[],
  opts: { queue?: string; env?: typeof env } = {},
): Promise<QueueResult> {
  const batch = createMessageBatch(
    opts.queue ?? "countersign-bucket-events",
    messages.map((m) => ({ id: m.id, timestamp: new Date(), attempts: m.attempts ?? 1, body: m.body })),
  );
  const ctx = createExecutionContext();
  await worker.queue(batch, opts.env ?? env, ctx);
  return getQueueResult(batch, ctx);
}

describe("bucket keys", () => {
  it("issues a key once with Cache-Control: no-store, lists it, allows 2 active, and audits", async () => {
    const o = await createOrg();
    const res = await api("/sig/bucket-keys", { method: "POST", key: o.apiKey, json: {} });
    expect(res.status).toBe(201);
    expect(res.headers.get("Cache-Control")).toBe("no-store");
    const issued = (await res.json()) as IssuedBucketKey;
    expect(issued.access_key_id).toMatch(/^CSU[A-Z2-7]{17}$/);
    expect(issued.secret_access_key).toHaveLength(40);
    expect(issued).toMatchObject({ bucket: "countersign-files-us", prefix: `orgs/${o.orgId}/drops/`, region: "auto" });
    expect(issued.endpoint_url).toBe("https://api.countersign.localhost");

    const list = (await (await api("/sig/bucket-keys", { key: o.apiKey })).json()) as { keys: { access_key_id: string; status: string }[] };
    expect(list.keys).toEqual([expect.objectContaining({ access_key_id: issued.access_key_id, status: "active" })]);
    expect(JSON.stringify(list)).not.toContain(issued.secret_access_key);

    // "The body, if any, must be {}": an empty body with a JSON Content-Type is no body; anything else is 400.
    const notEmpty = await api("/sig/bucket-keys", { method: "POST", key: o.apiKey, json: { a: 1 } });
    expect((await expectProblem(notEmpty, 400, "invalid_request")).errors[0].field).toMatch(/^body/);
    const typedEmpty = await api("/sig/bucket-keys", {
      method: "POST",
      key: o.apiKey,
      headers: { "Content-Type": "application/json" },
      body: "",
    });
    expect(typedEmpty.status, await typedEmpty.clone().text()).toBe(201);
    const third = await expectProblem(await api("/sig/bucket-keys", { method: "POST", key: o.apiKey }), 409, "conflict");
    expect(third.detail).toMatch(/2 active/);

    expect((await api(`/sig/bucket-keys/${issued.access_key_id}`, { method: "DELETE", key: o.apiKey })).status).toBe(204);
    expect((await api(`/sig/bucket-keys/${issued.access_key_id}`, { method: "DELETE", key: o.apiKey })).status).toBe(204);
    expect((await api("/sig/bucket-keys", { method: "POST", key: o.apiKey })).status).toBe(201);
    await expectProblem(await api("/sig/bucket-keys/CSUAAAAAAAAAAAAAAAAA", { method: "DELETE", key: o.apiKey }), 404, "not_found");
    await expectProblem(await api(`/sig/bucket-keys/${issued.access_key_id}`, { method: "DELETE", key: org.apiKey }), 404, "not_found");

    const audit = (await (await operator("GET", `/platform/orgs/${o.orgId}/audit`)).json()) as { entries: { action: string }[] };
    expect(audit.entries.filter((e) => e.action === "bucket_key.create")).toHaveLength(3);
    expect(audit.entries.filter((e) => e.action === "bucket_key.revoke")).toHaveLength(1);
  });

  it("lists an expired key as expired, frees its place among the 2 active, and refuses its signed requests", async () => {
    // Keys with a lifetime are R2 temporary credentials (BUCKET_KEYS_MODE=r2), which cannot be minted
    // here; a local key given an expiry in the past stands in for one.
    const o = await createOrg();
    const first = (await (await api("/sig/bucket-keys", { method: "POST", key: o.apiKey })).json()) as IssuedBucketKey & {
      expires_at: string | null;
    };
    expect(first.expires_at).toBeNull();
    expect((await api("/sig/bucket-keys", { method: "POST", key: o.apiKey })).status).toBe(201);
    await expectProblem(await api("/sig/bucket-keys", { method: "POST", key: o.apiKey }), 409, "conflict");

    const past = new Date(Date.now() - 60_000).toISOString();
    await env.DB_US.prepare("UPDATE bucket_keys SET expires_at = ? WHERE access_key_id = ?").bind(past, first.access_key_id).run();
    const list = (await (await api("/sig/bucket-keys", { key: o.apiKey })).json()) as {
      keys: { access_key_id: string; status: string; expires_at: string | null }[];
    };
    expect(list.keys.find((k) => k.access_key_id === first.access_key_id)).toMatchObject({ status: "expired", expires_at: past });
    expect(list.keys.filter((k) => k.status === "active")).toHaveLength(1);

    const s3 = s3Client(first.access_key_id, first.secret_access_key);
    await expect(s3.send(new ListObjectsV2Command({ Bucket: first.bucket, Prefix: first.prefix }))).rejects.toMatchObject({
      name: "InvalidAccessKeyId",
    });
    // Its place is free again: a second active key can be issued, and no third.
    expect((await api("/sig/bucket-keys", { method: "POST", key: o.apiKey })).status).toBe(201);
    await expectProblem(await api("/sig/bucket-keys", { method: "POST", key: o.apiKey }), 409, "conflict");
  });

  it("takes no body but {}, needs no Idempotency-Key, and answers 402 while billing is inactive", async () => {
    const o = await createOrg();
    expect((await api("/sig/bucket-keys", { method: "POST", key: o.apiKey, json: { name: "x" } })).status).toBe(400);
    await expectProblem(
      await api("/sig/bucket-keys", { method: "POST", key: o.apiKey, body: "x", headers: { "Content-Type": "text/plain" } }),
      415,
    );
    const unpaid = await createOrg({ billing: "inactive" });
    await expectProblem(await api("/sig/bucket-keys", { method: "POST", key: unpaid.apiKey }), 402, "billing_required");
    expect((await api("/sig/bucket-keys", { key: unpaid.apiKey })).status).toBe(200);
    const reader = await createOrg({ permissions: ["org:read"] });
    await expectProblem(await api("/sig/bucket-keys", { key: reader.apiKey }), 403, "permission_denied");
  });
});

describe("bucket drops through the S3 endpoint", () => {
  it("uploads a batch with the AWS SDK and reads its summary.json back: one check job with source bucket", async () => {
    const folder = `${key.prefix}batches/b-1/`;
    await s3.send(
      new PutObjectCommand({ Bucket: key.bucket, Key: `${folder}same.png`, Body: signaturePng(WRITER, 5), ContentType: "image/png" }),
    );
    await s3.send(
      new PutObjectCommand({ Bucket: key.bucket, Key: `${folder}other.png`, Body: signaturePng(77, 1), ContentType: "image/png" }),
    );
    await s3.send(
      new PutObjectCommand({
        Bucket: key.bucket,
        Key: `${folder}notes.txt`,
        Body: new TextEncoder().encode("not a document"),
        ContentType: "text/plain",
      }),
    );
    const manifest = {
      policy: "default",
      metadata: { batch: "b-1" },
      defaults: { subject_reference: "alice", input_type: "signature_image" },
      items: [
        { file: "same.png", reference: "loan-1" },
        { file: "other.png", reference: "loan-2" },
        { file: "notes.txt", reference: "loan-3" },
      ],
    };
    await s3.send(
      new PutObjectCommand({ Bucket: key.bucket, Key: `${folder}manifest.json`, Body: json(manifest), ContentType: "application/json" }),
    );

    const summary = JSON.parse(await waitForObject(s3, key.bucket, `${folder}summary.json`)) as Summary;
    expect(summary).toMatchObject({ source: "bucket", status: "completed", error: null, counts: { items: 3, decided: 2, errors: 1 } });
    expect(summary.status_url).toMatch(new RegExp(`/sig/checks/${summary.job_id}$`));
    expect(summary.items.map((i) => i.reference)).toEqual(["loan-1", "loan-2", "loan-3"]);
    expect(["AUTO_APPROVE", "APPROVE"]).toContain(summary.items[0].decision);
    expect(summary.items[0].best_match?.ref_id).toMatch(/^r\d$/);
    expect(summary.items[0].located?.box.w).toBeGreaterThan(0);
    expect(summary.items[0].check_id).toBe(`${summary.job_id}/0`);
    expect(summary.items[1].decision).toBe("FAILED");
    expect(summary.items[2]).toMatchObject({ decision: null, item_index: null, errors: [{ code: "unsupported_format" }] });
    expect(summary.items[2].errors[0].detail).toMatch(/notes\.txt/);

    const jobs = (await (await api("/sig/checks?source=bucket", { key: org.apiKey })).json()) as {
      jobs: { job_id: string; source: string; status: string }[];
    };
    expect(jobs.jobs).toContainEqual(expect.objectContaining({ job_id: summary.job_id, source: "bucket", status: "completed" }));
    const apiJobs = (await (await api("/sig/checks?source=api", { key: org.apiKey })).json()) as { jobs: { job_id: string }[] };
    expect(apiJobs.jobs.map((j) => j.job_id)).not.toContain(summary.job_id);
    const job = (await (await api(`/sig/checks/${summary.job_id}`, { key: org.apiKey })).json()) as {
      source: string;
      item_count: number;
      metadata: unknown;
    };
    expect(job).toMatchObject({ source: "bucket", item_count: 2, metadata: { batch: "b-1" } });

    const listed = await s3.send(new ListObjectsV2Command({ Bucket: key.bucket, Prefix: folder }));
    expect(listed.Contents?.map((c) => c.Key?.slice(folder.length)).sort()).toEqual([
      "manifest.json",
      "notes.txt",
      "other.png",
      "same.png",
      "summary.json",
    ]);
    const head = await s3.send(new HeadObjectCommand({ Bucket: key.bucket, Key: `${folder}same.png` }));
    expect(head.ContentLength).toBe(signaturePng(WRITER, 5).byteLength);
  });

  it("takes a file without a manifest in inbox/<subject>/, uploaded as a multipart upload to the endpoint_url the key came with", async () => {
    // The bare origin, as POST /sig/bucket-keys gives it: bucket names at the root are the S3 endpoint too.
    const s3 = s3Client(key.access_key_id, key.secret_access_key, key.endpoint_url);
    const objectKey = `${key.prefix}inbox/alice/scan-7.png`;
    const created = await s3.send(new CreateMultipartUploadCommand({ Bucket: key.bucket, Key: objectKey, ContentType: "image/png" }));
    const part = await s3.send(
      new UploadPartCommand({
        Bucket: key.bucket,
        Key: objectKey,
        UploadId: created.UploadId,
        PartNumber: 1,
        Body: signaturePng(WRITER, 6),
      }),
    );
    await s3.send(
      new CompleteMultipartUploadCommand({
        Bucket: key.bucket,
        Key: objectKey,
        UploadId: created.UploadId,
        MultipartUpload: { Parts: [{ PartNumber: 1, ETag: part.ETag }] },
      }),
    );
    const summary = JSON.parse(await waitForObject(s3, key.bucket, `${objectKey}.summary.json`)) as Summary;
    expect(summary.status).toBe("completed");
    expect(summary.items).toHaveLength(1);
    expect(summary.items[0].file).toBe("scan-7.png");
    expect(summary.items[0].decision).not.toBeNull();
  });

  it("a malformed manifest gives a summary naming the field, and no job", async () => {
    const folder = `${key.prefix}batches/bad-1/`;
    await s3.send(new PutObjectCommand({ Bucket: key.bucket, Key: `${folder}manifest.json`, Body: json({ items: [{ file: "a.png" }] }) }));
    const summary = JSON.parse(await waitForObject(s3, key.bucket, `${folder}summary.json`)) as Summary;
    expect(summary).toMatchObject({ job_id: null, status: "not_submitted", error: { code: "manifest_invalid" } });
    expect(summary.error!.detail).toMatch(/items\[0\]\.subject_reference/);

    const folder2 = `${key.prefix}batches/bad-2/`;
    await s3.send(new PutObjectCommand({ Bucket: key.bucket, Key: `${folder2}manifest.json`, Body: new TextEncoder().encode("{ nope") }));
    const s2 = JSON.parse(await waitForObject(s3, key.bucket, `${folder2}summary.json`)) as Summary;
    expect(s2.error).toMatchObject({ code: "manifest_invalid" });
    expect(s2.error!.detail).toMatch(/not valid JSON/);

    const stray = `${key.prefix}loose.png`;
    await s3.send(new PutObjectCommand({ Bucket: key.bucket, Key: stray, Body: signaturePng(WRITER, 1) }));
    const s3s = JSON.parse(await waitForObject(s3, key.bucket, `${stray}.summary.json`)) as Summary;
    expect(s3s.error).toMatchObject({ code: "unsupported_location" });
  });

  it("refuses a wrong secret, a revoked key and another tenant's prefix with S3 errors", async () => {
    // Another last character (a secret that already ends in "x" would otherwise stay right).
    const last = key.secret_access_key.slice(-1);
    const wrong = s3Client(key.access_key_id, `${key.secret_access_key.slice(0, -1)}${last === "x" ? "y" : "x"}`);
    expect(
      await s3Error(wrong.send(new PutObjectCommand({ Bucket: key.bucket, Key: `${key.prefix}x.png`, Body: new Uint8Array([1]) }))),
    ).toEqual({
      name: "SignatureDoesNotMatch",
      status: 403,
    });
    expect(
      await s3Error(
        s3Client("CSUAAAAAAAAAAAAAAAAA", key.secret_access_key).send(new HeadObjectCommand({ Bucket: key.bucket, Key: `${key.prefix}x` })),
      ),
    ).toMatchObject({ status: 403 });

    const other = await createOrg();
    const otherKey = await issueBucketKey(other.apiKey);
    const otherS3 = s3Client(otherKey.access_key_id, otherKey.secret_access_key);
    expect(
      await s3Error(
        otherS3.send(new PutObjectCommand({ Bucket: key.bucket, Key: `${key.prefix}batches/evil/manifest.json`, Body: json({}) })),
      ),
    ).toEqual({
      name: "AccessDenied",
      status: 403,
    });
    expect(await s3Error(otherS3.send(new GetObjectCommand({ Bucket: key.bucket, Key: `${key.prefix}batches/b-1/summary.json` })))).toEqual(
      { name: "AccessDenied", status: 403 },
    );
    expect(await s3Error(otherS3.send(new ListObjectsV2Command({ Bucket: key.bucket, Prefix: "orgs/" })))).toEqual({
      name: "AccessDenied",
      status: 403,
    });
    expect(await s3Error(s3.send(new GetObjectCommand({ Bucket: key.bucket, Key: `${key.prefix}nothing-here` })))).toEqual({
      name: "NoSuchKey",
      status: 404,
    });

    expect((await api(`/sig/bucket-keys/${otherKey.access_key_id}`, { method: "DELETE", key: other.apiKey })).status).toBe(204);
    expect(
      await s3Error(
        otherS3.send(new PutObjectCommand({ Bucket: otherKey.bucket, Key: `${otherKey.prefix}x.png`, Body: new Uint8Array([1]) })),
      ),
    ).toEqual({
      name: "InvalidAccessKeyId",
      status: 403,
    });
  });

  it("reads ranges as S3 does: clamps an end past the object, 416 InvalidRange past its end, the whole object for a range it ignores", async () => {
    const objectKey = `${key.prefix}batches/ranges/thirty.bin`;
    const bytes = Uint8Array.from({ length: 30 }, (_, i) => i);
    await s3.send(new PutObjectCommand({ Bucket: key.bucket, Key: objectKey, Body: bytes }));
    const get = (Range: string) => s3.send(new GetObjectCommand({ Bucket: key.bucket, Key: objectKey, Range }));

    const exact = await get("bytes=2-4");
    expect(exact.$metadata.httpStatusCode).toBe(206);
    expect(exact.ContentRange).toBe("bytes 2-4/30");
    expect([...(await exact.Body!.transformToByteArray())]).toEqual([2, 3, 4]);

    for (const [Range, from] of [
      ["bytes=20-40", 20],
      ["bytes=25-", 25],
      ["bytes=-50", 0],
    ] as const) {
      const got = await get(Range);
      expect(got.$metadata.httpStatusCode, Range).toBe(206);
      expect(got.ContentRange, Range).toBe(`bytes ${from}-29/30`);
      expect(got.ContentLength, Range).toBe(30 - from);
      expect([...(await got.Body!.transformToByteArray())], Range).toEqual([...bytes.slice(from)]);
    }

    for (const Range of ["bytes=30-", "bytes=100-200", "bytes=-0"]) {
      const err = (await get(Range).then(
        () => null,
        (e) => e,
      )) as { name: string; message: string; ActualObjectSize?: string; $metadata: { httpStatusCode?: number } } | null;
      expect(err, Range).not.toBeNull();
      expect({ name: err!.name, status: err!.$metadata.httpStatusCode }, Range).toEqual({ name: "InvalidRange", status: 416 });
      expect(err!.message, Range).toMatch(/30 bytes/);
      expect(err!.ActualObjectSize, Range).toBe("30");
    }

    for (const Range of ["bytes=5-2", "bytes=0-1,3-4", "items=0-1", "bytes=x-"]) {
      const got = await get(Range);
      expect(got.$metadata.httpStatusCode, Range).toBe(200);
      expect(got.ContentRange, Range).toBeUndefined();
      expect([...(await got.Body!.transformToByteArray())], Range).toEqual([...bytes]);
    }
  });

  it("answers HEAD with a Range as S3 does: 206 with the range's length and Content-Range, 416 past the end", async () => {
    const objectKey = `${key.prefix}batches/ranges/head-thirty.bin`;
    await s3.send(new PutObjectCommand({ Bucket: key.bucket, Key: objectKey, Body: new Uint8Array(30).fill(7) }));
    const head = (Range?: string) => s3.send(new HeadObjectCommand({ Bucket: key.bucket, Key: objectKey, Range }));

    for (const [Range, range, length] of [
      ["bytes=2-4", "bytes 2-4/30", 3],
      ["bytes=20-40", "bytes 20-29/30", 10],
      ["bytes=-5", "bytes 25-29/30", 5],
    ] as const) {
      const got = await head(Range);
      expect(got.$metadata.httpStatusCode, Range).toBe(206);
      expect({ range: got.ContentRange, length: got.ContentLength, accept: got.AcceptRanges }, Range).toEqual({
        range,
        length,
        accept: "bytes",
      });
    }
    for (const Range of [undefined, "bytes=5-2", "items=0-1"]) {
      const got = await head(Range);
      expect(got.$metadata.httpStatusCode, Range).toBe(200);
      expect({ range: got.ContentRange, length: got.ContentLength }, Range).toEqual({ range: undefined, length: 30 });
    }
    // A HEAD error has no body to name its code (as from S3), so the client knows it by its status alone.
    for (const Range of ["bytes=30-", "bytes=-0"]) expect((await s3Error(head(Range))).status, Range).toBe(416);
  });

  it("reads a range of one version of an object, also when the object is replaced between its size check and the read", async () => {
    const objectKey = `${key.prefix}batches/ranges/replaced.bin`;
    const version = (n: number, size: number) => Uint8Array.from({ length: size }, (_, i) => (n * 50 + i) % 256);
    await env.FILES_US.put(objectKey, version(0, 30));
    // The bucket as the endpoint sees it: each head is followed by a new version (of another size) until `replacing` runs out.
    let replacing = 0;
    let n = 0;
    const files = new Proxy(env.FILES_US, {
      get(target, prop) {
        if (prop === "head")
          return async (k: string) => {
            const meta = await target.head(k);
            if (replacing > 0) {
              replacing--;
              n++;
              await target.put(k, version(n, 30 + 10 * n));
            }
            return meta;
          };
        const v = Reflect.get(target, prop);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const racingEnv = { ...env, FILES_US: files } as typeof env;
    const client = s3Client(key.access_key_id, key.secret_access_key, undefined, async (url, init) =>
      worker.fetch(new Request(url, init), racingEnv, createExecutionContext()),
    );
    const get = (Range: string) => client.send(new GetObjectCommand({ Bucket: key.bucket, Key: objectKey, Range }));

    // Replaced once (30 -> 40 bytes) after the size check: the last 5 bytes are those of the 40-byte version, and say so.
    replacing = 1;
    const once = await get("bytes=-5");
    expect(once.$metadata.httpStatusCode).toBe(206);
    expect(once.ContentRange).toBe("bytes 35-39/40");
    expect([...(await once.Body!.transformToByteArray())]).toEqual([...version(1, 40).slice(35)]);
    expect(once.ETag).toBe(`"${(await env.FILES_US.head(objectKey))!.etag}"`);

    // Replaced after every size check: the whole of one version, 200, whose headers describe it.
    replacing = 2;
    const twice = await get("bytes=0-4");
    expect(twice.$metadata.httpStatusCode).toBe(200);
    expect(twice.ContentRange).toBeUndefined();
    const bytes = await twice.Body!.transformToByteArray();
    expect(twice.ContentLength).toBe(bytes.length);
    expect([...bytes]).toEqual([...version(3, 60)]);
    expect(twice.ETag).toBe(`"${(await env.FILES_US.head(objectKey))!.etag}"`);
  });

  it("answers S3 XML errors to unsigned requests", async () => {
    const res = await worker.fetch(
      new Request(`https://api.countersign.localhost/s3/${key.bucket}/${key.prefix}x`),
      env,
      createExecutionContext(),
    );
    expect(res.status).toBe(403);
    expect(res.headers.get("Content-Type")).toBe("application/xml");
    expect(await res.text()).toMatch(/<Code>AccessDenied<\/Code>/);
  });

  it("carries X-Request-Id on every S3 response, the same id as x-amz-request-id and the XML error's, the caller's own when sent, and the version headers", async () => {
    const seen: Response[] = [];
    const client = s3Client(key.access_key_id, key.secret_access_key, S3_ENDPOINT, async (url, init) => {
      const res = await exports.default.fetch(url, init);
      seen.push(res);
      return res;
    });
    await client.send(
      new PutObjectCommand({ Bucket: key.bucket, Key: `${key.prefix}rid/a.png`, Body: signaturePng(WRITER, 2), ContentType: "image/png" }),
    );
    await client.send(new HeadObjectCommand({ Bucket: key.bucket, Key: `${key.prefix}rid/a.png` }));
    expect(seen.length).toBeGreaterThanOrEqual(2);
    for (const res of seen) {
      expect(res.status).toBe(200);
      expect(res.headers.get("X-Request-Id")).toMatch(/^req_[0-9A-Z]{26}$/);
      expect(res.headers.get("X-Request-Id")).toBe(res.headers.get("x-amz-request-id"));
      expect(res.headers.get("Service-Version")).toBe(LATEST_VERSION);
      expect(res.headers.get("Service-Latest-Version")).toBe(LATEST_VERSION);
    }

    const refused = await worker.fetch(
      new Request(`https://api.countersign.localhost/s3/${key.bucket}/${key.prefix}x`, { headers: { "X-Request-Id": "trace-s3.1" } }),
      env,
      createExecutionContext(),
    );
    expect(refused.status).toBe(403);
    expect(refused.headers.get("X-Request-Id")).toBe("trace-s3.1");
    expect(refused.headers.get("x-amz-request-id")).toBe("trace-s3.1");
    expect(await refused.text()).toContain("<RequestId>trace-s3.1</RequestId>");
    expect(refused.headers.get("Service-Version")).toBe(LATEST_VERSION);
    expect(refused.headers.get("Service-Latest-Version")).toBe(LATEST_VERSION);
  });

  it("a drop without billing gets a rejected job and a summary carrying billing_required; over the quota, quota_exceeded", async () => {
    for (const [setup, code] of [
      [async (o: CreatedOrg) => operator("PUT", `/platform/orgs/${o.orgId}/billing`, { billing: "canceled" }), "billing_required"],
      [async () => undefined, "quota_exceeded"],
    ] as const) {
      const o = await createOrg(code === "quota_exceeded" ? { monthlyQuota: 0 } : {});
      const k = await issueBucketKey(o.apiKey);
      await setup(o);
      const client = s3Client(k.access_key_id, k.secret_access_key);
      const folder = `${k.prefix}batches/r-1/`;
      await client.send(new PutObjectCommand({ Bucket: k.bucket, Key: `${folder}a.png`, Body: signaturePng(WRITER, 2) }));
      await client.send(
        new PutObjectCommand({
          Bucket: k.bucket,
          Key: `${folder}manifest.json`,
          Body: json({ items: [{ file: "a.png", subject_reference: "alice" }] }),
        }),
      );
      const summary = JSON.parse(await waitForObject(client, k.bucket, `${folder}summary.json`)) as Summary;
      expect(summary, code).toMatchObject({ status: "rejected", error: { code } });
      expect(summary.items[0]).toMatchObject({ decision: null, errors: [{ code }] });
      const jobs = (await (await api("/sig/checks?source=bucket&status=rejected", { key: o.apiKey })).json()) as {
        jobs: { job_id: string }[];
      };
      expect(jobs.jobs.map((j) => j.job_id)).toEqual([summary.job_id]);
    }
  });

  it("a drop of a suspended organisation (or one below a suspended parent) gets a rejected summary carrying organisation_suspended", async () => {
    const parent = await createOrg();
    const child = await createOrg({ parentId: parent.orgId });
    for (const [o, suspend] of [
      [await createOrg(), null],
      [child, parent],
    ] as const) {
      await operator("POST", `/platform/orgs/${(suspend ?? o).orgId}/suspend`);
      // The S3 endpoint refuses a suspended organisation's uploads, but R2's own credentials cannot be
      // revoked early (docs/bucket-drops.md): files land in the bucket and their events still arrive.
      const folder = `orgs/${o.orgId}/drops/batches/s-1/`;
      await env.FILES_US.put(`${folder}a.png`, signaturePng(WRITER, 2));
      const manifest = await env.FILES_US.put(`${folder}manifest.json`, json({ items: [{ file: "a.png", subject_reference: "alice" }] }));
      const result = await consume([{ id: `suspended-${o.orgId}`, body: putEvent(key.bucket, `${folder}manifest.json`, manifest!) }]);
      expect(result.explicitAcks).toEqual([`suspended-${o.orgId}`]);

      const summary = JSON.parse(await (await env.FILES_US.get(`${folder}summary.json`))!.text()) as Summary;
      expect(summary).toMatchObject({ status: "rejected", error: { code: "organisation_suspended" } });
      expect(summary.error!.detail).toContain(suspend ? `suspended through ${suspend.orgId}` : "is suspended");
      expect(summary.items[0]).toMatchObject({ decision: null, errors: [{ code: "organisation_suspended" }] });
      const items = await env.DB_US.prepare("SELECT COUNT(*) AS n FROM check_items WHERE org_id = ? AND state = 'done'")
        .bind(o.orgId)
        .first<{ n: number }>();
      expect(items?.n).toBe(0);
    }
  });

  it("makes one job of an event that R2 delivers twice", async () => {
    const folder = `${key.prefix}batches/twice/`;
    // Written straight to the bucket, as R2 would store them; then the same notification arrives twice.
    await env.FILES_US.put(`${folder}a.png`, signaturePng(WRITER, 4));
    const manifest = await env.FILES_US.put(
      `${folder}manifest.json`,
      json({ job_id: "twice-1", items: [{ file: "a.png", subject_reference: "alice" }] }),
    );
    const event = putEvent(key.bucket, `${folder}manifest.json`, manifest!);
    for (let delivery = 0; delivery < 2; delivery++) {
      const result = await consume([
        { id: `m-${delivery}-a`, body: event },
        { id: `m-${delivery}-b`, body: event },
      ]);
      expect(result.explicitAcks.length).toBe(2);
    }
    const summary = JSON.parse(await waitForObject(s3, key.bucket, `${folder}summary.json`)) as Summary;
    expect(summary.job_id).toBe("twice-1");
    const drops = await env.DB_US.prepare("SELECT COUNT(*) AS n FROM bucket_drops WHERE org_id = ? AND object_key = ?")
      .bind(org.orgId, `${folder}manifest.json`)
      .first<{ n: number }>();
    expect(drops?.n).toBe(1);
    const jobs = (await (await api("/sig/checks?source=bucket", { key: org.apiKey })).json()) as { jobs: { job_id: string }[] };
    expect(jobs.jobs.filter((j) => j.job_id === "twice-1")).toHaveLength(1);
    const usage = await env.DB_US.prepare("SELECT COUNT(*) AS n FROM check_items WHERE org_id = ? AND job_id = 'twice-1'")
      .bind(org.orgId)
      .first<{ n: number }>();
    expect(usage?.n).toBe(1);
  });

  it("submits a drop once when two of its deliveries run at the same time, also when the one submitting fails", async () => {
    const o = await createOrg();
    await enrolWriter(o.apiKey, "alice", WRITER, 3);
    const hookPath = uniquePath("drop-race");
    const hook = await api("/sig/webhooks", {
      method: "POST",
      key: o.apiKey,
      json: { url: outsideUrl(hookPath), events: ["bucket.drop.completed"] },
    });
    expect(hook.status, await hook.clone().text()).toBe(201);
    await registerReceiver(hookPath, { secrets: [((await hook.json()) as { secret: string }).secret] });

    const folder = `orgs/${o.orgId}/drops/batches/race-1/`;
    const names = ["a.png", "b.png", "c.png"];
    const eventOf = (objectKey: string, stored: R2Object) => putEvent(key.bucket, objectKey, stored);
    const deliver = (id: string, body: unknown, to: typeof env, attempts = 1) => consume([{ id, body, attempts }], { env: to });
    // The delayed message that ends the wait is not needed here.
    const noDeadline = { ...env, BUCKET_EVENTS_QUEUE: { send: async () => undefined } } as unknown as typeof env;

    // The manifest's event finds c.png missing: the drop waits for it.
    for (const name of names.slice(0, 2)) await env.FILES_US.put(`${folder}${name}`, signaturePng(WRITER, 2));
    const manifestKey = `${folder}manifest.json`;
    const manifest = await env.FILES_US.put(
      manifestKey,
      json({ job_id: "race-1", defaults: { subject_reference: "alice" }, items: names.map((file) => ({ file })) }),
    );
    const manifestEvent = eventOf(manifestKey, manifest!);
    expect((await deliver("race-manifest-1", manifestEvent, noDeadline)).explicitAcks).toEqual(["race-manifest-1"]);
    const dropRow = () => dropState(o.orgId, manifestKey);
    expect(await dropRow()).toBe("waiting");

    // c.png arrives. Its event and the manifest's event (delivered again) are handled at the same time,
    // and both find every file there; the first copy into the job's inbox fails after a while, as a
    // storage outage would, leaving the delivery that made the job to be retried.
    const c = await env.FILES_US.put(`${folder}c.png`, signaturePng(WRITER, 3));
    let failed = false;
    const flaky = new Proxy(env.FILES_US, {
      get(target, prop) {
        if (prop === "put")
          return async (k: string, v: unknown, opts?: R2PutOptions) => {
            if (k.includes("/inbox/") && !failed) {
              failed = true;
              if (v instanceof ReadableStream) await v.cancel();
              await new Promise((r) => setTimeout(r, 1500));
              throw new Error("R2 is unavailable");
            }
            return target.put(k, v as never, opts);
          };
        const value = Reflect.get(target, prop);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const racing = { ...noDeadline, FILES_US: flaky } as unknown as typeof env;
    const bodies: Record<string, unknown> = { "race-file-c": eventOf(`${folder}c.png`, c!), "race-manifest-2": manifestEvent };
    const results = await Promise.all(Object.entries(bodies).map(([id, body]) => deliver(id, body, racing)));
    expect(failed).toBe(true);
    // The delivery that held the drop failed and is retried; the other had nothing to do.
    const retried = results.flatMap((r) => r.retryMessages.map((m) => m.msgId));
    expect(retried).toHaveLength(1);
    expect(results.flatMap((r) => r.explicitAcks)).toEqual(Object.keys(bodies).filter((id) => id !== retried[0]));
    expect((await deliver(retried[0], bodies[retried[0]], noDeadline, 2)).explicitAcks).toEqual([retried[0]]);

    const summary = await until(
      async () => {
        const obj = await env.FILES_US.get(`${folder}summary.json`);
        return obj ? (JSON.parse(await obj.text()) as Summary) : null;
      },
      (s) => s !== null,
      { what: "the drop's summary.json", pauseMs: 150 },
    );
    expect(summary).toMatchObject({ job_id: "race-1", status: "completed", error: null, counts: { items: 3, decided: 3, errors: 0 } });
    for (const item of summary!.items) expect(item.errors, item.file).toEqual([]);
    expect(await dropRow()).toBe("summarised");
    const count = async (sql: string) => (await env.DB_US.prepare(sql).bind(o.orgId).first<{ n: number }>())?.n;
    expect(await count("SELECT COUNT(*) AS n FROM check_jobs WHERE org_id = ?")).toBe(1);
    expect(await count("SELECT COUNT(*) AS n FROM check_items WHERE org_id = ? AND state = 'done'")).toBe(3);
    const listed = await env.FILES_US.list({ prefix: folder });
    expect(listed.objects.map((ob) => ob.key.slice(folder.length)).filter((k) => k.endsWith("summary.json"))).toEqual(["summary.json"]);
    const events = () => count("SELECT COUNT(*) AS n FROM webhook_events WHERE org_id = ? AND type = 'bucket.drop.completed'");
    expect(await until(events, (n) => (n ?? 0) > 0, { what: "the bucket.drop.completed event" })).toBe(1);
  }, 90_000);

  it("reads a batch's files a bounded number of times each, however many files it has and whichever comes first", async () => {
    const N = 10;
    const names = Array.from({ length: N }, (_, i) => `f-${i}.png`);
    for (const order of ["manifest first", "files first"] as const) {
      const folder = `${key.prefix}batches/many-${order === "manifest first" ? "m" : "f"}/`;
      // The region's bucket as the consumer sees it, noting each HEAD and GET of a file of the batch.
      const reads: string[] = [];
      const files = new Proxy(env.FILES_US, {
        get(target, prop) {
          const value = Reflect.get(target, prop);
          if (prop === "get" || prop === "head")
            return (k: string, o?: R2GetOptions) => {
              if (k.startsWith(folder) && !k.endsWith(MANIFEST)) reads.push(`${prop} ${k.slice(folder.length)}`);
              return prop === "get" ? target.get(k, o) : target.head(k);
            };
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      const to = { ...env, FILES_US: files, BUCKET_EVENTS_QUEUE: { send: async () => undefined } } as unknown as typeof env;
      let deliveries = 0;
      const upload = async (name: string, body: Uint8Array) => {
        const stored = await env.FILES_US.put(`${folder}${name}`, body);
        const id = `many-${order}-${deliveries++}`;
        const result = await consume([{ id, body: putEvent(key.bucket, `${folder}${name}`, stored!) }], { env: to });
        expect(result.explicitAcks).toEqual([id]);
      };
      const uploadManifest = () =>
        upload(MANIFEST, json({ defaults: { subject_reference: "alice" }, items: names.map((file) => ({ file })) }));
      const state = () => dropState(org.orgId, `${folder}${MANIFEST}`);

      if (order === "manifest first") {
        await uploadManifest();
        for (const [i, name] of names.entries()) {
          if (i === N - 1) {
            // A file uploaded again (as many as there are files, by now) does not stand in for one still missing.
            await upload(names[0], signaturePng(WRITER, 4));
            expect(await state(), order).toBe("waiting");
          }
          await upload(name, signaturePng(WRITER, (i % 5) + 1));
        }
      } else {
        for (const [i, name] of names.entries()) await upload(name, signaturePng(WRITER, (i % 5) + 1));
        await uploadManifest();
      }
      // Each file: at most a HEAD (looking for it), a GET (inspecting it) and one more (copying it into the job).
      expect(reads.length, `${order}:\n${reads.join("\n")}`).toBeLessThanOrEqual(3 * N);

      const summary = JSON.parse(await waitForObject(s3, key.bucket, `${folder}summary.json`)) as Summary;
      expect(summary, order).toMatchObject({ status: "completed", error: null, counts: { items: N, decided: N, errors: 0 } });
      expect(summary.items.map((i) => i.file)).toEqual(names);
    }
  }, 120_000);

  it("refuses a file over the document limit from its size alone, and checks the rest of the drop", async () => {
    const folder = `${key.prefix}batches/big-1/`;
    // Written straight to the bucket (the S3 endpoint takes at most 50 MB a request; the AWS CLI would
    // send this as a multipart upload), then its manifest's notification is delivered.
    await env.FILES_US.put(`${folder}a.png`, signaturePng(WRITER, 2), { httpMetadata: { contentType: "image/png" } });
    await env.FILES_US.put(`${folder}huge.png`, new Uint8Array(MAX_DOCUMENT_BYTES + 1));
    const manifest = await env.FILES_US.put(
      `${folder}manifest.json`,
      json({
        defaults: { subject_reference: "alice" },
        items: [
          { file: "a.png", reference: "small" },
          { file: "huge.png", reference: "big" },
        ],
      }),
    );
    const event = putEvent(key.bucket, `${folder}manifest.json`, manifest!, { action: "CompleteMultipartUpload" });
    // The region's bucket as the consumer sees it, noting every object whose bytes it reads (cancelling
    // a body reads none of it).
    const reads: string[] = [];
    const bound = <T extends object>(t: T, p: string | symbol) => {
      const v = Reflect.get(t, p);
      return typeof v === "function" ? v.bind(t) : v;
    };
    const files = new Proxy(env.FILES_US, {
      get(target, prop) {
        if (prop !== "get") return bound(target, prop);
        return async (k: string, o?: R2GetOptions) => {
          const obj = await target.get(k, o);
          if (!obj || !("body" in obj)) return obj;
          return new Proxy(obj, {
            get(t, p) {
              if (p === "arrayBuffer" || p === "text" || p === "json" || p === "bytes" || p === "blob") reads.push(k);
              if (p !== "body") return bound(t, p);
              return new Proxy(t.body, {
                get(b, q) {
                  if (q !== "cancel") reads.push(k);
                  return bound(b, q);
                },
              });
            },
          });
        };
      },
    });
    expect((await consume([{ id: "big-1", body: event }], { env: { ...env, FILES_US: files } })).explicitAcks).toEqual(["big-1"]);
    expect(reads).toContain(`${folder}a.png`);
    expect(reads).not.toContain(`${folder}huge.png`);

    const summary = JSON.parse(await waitForObject(s3, key.bucket, `${folder}summary.json`)) as Summary;
    expect(summary).toMatchObject({ status: "completed", error: null, counts: { items: 2, decided: 1, errors: 1 } });
    expect(summary.items[0]).toMatchObject({ file: "a.png", item_index: 0, errors: [] });
    expect(summary.items[0].decision).not.toBeNull();
    expect(summary.items[1]).toMatchObject({ file: "huge.png", item_index: null, decision: null, errors: [{ code: "too_large" }] });
    expect(summary.items[1].errors[0].detail).toContain("huge.png");
    expect(summary.items[1].errors[0].detail).toContain(String(MAX_DOCUMENT_BYTES));
    const job = (await (await api(`/sig/checks/${summary.job_id}`, { key: org.apiKey })).json()) as { item_count: number };
    expect(job.item_count).toBe(1);
  });

  it("a re-upload of a manifest whose job_id this folder's earlier drop submitted leaves that summary.json alone", async () => {
    // A second run of `aws s3 cp --recursive` sends the same manifest again: a new event, a new drop.
    const folder = `${key.prefix}batches/again/`;
    await s3.send(
      new PutObjectCommand({ Bucket: key.bucket, Key: `${folder}a.png`, Body: signaturePng(WRITER, 4), ContentType: "image/png" }),
    );
    const manifest = json({ job_id: "again-1", items: [{ file: "a.png", subject_reference: "alice" }] });
    await s3.send(new PutObjectCommand({ Bucket: key.bucket, Key: `${folder}manifest.json`, Body: manifest }));
    const first = JSON.parse(await waitForObject(s3, key.bucket, `${folder}summary.json`)) as Summary;
    expect(first).toMatchObject({ job_id: "again-1", status: "completed", error: null });

    const stored = await env.FILES_US.put(`${folder}manifest.json`, manifest);
    const again = putEvent(key.bucket, `${folder}manifest.json`, stored!, { at: new Date(Date.now() + 1000) });
    expect((await consume([{ id: "again-2", body: again }])).explicitAcks).toEqual(["again-2"]);

    const drops = await env.DB_US.prepare(
      "SELECT drop_id, state, summary_key FROM bucket_drops WHERE org_id = ? AND object_key = ? ORDER BY created_at",
    )
      .bind(org.orgId, `${folder}manifest.json`)
      .all<{ drop_id: string; state: string; summary_key: string }>();
    expect(drops.results).toHaveLength(2);
    const second = drops.results.find((d) => d.summary_key !== `${folder}summary.json`);
    expect(second).toMatchObject({ state: "summarised", summary_key: `${folder}${second?.drop_id}.summary.json` });

    // The finished job's summary stands; the refusal is beside it, where a listing of the folder shows it.
    expect(JSON.parse(await waitForObject(s3, key.bucket, `${folder}summary.json`))).toEqual(first);
    const refusal = JSON.parse(await waitForObject(s3, key.bucket, second!.summary_key)) as Summary;
    expect(refusal).toMatchObject({ job_id: null, status: "not_submitted", error: { code: "job_id_in_use" } });
    expect(refusal.error!.detail).toMatch(/again-1/);
    expect(refusal.error!.detail).toMatch(/earlier upload/);
    // Every item counted as an error says why: the drop's own error.
    expect(refusal.counts.errors).toBe(refusal.items.length);
    for (const item of refusal.items) expect(item).toMatchObject({ decision: null, errors: [{ code: "job_id_in_use" }] });
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: key.bucket, Prefix: folder }));
    expect(listed.Contents?.map((c) => c.Key)).toContain(second!.summary_key);
    const jobs = (await (await api("/sig/checks?source=bucket", { key: org.apiKey })).json()) as { jobs: { job_id: string }[] };
    expect(jobs.jobs.filter((j) => j.job_id === "again-1")).toHaveLength(1);
  });

  it("a manifest uploaded before its files waits for them; when the wait ends, a missing file is an item error", async () => {
    const folder = `${key.prefix}batches/late/`;
    await s3.send(
      new PutObjectCommand({
        Bucket: key.bucket,
        Key: `${folder}manifest.json`,
        Body: json({
          job_id: "late-1",
          items: [
            { file: "a.png", subject_reference: "alice" },
            { file: "b.png", subject_reference: "alice" },
          ],
        }),
      }),
    );
    await s3.send(new PutObjectCommand({ Bucket: key.bucket, Key: `${folder}a.png`, Body: signaturePng(WRITER, 3) }));
    // Both events are handled (the manifest's and the file's) while b.png is still missing: the drop waits.
    const drop = async () =>
      env.DB_US.prepare("SELECT drop_id, state FROM bucket_drops WHERE org_id = ? AND object_key = ?")
        .bind(org.orgId, `${folder}manifest.json`)
        .first<{ drop_id: string; state: string }>();
    expect((await until(drop, (d) => d !== null, { what: "the drop's row" }))?.state).toBe("waiting");
    expect(await s3Error(s3.send(new HeadObjectCommand({ Bucket: key.bucket, Key: `${folder}summary.json` })))).toMatchObject({
      status: 404,
    });

    // The wait ends (the delayed message the manifest's event sent, delivered now).
    await consume([{ id: "deadline-1", body: { kind: "drop_deadline", orgId: org.orgId, dropId: (await drop())!.drop_id } }]);
    const summary = JSON.parse(await waitForObject(s3, key.bucket, `${folder}summary.json`)) as Summary;
    expect(summary).toMatchObject({ job_id: "late-1", status: "completed", counts: { items: 2, decided: 1, errors: 1 } });
    expect(summary.items[1]).toMatchObject({ file: "b.png", decision: null, errors: [{ code: "file_missing" }] });
  });

  it("waits out an organisation's move with fresh delayed messages, not its retries, until a deadline", async () => {
    const o = await createOrg();
    const folder = `orgs/${o.orgId}/drops/batches/m-1/`;
    await env.FILES_US.put(`${folder}a.png`, signaturePng(WRITER, 2));
    const manifest = await env.FILES_US.put(`${folder}manifest.json`, json({ items: [{ file: "a.png", subject_reference: "alice" }] }));
    const event = putEvent(key.bucket, `${folder}manifest.json`, manifest!);
    await operator("POST", `/platform/orgs/${o.orgId}/move/begin`, { region: "eu" });
    // The bucket-events queue as the consumer sees it: what it sends is kept here, not delivered.
    const sent: { body: typeof event & { deferUntil?: number }; delaySeconds?: number }[] = [];
    const queueEnv = {
      ...env,
      BUCKET_EVENTS_QUEUE: {
        send: async (body: unknown, o?: { delaySeconds?: number }) =>
          void sent.push({ body: body as never, delaySeconds: o?.delaySeconds }),
      },
    } as unknown as typeof env;
    const deliver = (id: string, body: unknown) => consume([{ id, body }], { env: queueEnv });

    const first = await deliver("move-1", event);
    expect(first.explicitAcks).toEqual(["move-1"]);
    expect(first.retryMessages).toEqual([]);
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ body: { ...event, deferUntil: expect.any(Number) }, delaySeconds: 30 });
    expect(sent[0].body.deferUntil).toBeGreaterThan(Date.now() + 23 * 3600_000);
    // The re-sent message waits again under the same deadline.
    expect((await deliver("move-2", sent[0].body)).explicitAcks).toEqual(["move-2"]);
    expect(sent[1].body.deferUntil).toBe(sent[0].body.deferUntil);
    // Past the deadline it is retried as a failure (and ends in the dead-letter queue once those run out).
    const late = await deliver("move-3", { ...event, deferUntil: Date.now() - 1 });
    expect(late.explicitAcks).toEqual([]);
    expect(late.retryMessages.map((m: { msgId: string }) => m.msgId)).toEqual(["move-3"]);
    expect(sent).toHaveLength(2);
  });

  it("a bucket event that ran out of retries ends its drop with a failed summary.json", async () => {
    const folder = `${key.prefix}batches/dead-1/`;
    // A manifest whose file never comes: its drop is recorded and waits.
    const manifest = await env.FILES_US.put(`${folder}manifest.json`, json({ items: [{ file: "never.png", subject_reference: "alice" }] }));
    const event = putEvent(key.bucket, `${folder}manifest.json`, manifest!);
    const queueEnv = { ...env, BUCKET_EVENTS_QUEUE: { send: async () => undefined } } as unknown as typeof env;
    const deliver = (queue: string, id: string, body: unknown, to = env) => consume([{ id, body }], { queue, env: to });
    expect((await deliver("countersign-bucket-events", "dead-1", event, queueEnv)).explicitAcks).toEqual(["dead-1"]);
    const row = () => dropState(org.orgId, event.object.key);
    expect(await row()).toBe("waiting");

    // Its message (or a later one of the drop) is dead-lettered.
    expect((await deliver("countersign-dead-letter", "dlq-1", event)).explicitAcks).toEqual(["dlq-1"]);
    const read = async (k: string) => {
      const obj = await env.FILES_US.get(k);
      return obj ? (JSON.parse(await obj.text()) as Summary) : null;
    };
    const summary = await read(`${folder}summary.json`);
    expect(summary).toMatchObject({ job_id: null, status: "failed", error: { code: "processing_failed" } });
    expect(summary!.error!.detail).toMatch(/repeated attempts.*manifest\.json again/);
    expect(await row()).toBe("summarised");
    // Delivered to the dead-letter queue again: the summary stands as it was.
    expect((await deliver("countersign-dead-letter", "dlq-2", event)).explicitAcks).toEqual(["dlq-2"]);
    expect(await read(`${folder}summary.json`)).toEqual(summary);

    // A single file whose every delivery failed before its drop was even recorded.
    const single = `${key.prefix}inbox/alice/lost.png`;
    const stored = await env.FILES_US.put(single, signaturePng(WRITER, 1));
    const lost = { ...event, object: { key: single, size: stored!.size, eTag: stored!.etag } };
    expect((await deliver("countersign-dead-letter", "dlq-3", lost)).explicitAcks).toEqual(["dlq-3"]);
    expect(await read(`${single}.summary.json`)).toMatchObject({ status: "failed", error: { code: "processing_failed" } });
  });

  it("a drop submitted by a file event whose items could not be queued is finished by that event's retry", async () => {
    const folder = `${key.prefix}batches/unqueued-1/`;
    const noDeadline = { ...env, BUCKET_EVENTS_QUEUE: { send: async () => undefined } } as unknown as typeof env;
    await env.FILES_US.put(`${folder}a.png`, signaturePng(WRITER, 2));
    const manifestKey = `${folder}${MANIFEST}`;
    const manifest = await env.FILES_US.put(
      manifestKey,
      json({ job_id: "unqueued-1", defaults: { subject_reference: "alice" }, items: [{ file: "a.png" }, { file: "b.png" }] }),
    );
    expect(
      (await consume([{ id: "unq-m", body: putEvent(key.bucket, manifestKey, manifest!) }], { env: noDeadline })).explicitAcks,
    ).toEqual(["unq-m"]);
    const row = () => dropState(org.orgId, manifestKey);
    expect(await row()).toBe("waiting");

    // b.png's event submits the drop; queueing its items then fails once.
    const b = await env.FILES_US.put(`${folder}b.png`, signaturePng(WRITER, 3));
    const fileEvent = putEvent(key.bucket, `${folder}b.png`, b!);
    let failed = false;
    const checkQueue = new Proxy(env.CHECK_QUEUE, {
      get(target, prop) {
        if (prop === "sendBatch" && !failed)
          return async () => {
            failed = true;
            throw new Error("the queue is unavailable");
          };
        const value = Reflect.get(target, prop);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const flaky = { ...noDeadline, CHECK_QUEUE: checkQueue } as unknown as typeof env;
    const first = await consume([{ id: "unq-b", body: fileEvent }], { env: flaky });
    expect(failed).toBe(true);
    expect(first.retryMessages.map((m) => m.msgId)).toEqual(["unq-b"]);
    expect(await row()).toBe("submitted");

    // Its retry finishes the drop: the items are queued, checked, and the summary written.
    expect((await consume([{ id: "unq-b", body: fileEvent, attempts: 2 }], { env: noDeadline })).explicitAcks).toEqual(["unq-b"]);
    const summary = JSON.parse(await waitForObject(s3, key.bucket, `${folder}summary.json`)) as Summary;
    expect(summary).toMatchObject({ job_id: "unqueued-1", status: "completed", counts: { items: 2, decided: 2, errors: 0 } });
    expect(await row()).toBe("summarised");
  });

  it("a refused drop whose summary could not be written is summarised by the retry, and nothing of it is checked", async () => {
    const o = await createOrg();
    await operator("PUT", `/platform/orgs/${o.orgId}/billing`, { billing: "canceled" });
    const folder = `orgs/${o.orgId}/drops/batches/refused-1/`;
    await env.FILES_US.put(`${folder}a.png`, signaturePng(WRITER, 2));
    const manifest = await env.FILES_US.put(`${folder}${MANIFEST}`, json({ items: [{ file: "a.png", subject_reference: "alice" }] }));
    const event = putEvent(key.bucket, `${folder}${MANIFEST}`, manifest!);
    let failed = false;
    const files = new Proxy(env.FILES_US, {
      get(target, prop) {
        if (prop === "put")
          return async (k: string, v: unknown, opts?: R2PutOptions) => {
            if (k.endsWith("summary.json") && !failed) {
              failed = true;
              throw new Error("R2 is unavailable");
            }
            return target.put(k, v as never, opts);
          };
        const value = Reflect.get(target, prop);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const first = await consume([{ id: "refused-m", body: event }], { env: { ...env, FILES_US: files } as unknown as typeof env });
    expect(failed).toBe(true);
    expect(first.retryMessages.map((m) => m.msgId)).toEqual(["refused-m"]);

    expect((await consume([{ id: "refused-m", body: event, attempts: 2 }])).explicitAcks).toEqual(["refused-m"]);
    const summary = JSON.parse(await (await env.FILES_US.get(`${folder}summary.json`))!.text()) as Summary;
    expect(summary).toMatchObject({ status: "rejected", error: { code: "billing_required" } });
    expect(summary.items[0]).toMatchObject({ decision: null, errors: [{ code: "billing_required" }] });
    const count = async (sql: string) => (await env.DB_US.prepare(sql).bind(o.orgId).first<{ n: number }>())?.n;
    expect(await count("SELECT COUNT(*) AS n FROM check_jobs WHERE org_id = ? AND status = 'rejected'")).toBe(1);
    // Give a wrongly queued item the time to run: none does.
    await new Promise((r) => setTimeout(r, 1500));
    expect(await count("SELECT COUNT(*) AS n FROM check_items WHERE org_id = ? AND state = 'done'")).toBe(0);
  });

  it("a batch file's event that ran out of retries ends the drop it emptied; the manifest's event left a deadline all the same", async () => {
    const folder = `${key.prefix}batches/dead-file-1/`;
    const manifestKey = `${folder}${MANIFEST}`;
    const manifest = await env.FILES_US.put(manifestKey, json({ items: [{ file: "a.png", subject_reference: "alice" }] }));
    const manifestEvent = putEvent(key.bucket, manifestKey, manifest!);
    const sent: unknown[] = [];
    const queueEnv = { ...env, BUCKET_EVENTS_QUEUE: { send: async (body: unknown) => void sent.push(body) } } as unknown as typeof env;
    expect((await consume([{ id: "df-m", body: manifestEvent }], { env: queueEnv })).explicitAcks).toEqual(["df-m"]);
    const row = () =>
      env.DB_US.prepare("SELECT drop_id, state, missing FROM bucket_drops WHERE org_id = ? AND object_key = ?")
        .bind(org.orgId, manifestKey)
        .first<{ drop_id: string; state: string; missing: string }>();
    const dropId = (await row())!.drop_id;
    expect(sent).toEqual([{ kind: "drop_deadline", orgId: org.orgId, dropId }]);

    // a.png's event empties the missing list, then fails reading the file (every retry, as it turns out).
    const a = await env.FILES_US.put(`${folder}a.png`, signaturePng(WRITER, 2));
    const fileEvent = putEvent(key.bucket, `${folder}a.png`, a!);
    const files = new Proxy(env.FILES_US, {
      get(target, prop) {
        if (prop === "get")
          return async (k: string, o?: R2GetOptions) => {
            if (k.endsWith("a.png")) throw new Error("R2 is unavailable");
            return target.get(k, o);
          };
        const value = Reflect.get(target, prop);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const broken = { ...queueEnv, FILES_US: files } as unknown as typeof env;
    expect((await consume([{ id: "df-a", body: fileEvent }], { env: broken })).retryMessages.map((m) => m.msgId)).toEqual(["df-a"]);
    expect(await row()).toMatchObject({ state: "waiting", missing: "[]" });

    // The manifest's event, redelivered while that delivery holds the lock, still leaves a deadline message.
    await env.DB_US.prepare("UPDATE bucket_drops SET lock_owner = 'df-a', lock_until = ? WHERE org_id = ? AND drop_id = ?")
      .bind(new Date(Date.now() + 600_000).toISOString(), org.orgId, dropId)
      .run();
    sent.length = 0;
    expect((await consume([{ id: "df-m2", body: manifestEvent }], { env: queueEnv })).explicitAcks).toEqual(["df-m2"]);
    expect(sent).toEqual([{ kind: "drop_deadline", orgId: org.orgId, dropId }]);
    expect((await row())?.state).toBe("waiting");
    await env.DB_US.prepare("UPDATE bucket_drops SET lock_owner = NULL, lock_until = NULL WHERE org_id = ? AND drop_id = ?")
      .bind(org.orgId, dropId)
      .run();

    // The file's event is dead-lettered: another delivery may still be retrying the drop, so it is not
    // failed from here; its deadline message is sent at once instead.
    sent.length = 0;
    const dlq = await consume([{ id: "df-dlq", body: fileEvent }], { queue: "countersign-dead-letter", env: queueEnv });
    expect(dlq.explicitAcks).toEqual(["df-dlq"]);
    expect(sent).toEqual([{ kind: "drop_deadline", orgId: org.orgId, dropId }]);
    expect((await row())?.state).toBe("waiting");
    expect(await env.FILES_US.head(`${folder}summary.json`)).toBeNull();
    // That deadline message's own dead letter (its retries spent as well) ends the drop with a failed summary.
    const deadline = { kind: "drop_deadline", orgId: org.orgId, dropId };
    expect((await consume([{ id: "df-dl-dlq", body: deadline }], { queue: "countersign-dead-letter" })).explicitAcks).toEqual([
      "df-dl-dlq",
    ]);
    const summary = JSON.parse(await (await env.FILES_US.get(`${folder}summary.json`))!.text()) as Summary;
    expect(summary).toMatchObject({ job_id: null, status: "failed", error: { code: "processing_failed" } });
    expect((await row())?.state).toBe("summarised");
  });

  it("checks a dropped photo of a form with a template: the summary names the box the signature was found in", async () => {
    const created = await postTemplate(org.apiKey, templateBody({ template_id: "loan-v3", boxes: BOX_SPEC }, blankFormPng()));
    expect(created.status, await created.clone().text()).toBe(201);
    const folder = `${key.prefix}batches/forms-1/`;
    await s3.send(
      new PutObjectCommand({
        Bucket: key.bucket,
        Key: `${folder}form.png`,
        Body: photographedForm(WRITER, 1).png,
        ContentType: "image/png",
      }),
    );
    await s3.send(
      new PutObjectCommand({
        Bucket: key.bucket,
        Key: `${folder}manifest.json`,
        Body: json({
          items: [{ file: "form.png", subject_reference: "alice", template_id: "loan-v3", input_type: "photo", reference: "F-1" }],
        }),
      }),
    );
    const summary = JSON.parse(await waitForObject(s3, key.bucket, `${folder}summary.json`)) as Summary & {
      items: { template: { registered: boolean } | null }[];
    };
    expect(summary.status).toBe("completed");
    expect(summary.items[0].located?.box_name).toBe("co_borrower");
    expect(summary.items[0].template?.registered).toBe(true);
    expect(summary.items[0].decision).not.toBeNull();
  });
});

/** env.DB_US as a delivery sees it through `hook`, which may stand in for the statement of some SQL (or throw). */
function dbWith(hook: (sql: string, stmt: D1PreparedStatement) => D1PreparedStatement | undefined): D1Database {
  return new Proxy(env.DB_US, {
    get(target, prop) {
      if (prop === "prepare")
        return (sql: string) => {
          const stmt = target.prepare(sql);
          return hook(sql, stmt) ?? stmt;
        };
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** The statement that records a drop's next state (submitted, summarised). */
const ADVANCE = /^\s*UPDATE bucket_drops SET state = /;

describe("bucket drops and their jobs", () => {
  const noDeadline = { ...env, BUCKET_EVENTS_QUEUE: { send: async () => undefined } } as unknown as typeof env;
  const readSummary = async (k: string) => {
    const obj = await env.FILES_US.get(k);
    return obj ? (JSON.parse(await obj.text()) as Summary) : null;
  };
  const summaryOf = (k: string) =>
    until(
      () => readSummary(k),
      (s) => s !== null,
      { what: `${k}`, pauseMs: 100 },
    ) as Promise<Summary>;
  const jobStatus = async (orgId: string, jobId: string) =>
    (
      await env.DB_US.prepare("SELECT status FROM check_jobs WHERE org_id = ? AND job_id = ?")
        .bind(orgId, jobId)
        .first<{ status: string }>()
    )?.status;
  /** A delivery that dies between storing a new job's rows and initialising its Job DO (its inputs cannot be copied, nor its rows removed). */
  const cutOff = () =>
    ({
      ...noDeadline,
      FILES_US: new Proxy(env.FILES_US, {
        get(target, prop) {
          if (prop === "put")
            return async (k: string, v: unknown, opts?: R2PutOptions) => {
              if (!k.includes("/inbox/")) return target.put(k, v as never, opts);
              if (v instanceof ReadableStream) await v.cancel();
              throw new Error("R2 is unavailable");
            };
          const value = Reflect.get(target, prop);
          return typeof value === "function" ? value.bind(target) : value;
        },
      }),
      DB_US: dbWith((sql) => {
        if (/^\s*delete from "check_/i.test(sql)) throw new Error("D1 is unavailable");
        return undefined;
      }),
    }) as unknown as typeof env;

  it("two drops naming one job_id at the same time never share its job: the second is refused with job_id_in_use", async () => {
    const o = await createOrg();
    await enrolWriter(o.apiKey, "alice", WRITER, 3);
    const manifestIn = async (batch: string) => {
      const folder = `orgs/${o.orgId}/drops/batches/${batch}/`;
      await env.FILES_US.put(`${folder}a.png`, signaturePng(WRITER, 2));
      const stored = await env.FILES_US.put(
        `${folder}${MANIFEST}`,
        json({ job_id: "shared-1", items: [{ file: "a.png", subject_reference: "alice" }] }),
      );
      return { folder, event: putEvent(key.bucket, `${folder}${MANIFEST}`, stored!) };
    };
    const a = await manifestIn("share-a");
    const b = await manifestIn("share-b");

    // A makes the job and is held before it records its drop submitted; B runs meanwhile.
    let reached!: () => void;
    const atGate = new Promise<void>((r) => {
      reached = r;
    });
    let open!: () => void;
    const gate = new Promise<void>((r) => {
      open = r;
    });
    const held = dbWith((sql, stmt) => {
      if (!ADVANCE.test(sql)) return undefined;
      return {
        bind: (...args: unknown[]) => ({
          run: async () => {
            reached();
            await gate;
            return stmt.bind(...args).run();
          },
        }),
      } as unknown as D1PreparedStatement;
    });
    const first = consume([{ id: "share-a", body: a.event }], { env: { ...noDeadline, DB_US: held } as unknown as typeof env });
    await atGate;
    expect((await consume([{ id: "share-b", body: b.event }], { env: noDeadline })).explicitAcks).toEqual(["share-b"]);
    open();
    expect((await first).explicitAcks).toEqual(["share-a"]);

    const refused = await summaryOf(`${b.folder}summary.json`);
    expect(refused).toMatchObject({ job_id: null, status: "not_submitted", error: { code: "job_id_in_use" } });
    expect(refused.error!.detail).toMatch(/shared-1/);
    const made = await summaryOf(`${a.folder}summary.json`);
    expect(made).toMatchObject({ job_id: "shared-1", status: "completed", counts: { items: 1, decided: 1, errors: 0 } });
    const count = async (sql: string) => (await env.DB_US.prepare(sql).bind(o.orgId).first<{ n: number }>())?.n;
    expect(await count("SELECT COUNT(*) AS n FROM bucket_drops WHERE org_id = ? AND job_id = 'shared-1'")).toBe(1);
    expect(await count("SELECT COUNT(*) AS n FROM check_items WHERE org_id = ? AND job_id = 'shared-1'")).toBe(1);

    // The same drop's message delivered again is not a conflict with itself: nothing changes.
    expect((await consume([{ id: "share-a", body: a.event, attempts: 2 }], { env: noDeadline })).explicitAcks).toEqual(["share-a"]);
    expect(await readSummary(`${a.folder}summary.json`)).toEqual(made);
  });

  it("a job cut off while being made is made again by the drop's retry, and ended (not left queued) by its dead letter", async () => {
    const o = await createOrg();
    await enrolWriter(o.apiKey, "alice", WRITER, 3);
    const dropIn = async (batch: string) => {
      const folder = `orgs/${o.orgId}/drops/batches/${batch}/`;
      await env.FILES_US.put(`${folder}a.png`, signaturePng(WRITER, 2));
      const stored = await env.FILES_US.put(
        `${folder}${MANIFEST}`,
        json({ job_id: batch, items: [{ file: "a.png", subject_reference: "alice" }] }),
      );
      const event = putEvent(key.bucket, `${folder}${MANIFEST}`, stored!);
      expect((await consume([{ id: `${batch}-m`, body: event }], { env: cutOff() })).retryMessages.map((m) => m.msgId)).toEqual([
        `${batch}-m`,
      ]);
      // Its rows are there, queued, and its Job DO is not.
      expect(await jobStatus(o.orgId, batch)).toBe("queued");
      expect(await dropState(o.orgId, `${folder}${MANIFEST}`)).toBe("waiting");
      return { folder, event };
    };

    const retried = await dropIn("half-1");
    expect((await consume([{ id: "half-1-m", body: retried.event, attempts: 2 }], { env: noDeadline })).explicitAcks).toEqual(["half-1-m"]);
    expect(await summaryOf(`${retried.folder}summary.json`)).toMatchObject({
      job_id: "half-1",
      status: "completed",
      counts: { items: 1, decided: 1, errors: 0 },
    });

    const dead = await dropIn("half-2");
    expect((await consume([{ id: "half-2-dlq", body: dead.event }], { queue: "countersign-dead-letter" })).explicitAcks).toEqual([
      "half-2-dlq",
    ]);
    const summary = await summaryOf(`${dead.folder}summary.json`);
    expect(summary).toMatchObject({ job_id: "half-2", status: "failed", counts: { items: 1, decided: 0, errors: 1 } });
    expect(summary.items[0].errors).toEqual([expect.objectContaining({ code: "processing_failed" })]);
    const listed = (await (await api("/sig/checks?source=bucket", { key: o.apiKey })).json()) as {
      jobs: { job_id: string; status: string }[];
    };
    expect(listed.jobs.find((j) => j.job_id === "half-2")?.status).toBe("failed");
    expect(await dropState(o.orgId, `${dead.folder}${MANIFEST}`)).toBe("summarised");
  });

  it("a file's event dead-lettered after submitting its drop has the job's items queued; if they cannot be, it ends them", async () => {
    const o = await createOrg();
    await enrolWriter(o.apiKey, "alice", WRITER, 3);
    const neverQueued = {
      ...noDeadline,
      CHECK_QUEUE: {
        sendBatch: async () => {
          throw new Error("the queue is unavailable");
        },
      },
    } as unknown as typeof env;
    const submittedOnly = async (name: string) => {
      const fileKey = `orgs/${o.orgId}/drops/inbox/alice/${name}`;
      const event = putEvent(key.bucket, fileKey, (await env.FILES_US.put(fileKey, signaturePng(WRITER, 2)))!);
      for (let attempt = 1; attempt <= 3; attempt++) {
        const r = await consume([{ id: `${name}-e`, body: event, attempts: attempt }], { env: neverQueued });
        expect(r.retryMessages.map((m) => m.msgId)).toEqual([`${name}-e`]);
      }
      expect(await dropState(o.orgId, fileKey)).toBe("submitted");
      return { fileKey, event };
    };

    // The queue works again by the time the dead letter is handled: the items are queued and checked.
    const queued = await submittedOnly("late.png");
    expect((await consume([{ id: "late-dlq", body: queued.event }], { queue: "countersign-dead-letter" })).explicitAcks).toEqual([
      "late-dlq",
    ]);
    const checked = await summaryOf(`${queued.fileKey}.summary.json`);
    expect(checked).toMatchObject({ status: "completed", counts: { items: 1, decided: 1, errors: 0 } });

    // It still does not: the items end as processing_failed, so the job finishes and the summary says so.
    const ended = await submittedOnly("lost.png");
    const dlq = await consume([{ id: "lost-dlq", body: ended.event }], { queue: "countersign-dead-letter", env: neverQueued });
    expect(dlq.explicitAcks).toEqual(["lost-dlq"]);
    const summary = await summaryOf(`${ended.fileKey}.summary.json`);
    expect(summary).toMatchObject({ status: "failed", counts: { items: 1, decided: 0, errors: 1 } });
    expect(summary.items[0].errors).toEqual([expect.objectContaining({ code: "processing_failed" })]);
    expect(await jobStatus(o.orgId, summary.job_id!)).toBe("failed");
    expect(await dropState(o.orgId, ended.fileKey)).toBe("summarised");

    // A batch file's event that submitted its drop: its dead letter sends the drop its deadline message,
    // which queues the items.
    const folder = `orgs/${o.orgId}/drops/batches/dl-file/`;
    const manifestKey = `${folder}${MANIFEST}`;
    const manifest = await env.FILES_US.put(manifestKey, json({ items: [{ file: "a.png", subject_reference: "alice" }] }));
    expect(
      (await consume([{ id: "dlf-m", body: putEvent(key.bucket, manifestKey, manifest!) }], { env: noDeadline })).explicitAcks,
    ).toEqual(["dlf-m"]);
    const fileEvent = putEvent(key.bucket, `${folder}a.png`, (await env.FILES_US.put(`${folder}a.png`, signaturePng(WRITER, 2)))!);
    expect((await consume([{ id: "dlf-a", body: fileEvent }], { env: neverQueued })).retryMessages.map((m) => m.msgId)).toEqual(["dlf-a"]);
    expect(await dropState(o.orgId, manifestKey)).toBe("submitted");
    const sent: unknown[] = [];
    const queueEnv = { ...env, BUCKET_EVENTS_QUEUE: { send: async (body: unknown) => void sent.push(body) } } as unknown as typeof env;
    expect((await consume([{ id: "dlf-dlq", body: fileEvent }], { queue: "countersign-dead-letter", env: queueEnv })).explicitAcks).toEqual(
      ["dlf-dlq"],
    );
    expect(sent).toEqual([{ kind: "drop_deadline", orgId: o.orgId, dropId: expect.stringMatching(/^drop_/) }]);
    expect((await consume([{ id: "dlf-deadline", body: sent[0] }])).explicitAcks).toEqual(["dlf-deadline"]);
    expect(await summaryOf(`${folder}summary.json`)).toMatchObject({ status: "completed", counts: { items: 1, decided: 1, errors: 0 } });
  });

  it("a retry takes up the job its drop made with the plan it was made from, also when a file was deleted since", async () => {
    const o = await createOrg();
    await enrolWriter(o.apiKey, "alice", WRITER, 3);
    const folder = `orgs/${o.orgId}/drops/batches/gone-1/`;
    await env.FILES_US.put(`${folder}a.png`, signaturePng(WRITER, 2));
    await env.FILES_US.put(`${folder}b.png`, signaturePng(WRITER, 3));
    const stored = await env.FILES_US.put(
      `${folder}${MANIFEST}`,
      json({ job_id: "gone-1", defaults: { subject_reference: "alice" }, items: [{ file: "a.png" }, { file: "b.png" }] }),
    );
    const event = putEvent(key.bucket, `${folder}${MANIFEST}`, stored!);
    // The job is made; recording the drop submitted fails.
    const failing = dbWith((sql) => {
      if (ADVANCE.test(sql)) throw new Error("D1 is unavailable");
      return undefined;
    });
    const first = await consume([{ id: "gone-m", body: event }], { env: { ...noDeadline, DB_US: failing } as unknown as typeof env });
    expect(first.retryMessages.map((m) => m.msgId)).toEqual(["gone-m"]);
    expect(await jobStatus(o.orgId, "gone-1")).toBe("queued");

    // a.png is deleted before the retry: the job holds its copy, and every item of the job is checked.
    await env.FILES_US.delete(`${folder}a.png`);
    expect((await consume([{ id: "gone-m", body: event, attempts: 2 }], { env: noDeadline })).explicitAcks).toEqual(["gone-m"]);
    const summary = await summaryOf(`${folder}summary.json`);
    expect(summary).toMatchObject({ job_id: "gone-1", status: "completed", counts: { items: 2, decided: 2, errors: 0 } });
    expect(summary.items.map((i) => [i.file, i.item_index, i.check_id])).toEqual([
      ["a.png", 0, "gone-1/0"],
      ["b.png", 1, "gone-1/1"],
    ]);
  });
});
