import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { App } from "../app";
import { MAX_POLICY_BODY_BYTES, PolicySpecSchema, type Policy } from "../domain/policy";
import { notFound } from "../http/problem";
import { AUTH_PROBLEMS, defineRoute, problems } from "../http/route";
import { Identifier, queryInteger } from "../http/schemas";
import { mayUseDirectoryCache } from "../http/auth";
import type { AppEnv } from "../http/context";
import { getPolicyVersion, latestPoliciesForRead, latestPolicyForRead } from "../storage/policies";
import { POLICY_CACHE_TTL_MS, type PolicyCacheUse } from "../storage/policy-cache";
import { services } from "../http/services";
import { absoluteUrl } from "../http/location";

// Policy payloads: PolicySpec and the Policy members beyond name and version are designed here.

const PolicySpecDoc = PolicySpecSchema.openapi("PolicySpec", {
  description:
    "Designed here. Scores are the verification core's calibrated scores in [0, 1]. Omitted members take the built-in default's values; unknown members are refused.",
});

const PolicyDoc = z
  .object({
    name: z.string().openapi({ example: "default" }),
    version: z.number().int().min(1),
    spec: PolicySpecDoc,
    created_at: z.string().openapi({ format: "date-time" }),
    builtin: z.boolean().openapi({ description: "True for the built-in default policy (version 1 of `default`)" }),
  })
  .openapi("Policy");

const PolicyListDoc = z.object({ policies: z.array(PolicyDoc) }).openapi("PolicyList");

const NameParams = z.object({ name: Identifier.openapi({ param: { name: "name", in: "path" }, example: "default" }) });

/**
 * Reads may be served from the isolate's policy cache (at most POLICY_CACHE_TTL_MS old; docs/hot-path.md)
 * exactly where the directory cache may be used; a refresh it starts outlives the response.
 */
function policyCacheUse(c: Context<AppEnv>): PolicyCacheUse {
  return {
    mayUseCache: mayUseDirectoryCache(c.req.method, c.req.path),
    background: (work) => c.executionCtx.waitUntil(work),
  };
}

function policyJson(p: Policy) {
  return { name: p.name, version: p.version, spec: p.spec, created_at: p.createdAt, builtin: p.builtin };
}

const list = defineRoute(
  { permission: "org:read" },
  {
    method: "get",
    path: "/sig/policies",
    tags: ["policies"],
    summary: "The latest version of each policy, the built-in default included",
    description: `A version published through another instance of the service may take up to ${POLICY_CACHE_TTL_MS / 1000} seconds to be listed; checks always use the latest version.`,
    responses: {
      200: { description: "Policies, newest first", content: { "application/json": { schema: PolicyListDoc } } },
      ...problems(...AUTH_PROBLEMS),
    },
  },
);

const get = defineRoute(
  { permission: "org:read" },
  {
    method: "get",
    path: "/sig/policies/{name}",
    tags: ["policies"],
    summary: "One version of a policy (default: the latest)",
    description: `Without \`version\`, a version published through another instance of the service may take up to ${POLICY_CACHE_TTL_MS / 1000} seconds to be shown; checks always use the latest version.`,
    request: {
      params: NameParams,
      query: z.object({
        version: queryInteger({ min: 1 })
          .optional()
          .openapi({
            param: { name: "version", in: "query" },
            example: 1,
            description: "The version to read (1 or more); default the latest",
          }),
      }),
    },
    responses: {
      200: { description: "The policy version", content: { "application/json": { schema: PolicyDoc } } },
      ...problems(...AUTH_PROBLEMS, 404),
    },
  },
);

const put = defineRoute(
  { permission: "sig:settings:manage" },
  {
    method: "put",
    path: "/sig/policies/{name}",
    tags: ["policies"],
    summary: "Publish a policy: a body that differs from the latest version creates the next version",
    description: `Versions are immutable. The body is compared with the latest version canonically (member order and number formatting do not matter). At most ${MAX_POLICY_BODY_BYTES} bytes. Audited as policy.update.`,
    "x-max-body": MAX_POLICY_BODY_BYTES,
    request: {
      params: NameParams,
      body: { required: true, content: { "application/json": { schema: PolicySpecDoc } } },
    },
    responses: {
      201: {
        description: "A new version was created",
        headers: z.object({ Location: z.string().openapi({ description: "The new version's absolute URL" }) }),
        content: { "application/json": { schema: PolicyDoc } },
      },
      200: { description: "The body equals the latest version, which is returned", content: { "application/json": { schema: PolicyDoc } } },
      ...problems(...AUTH_PROBLEMS, 404, 413, 415),
    },
  },
);

export function registerPolicyRoutes(app: App): void {
  app.openapi(list, async (c) => {
    const { org, store } = c.get("tenant");
    const policies = await latestPoliciesForRead(store, org, policyCacheUse(c));
    return c.json({ policies: policies.map(policyJson) }, 200);
  });

  app.openapi(get, async (c) => {
    const { org, store } = c.get("tenant");
    const { name } = c.req.valid("param");
    const { version } = c.req.valid("query");
    const policy =
      version === undefined
        ? await latestPolicyForRead(store, org, name, policyCacheUse(c))
        : await getPolicyVersion(store.db, org, name, version);
    if (!policy) throw notFound(version === undefined ? "policy" : "policy version");
    return c.json(policyJson(policy), 200);
  });

  app.openapi(put, async (c) => {
    const { name } = c.req.valid("param");
    const { created, policy } = await services(c).policies.publish(name, c.req.valid("json"));
    if (!created) return c.json(policyJson(policy), 200);
    c.header("Location", absoluteUrl(c, `/sig/policies/${encodeURIComponent(name)}?version=${policy.version}`));
    return c.json(policyJson(policy), 201);
  });
}
