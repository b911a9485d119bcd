/**
 * Bucket keys (spec 4.6): the S3 access keys of the tenant's drop prefix. BucketKeyList, the key record
 * and the revoke route are designed here. At most 2 active keys; the secret is shown once.
 */
import { configOf } from "../config";
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { App } from "../app";
import type { AppEnv } from "../http/context";
import { ProblemError, invalidField, notFound } from "../http/problem";
import { AUTH_PROBLEMS, defineRoute, problems } from "../http/route";
import {
  MAX_ACTIVE_BUCKET_KEYS,
  bucketKeySealing,
  bucketKeyStatus,
  isAccessKeyId,
  mintAccessKeyId,
  mintSecretAccessKey,
} from "../domain/bucket-key";
import { sealSecret } from "../domain/sealed-secret";
import { bucketKeysRepo, type BucketKeyRecord } from "../storage/bucket-keys";
import { dropPrefix } from "../storage/drops";
import { dropConfig, type DropConfig } from "../s3/config";
import { R2_KEY_TTL_SECONDS, mintR2Credentials, revokeR2Credentials } from "../s3/r2-credentials";
import { logError } from "../util/log";

const Location = z.object({
  endpoint_url: z.string().openapi({ description: "The S3 endpoint (`--endpoint-url`); address it path-style" }),
  bucket: z.string().openapi({ description: "The bucket of the organisation's home region" }),
  prefix: z.string().openapi({ description: "The key prefix the keys may reach: `orgs/<org_id>/drops/`" }),
  region: z.string().openapi({ description: "The region to sign with (`auto`)" }),
});

const BucketKeyDoc = z
  .object({
    access_key_id: z.string(),
    status: z.enum(["active", "revoked", "expired"]).openapi({
      description:
        "`expired`: an r2-mode key past its lifetime (R2 temporary credentials last 7 days); it no longer works or counts as active",
    }),
    created_at: z.string(),
    revoked_at: z.string().nullable(),
    expires_at: z.string().nullable().openapi({ description: "When the key stops working (r2 mode); null: it does not expire" }),
    last_used_at: z.string().nullable().openapi({ description: "Last signed request (to the minute), local endpoint only" }),
  })
  .openapi("BucketKey", { description: "Designed here. The secret is never shown again." });

const BucketKeyListDoc = Location.extend({
  keys: z.array(BucketKeyDoc).openapi({ description: "Newest first, revoked keys included" }),
}).openapi("BucketKeyList", {
  description: "Designed here: the keys of the bucket's user, and where they reach.",
});

const NewBucketKeyDoc = Location.extend({
  access_key_id: z.string(),
  secret_access_key: z.string().openapi({ description: "Shown once" }),
  session_token: z
    .string()
    .nullable()
    .openapi({ description: "r2 mode only: the session token that goes with the key (AWS_SESSION_TOKEN)" }),
  created_at: z.string(),
  expires_at: z.string().nullable().openapi({ description: "When the key stops working (r2 mode: 7 days on); null: it does not expire" }),
}).openapi("NewBucketKey", { description: "Designed here. Served with Cache-Control: no-store." });

const KeyParams = z.object({
  access_key_id: z.string().openapi({ param: { name: "access_key_id", in: "path" }, example: "CSUABCDEFGHIJKLMNOPQ" }),
});

const NOT_CONFIGURED =
  "Bucket keys are not configured here: set BUCKET_KEYS_MODE (local or r2) and its settings (see docs/bucket-drops.md).";

function dropConfigOf(c: Context<AppEnv>): DropConfig {
  const config = dropConfig(c.env);
  if (!config) throw new ProblemError("not_implemented", NOT_CONFIGURED);
  return config;
}

function locationOf(c: Context<AppEnv>, config: DropConfig) {
  const { org } = c.get("tenant");
  return {
    endpoint_url: config.endpointUrl(new URL(c.req.url).origin, org.region),
    bucket: config.bucketName(org.region),
    prefix: dropPrefix(org.id),
    region: config.signingRegion,
  };
}

function keyJson(k: BucketKeyRecord, now: number) {
  return {
    access_key_id: k.accessKeyId,
    status: bucketKeyStatus(k, now),
    created_at: k.createdAt,
    revoked_at: k.revokedAt,
    expires_at: k.expiresAt,
    last_used_at: k.lastUsedAt,
  };
}

const list = defineRoute(
  { permission: "sig:settings:manage" },
  {
    method: "get",
    path: "/sig/bucket-keys",
    tags: ["bucket-keys"],
    summary: "The access keys of the bucket's user, and the endpoint, bucket and prefix they reach",
    description:
      "Drops go to `<bucket>/<prefix>batches/<batch>/` (a manifest.json naming the files) or `<prefix>inbox/<subject_reference>/<file>`; " +
      "each becomes a check job with source `bucket` and a summary.json beside it (docs/bucket-drops.md). With BUCKET_KEYS_MODE=local the " +
      "S3 endpoint is this service itself (path-style, Signature V4); with r2, R2's S3 endpoint. 501 when not configured.",
    responses: {
      200: { description: "Keys", content: { "application/json": { schema: BucketKeyListDoc } } },
      ...problems(...AUTH_PROBLEMS, 501),
    },
  },
);

const create = defineRoute(
  { permission: "sig:settings:manage", idempotency: "none", billing: true },
  {
    method: "post",
    path: "/sig/bucket-keys",
    tags: ["bucket-keys"],
    summary: "Issue an access key (the secret is shown once)",
    description:
      `At most ${MAX_ACTIVE_BUCKET_KEYS} active keys (409 conflict; revoke one first). The body, if any, must be {}. No Idempotency-Key: a retry ` +
      "issues another key. Served with Cache-Control: no-store. Audited as bucket_key.create.",
    request: {
      body: {
        required: false,
        content: { "application/json": { schema: z.object({}).strict().openapi({ description: "Empty object, or no body" }) } },
      },
    },
    responses: {
      201: {
        description: "Issued",
        headers: { "Cache-Control": { description: "no-store", schema: { type: "string" } } },
        content: { "application/json": { schema: NewBucketKeyDoc } },
      },
      ...problems(...AUTH_PROBLEMS, 402, 409, 415, 501),
    },
  },
);

const revoke = defineRoute(
  { permission: "sig:settings:manage" },
  {
    method: "delete",
    path: "/sig/bucket-keys/{access_key_id}",
    tags: ["bucket-keys"],
    summary: "Revoke an access key",
    description:
      "Signed requests with it are refused (InvalidAccessKeyId) from then on. 204 also when it was revoked before. Audited as bucket_key.revoke.",
    request: { params: KeyParams },
    responses: { 204: { description: "Revoked" }, ...problems(...AUTH_PROBLEMS, 404, 501) },
  },
);

async function assertEmptyBody(c: Context<AppEnv>): Promise<void> {
  const text = await c.req.text();
  if (text.trim() === "") return;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw invalidField("body", "malformed JSON");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body) || Object.keys(body).length > 0)
    throw invalidField("body", "must be {} or absent");
}

export function registerBucketKeyRoutes(app: App): void {
  app.openapi(list, async (c) => {
    const config = dropConfigOf(c);
    const { org, store } = c.get("tenant");
    const keys = await bucketKeysRepo(store.db).list(org.id);
    const now = Date.now();
    return c.json({ ...locationOf(c, config), keys: keys.map((k) => keyJson(k, now)) }, 200);
  });

  app.openapi(create, async (c) => {
    const config = dropConfigOf(c);
    await assertEmptyBody(c);
    const { org, store } = c.get("tenant");
    const repo = bucketKeysRepo(store.db);
    const now = Date.now();
    const active = (await repo.list(org.id)).filter((k) => bucketKeyStatus(k, now) === "active").length;
    if (active >= MAX_ACTIVE_BUCKET_KEYS) throw tooMany();
    const location = locationOf(c, config);
    let accessKeyId: string,
      secret: string,
      sessionToken: string | null = null;
    if (config.mode === "r2") {
      const minted = await mintR2Credentials(c.env, location.bucket, location.prefix);
      ({ accessKeyId, secretAccessKey: secret, sessionToken } = minted);
    } else {
      accessKeyId = mintAccessKeyId(org.region);
      secret = mintSecretAccessKey();
    }
    const record: BucketKeyRecord = {
      accessKeyId,
      orgId: org.id,
      // r2 mode: R2 verifies its own credentials, so no secret is kept here at all.
      secretBox:
        config.mode === "local" ? await sealSecret(bucketKeySealing(configOf(c.env).drops.secretKey ?? ""), accessKeyId, secret) : "",
      createdBy: c.get("caller").actor,
      createdAt: new Date(now).toISOString(),
      revokedAt: null,
      lastUsedAt: null,
      expiresAt: config.mode === "r2" ? new Date(now + R2_KEY_TTL_SECONDS * 1000).toISOString() : null,
    };
    const inserted = await repo.insert(record, MAX_ACTIVE_BUCKET_KEYS, {
      orgId: org.id,
      actor: record.createdBy,
      action: "bucket_key.create",
      target: `bucket_key:${accessKeyId}`,
      requestId: c.get("requestId"),
    });
    if (!inserted) {
      // A concurrent request took the last place after the credential was minted. R2 cannot revoke it
      // (see r2-credentials.ts); it is never shown to anyone and lapses at its expiry, but say so.
      if (config.mode === "r2") logError("bucket key: minted R2 credential discarded (active limit reached)", undefined, { accessKeyId });
      throw tooMany();
    }
    c.header("Cache-Control", "no-store");
    return c.json(
      {
        ...location,
        access_key_id: accessKeyId,
        secret_access_key: secret,
        session_token: sessionToken,
        created_at: record.createdAt,
        expires_at: record.expiresAt,
      },
      201,
    );
  });

  app.openapi(revoke, async (c) => {
    const config = dropConfigOf(c);
    const { org, store } = c.get("tenant");
    const id = c.req.valid("param").access_key_id;
    if (!isAccessKeyId(id) && config.mode === "local") throw notFound("bucket key");
    const revoked = await bucketKeysRepo(store.db).revoke(org.id, id, {
      orgId: org.id,
      actor: c.get("caller").actor,
      action: "bucket_key.revoke",
      target: `bucket_key:${id}`,
      requestId: c.get("requestId"),
    });
    if (!revoked) throw notFound("bucket key");
    if (config.mode === "r2") await revokeR2Credentials(c.env, id);
    return c.body(null, 204);
  });
}

function tooMany(): ProblemError {
  return new ProblemError(
    "conflict",
    `The organisation has ${MAX_ACTIVE_BUCKET_KEYS} active bucket keys, the most it may have; revoke one first.`,
  );
}
