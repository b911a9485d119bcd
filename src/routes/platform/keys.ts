import { z } from "@hono/zod-openapi";
import type { App } from "../../app";
import { mintApiKey } from "../../domain/api-key";
import type { Env } from "../../env";
import { configOf } from "../../config";
import type { Org, Permission } from "../../domain/tenancy";
import { ProblemError, invalidField, notFound } from "../../http/problem";
import { AUTH_PROBLEMS, defineRoute, problems } from "../../http/route";
import { recordAudit } from "../../storage/audit";
import { directory, type ApiKeyRecord } from "../../storage/directory";
import { regionStore } from "../../storage/regions";
import { OPERATOR_ACTOR, platformRoute } from "./operator";
import { ApiKeyCreatedSchema, ApiKeyListSchema, KeyCreateSchema, KeyIdParam, OrgIdParam, keyJson } from "./schemas";

const created = {
  description: "The key; `key` is shown only here",
  headers: z.object({ "Cache-Control": z.string().openapi({ example: "no-store" }) }),
  content: { "application/json": { schema: ApiKeyCreatedSchema } },
};
const listed = {
  description: "The organisation's keys, newest first, by prefix only",
  content: { "application/json": { schema: ApiKeyListSchema } },
};
const keyBody = { body: { required: true, content: { "application/json": { schema: KeyCreateSchema } } } };

/** Mints a key for `org` and audits it there. The full key is returned once and never stored. */
export async function mintKeyFor(
  env: Env,
  org: Org,
  input: { permissions: Permission[]; name?: string; expiresAt?: string },
  createdBy: string,
  requestId: string,
): Promise<ApiKeyRecord & { key: string }> {
  if (input.expiresAt && Date.parse(input.expiresAt) <= Date.now()) throw invalidField("body.expires_at", "must be in the future");
  const minted = await mintApiKey(configOf(env).apiKeyEnv, org.region);
  const record = await directory(env.DIRECTORY).insertApiKey({
    keyId: minted.keyId,
    orgId: org.id,
    name: input.name ?? null,
    prefix: minted.prefix,
    secretHash: minted.secretHash,
    permissions: [...new Set(input.permissions)],
    createdBy,
    expiresAt: input.expiresAt ? new Date(input.expiresAt).toISOString() : null,
  });
  await recordAudit(regionStore(env, org.region).db, {
    orgId: org.id,
    actor: createdBy,
    action: "api_key.create",
    target: record.keyId,
    detail: { permissions: record.permissions, prefix: record.prefix },
    requestId,
  });
  return { ...record, key: minted.key };
}

async function revokeKeyOf(env: Env, org: Org, keyId: string, actor: string, requestId: string): Promise<void> {
  if (!(await directory(env.DIRECTORY).revokeApiKey(org.id, keyId))) throw notFound("API key");
  await recordAudit(regionStore(env, org.region).db, { orgId: org.id, actor, action: "api_key.revoke", target: keyId, requestId });
}

// Operator routes: any organisation, any permissions (the operator holds them all).

const OrgParams = z.object({ org_id: OrgIdParam });

const opMint = platformRoute({
  method: "post",
  path: "/platform/orgs/{org_id}/keys",
  summary: "Mint an API key with chosen permissions (operator)",
  request: { params: OrgParams, ...keyBody },
  responses: { 201: created, ...problems(400, 401, 404) },
});

const opList = platformRoute({
  method: "get",
  path: "/platform/orgs/{org_id}/keys",
  summary: "List an organisation's API keys (operator)",
  request: { params: OrgParams },
  responses: { 200: listed, ...problems(401, 404) },
});

const opRevoke = platformRoute({
  method: "delete",
  path: "/platform/orgs/{org_id}/keys/{key_id}",
  summary: "Revoke an API key (operator); revoking twice is fine",
  request: { params: z.object({ org_id: OrgIdParam, key_id: KeyIdParam }) },
  responses: { 204: { description: "Revoked" }, ...problems(401, 404) },
});

// Tenant routes: a caller mints keys for the organisation it acts in, never with more than it holds.
// No Idempotency-Key: a replay would have to keep the secret, so a retry mints another key (like bucket keys).

const tenantMint = defineRoute(
  { permission: "sig:settings:manage", billing: true, idempotency: "none" },
  {
    method: "post",
    path: "/platform/keys",
    tags: ["platform"],
    summary: "Mint an API key for the caller's organisation, with a subset of the caller's permissions",
    request: keyBody,
    responses: { 201: created, ...problems(...AUTH_PROBLEMS, 402) },
  },
);

const tenantList = defineRoute(
  { permission: "org:read" },
  {
    method: "get",
    path: "/platform/keys",
    tags: ["platform"],
    summary: "List the organisation's API keys (prefix only)",
    responses: { 200: listed, ...problems(...AUTH_PROBLEMS) },
  },
);

const tenantRevoke = defineRoute(
  { permission: "sig:settings:manage" },
  {
    method: "delete",
    path: "/platform/keys/{key_id}",
    tags: ["platform"],
    summary: "Revoke one of the organisation's API keys",
    request: { params: z.object({ key_id: KeyIdParam }) },
    responses: { 204: { description: "Revoked" }, ...problems(...AUTH_PROBLEMS, 404) },
  },
);

function createdResponse(k: ApiKeyRecord & { key: string }) {
  return { ...keyJson(k), key: k.key };
}

export function registerKeyRoutes(app: App): void {
  app.openapi(opMint, async (c) => {
    const org = await directory(c.env.DIRECTORY).getOrg(c.req.valid("param").org_id);
    if (!org) throw notFound("organisation");
    const body = c.req.valid("json");
    const key = await mintKeyFor(
      c.env,
      org,
      { permissions: body.permissions, name: body.name, expiresAt: body.expires_at },
      OPERATOR_ACTOR,
      c.get("requestId"),
    );
    c.header("Cache-Control", "no-store");
    return c.json(createdResponse(key), 201);
  });

  app.openapi(opList, async (c) => {
    const dir = directory(c.env.DIRECTORY);
    const orgId = c.req.valid("param").org_id;
    if (!(await dir.getOrg(orgId))) throw notFound("organisation");
    return c.json({ keys: (await dir.listApiKeys(orgId)).map(keyJson) }, 200);
  });

  app.openapi(opRevoke, async (c) => {
    const { org_id, key_id } = c.req.valid("param");
    const org = await directory(c.env.DIRECTORY).getOrg(org_id);
    if (!org) throw notFound("organisation");
    await revokeKeyOf(c.env, org, key_id, OPERATOR_ACTOR, c.get("requestId"));
    return c.body(null, 204);
  });

  app.openapi(tenantMint, async (c) => {
    const caller = c.get("caller");
    const body = c.req.valid("json");
    const excess = body.permissions.filter((p) => !caller.permissions.has(p));
    if (excess.length > 0) {
      throw new ProblemError("permission_denied", `A key cannot get permissions its creator does not hold: ${excess.join(", ")}.`, {
        extensions: { permissions: excess },
      });
    }
    const key = await mintKeyFor(
      c.env,
      c.get("tenant").org,
      { permissions: body.permissions, name: body.name, expiresAt: body.expires_at },
      caller.actor,
      c.get("requestId"),
    );
    c.header("Cache-Control", "no-store");
    return c.json(createdResponse(key), 201);
  });

  app.openapi(tenantList, async (c) => {
    const keys = await directory(c.env.DIRECTORY).listApiKeys(c.get("tenant").org.id);
    return c.json({ keys: keys.map(keyJson) }, 200);
  });

  app.openapi(tenantRevoke, async (c) => {
    await revokeKeyOf(c.env, c.get("tenant").org, c.req.valid("param").key_id, c.get("caller").actor, c.get("requestId"));
    return c.body(null, 204);
  });
}
