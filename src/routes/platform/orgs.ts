import { configOf } from "../../config";
import { z } from "@hono/zod-openapi";
import type { App } from "../../app";
import type { Org, RegionName } from "../../domain/tenancy";
import { moveTenantGate } from "../../../durable-objects/tenant-gate-client";
import { ProblemError, invalidField, notFound } from "../../http/problem";
import { problems } from "../../http/route";
import { LATEST_VERSION } from "../../http/versioning";
import { versionProblem } from "../../versions/registry";
import { normaliseHostEntry } from "../../fetch/url-policy";
import { recordAudit } from "../../storage/audit";
import { directory } from "../../storage/directory";
import { copyOrgData, deleteOrgData } from "../../storage/move";
import { regionStore } from "../../storage/regions";
import type { Env } from "../../env";
import { OPERATOR_ACTOR, platformRoute } from "./operator";
import { BillingSchema, OrgCreateSchema, OrgIdParam, OrgSchema, RegionSchema, orgJson } from "./schemas";

const orgResponse = (description: string) => ({ description, content: { "application/json": { schema: OrgSchema } } });
const OrgParams = z.object({ org_id: OrgIdParam });

const createOrg = platformRoute({
  method: "post",
  path: "/platform/orgs",
  summary: "Create an organisation (operator)",
  request: { body: { required: true, content: { "application/json": { schema: OrgCreateSchema } } } },
  responses: { 201: orgResponse("The organisation"), ...problems(400, 401, 415) },
});

const getOrg = platformRoute({
  method: "get",
  path: "/platform/orgs/{org_id}",
  summary: "Read an organisation (operator)",
  request: { params: OrgParams },
  responses: { 200: orgResponse("The organisation"), ...problems(401, 404) },
});

const suspendOrg = platformRoute({
  method: "post",
  path: "/platform/orgs/{org_id}/suspend",
  summary: "Suspend an organisation and, through it, all its descendants (operator)",
  request: { params: OrgParams },
  responses: { 200: orgResponse("The organisation"), ...problems(401, 404) },
});

const unsuspendOrg = platformRoute({
  method: "post",
  path: "/platform/orgs/{org_id}/unsuspend",
  summary: "Lift an organisation's suspension (operator)",
  request: { params: OrgParams },
  responses: { 200: orgResponse("The organisation"), ...problems(401, 404) },
});

const setBilling = platformRoute({
  method: "put",
  path: "/platform/orgs/{org_id}/billing",
  summary: "Change the billing state (operator)",
  request: {
    params: OrgParams,
    body: {
      required: true,
      content: { "application/json": { schema: z.object({ billing: BillingSchema }).strict().openapi("BillingChange") } },
    },
  },
  responses: { 200: orgResponse("The organisation"), ...problems(400, 401, 404) },
});

const MoveSchema = z.object({ region: RegionSchema }).strict().openapi("OrgMove");

const move = platformRoute({
  method: "post",
  path: "/platform/orgs/{org_id}/move",
  summary: "Move an organisation to another region: begin, copy its rows and files, flip the home region (operator)",
  request: { params: OrgParams, body: { required: true, content: { "application/json": { schema: MoveSchema } } } },
  responses: { 200: orgResponse("The organisation in its new region"), ...problems(400, 401, 404, 409) },
});

const moveBegin = platformRoute({
  method: "post",
  path: "/platform/orgs/{org_id}/move/begin",
  summary: "First step of a two-step move: the organisation answers 503 org_moving until completed (operator)",
  request: { params: OrgParams, body: { required: true, content: { "application/json": { schema: MoveSchema } } } },
  responses: { 202: orgResponse("The organisation, now moving"), ...problems(400, 401, 404, 409) },
});

const moveComplete = platformRoute({
  method: "post",
  path: "/platform/orgs/{org_id}/move/complete",
  summary: "Second step of a move: copy the rows and files, flip the home region (operator). Safe to repeat after a failure.",
  request: { params: OrgParams },
  responses: { 200: orgResponse("The organisation in its new region"), ...problems(401, 404, 409) },
});

async function mustGetOrg(env: Env, id: string): Promise<Org> {
  const org = await directory(env.DIRECTORY).getOrg(id);
  if (!org) throw notFound("organisation");
  return org;
}

async function auditOperator(env: Env, org: Org, action: string, detail: Record<string, unknown> | undefined, requestId: string) {
  await recordAudit(regionStore(env, org.region).db, { orgId: org.id, actor: OPERATOR_ACTOR, action, target: org.id, detail, requestId });
}

async function beginMove(env: Env, org: Org, to: RegionName): Promise<void> {
  if (org.movingTo) throw new ProblemError("conflict", `The organisation is already moving to ${org.movingTo}.`);
  if (org.region === to) throw new ProblemError("conflict", `The organisation already lives in region ${to}.`);
  if (!(await directory(env.DIRECTORY).beginMove(org.id, to))) {
    throw new ProblemError("conflict", "The organisation is already moving.");
  }
}

/**
 * Copies before flipping and deletes only after: a failure at any point leaves the organisation `moving`
 * with its data intact in the old region, and completing again repeats the (idempotent) copy.
 */
async function completeMove(env: Env, org: Org, requestId: string): Promise<Org> {
  const to = org.movingTo;
  if (!to) throw new ProblemError("conflict", "The organisation is not moving.");
  const from = regionStore(env, org.region);
  const dest = regionStore(env, to);
  const copied = await copyOrgData(org.id, from, dest);
  // Usage counters and idempotency records live in the per-region gate; they move with the data.
  await moveTenantGate(env, org.id, org.region, to);
  await directory(env.DIRECTORY).completeMove(org.id, to);
  await deleteOrgData(org.id, from);
  const moved = await mustGetOrg(env, org.id);
  await auditOperator(env, moved, "org.move", { from: org.region, to, rows: copied.rows, files: copied.files }, requestId);
  return moved;
}

/** The allowlist as stored: each entry checked and normalised (src/fetch/url-policy.ts), or 400 naming it. */
function allowHostEntries(entries: string[], env: Env): string[] {
  const exempt = configOf(env).insecureFetchHosts;
  return entries.map((raw, i) => {
    const got = normaliseHostEntry(raw, exempt);
    if ("problem" in got) throw invalidField(`body.allow_hosts.${i}`, `${raw} ${got.problem}`);
    return got.entry;
  });
}

export function registerOrgRoutes(app: App): void {
  app.openapi(createOrg, async (c) => {
    const body = c.req.valid("json");
    const dir = directory(c.env.DIRECTORY);
    const parentId = body.parent_id ?? null;
    if (parentId !== null && !(await dir.getOrg(parentId))) throw invalidField("body.parent_id", "no such organisation");
    if (body.billing === "parent" && parentId === null) throw invalidField("body.billing", "'parent' needs a parent_id");
    const versionIssue = body.pinned_version ? versionProblem(body.pinned_version) : null;
    if (versionIssue) throw invalidField("body.pinned_version", versionIssue);
    const allowHosts = allowHostEntries(body.allow_hosts, c.env);
    const org = await dir.createOrg({
      name: body.name,
      region: body.region,
      parentId,
      billing: body.billing,
      pinnedVersion: body.pinned_version ?? LATEST_VERSION,
      learning: body.learning,
      allowHosts,
      allowBuckets: body.allow_buckets,
      monthlyQuota: body.monthly_quota,
      inboxTtlSeconds: body.inbox_ttl,
    });
    await auditOperator(c.env, org, "org.create", { name: org.name, region: org.region, parent_id: parentId }, c.get("requestId"));
    return c.json(orgJson(org), 201);
  });

  app.openapi(getOrg, async (c) => c.json(orgJson(await mustGetOrg(c.env, c.req.valid("param").org_id)), 200));

  for (const [route, suspended] of [
    [suspendOrg, true],
    [unsuspendOrg, false],
  ] as const) {
    app.openapi(route, async (c) => {
      const org = await mustGetOrg(c.env, c.req.valid("param").org_id);
      await directory(c.env.DIRECTORY).setSuspended(org.id, suspended);
      await auditOperator(c.env, org, suspended ? "org.suspend" : "org.unsuspend", undefined, c.get("requestId"));
      return c.json(orgJson({ ...org, suspended }), 200);
    });
  }

  app.openapi(setBilling, async (c) => {
    const org = await mustGetOrg(c.env, c.req.valid("param").org_id);
    const { billing } = c.req.valid("json");
    if (billing === "parent" && !org.parentId) throw invalidField("body.billing", "'parent' needs a parent organisation");
    await directory(c.env.DIRECTORY).setBilling(org.id, billing);
    await auditOperator(c.env, org, "org.billing", { from: org.billing, to: billing }, c.get("requestId"));
    return c.json(orgJson({ ...org, billing }), 200);
  });

  app.openapi(move, async (c) => {
    const org = await mustGetOrg(c.env, c.req.valid("param").org_id);
    const { region } = c.req.valid("json");
    await beginMove(c.env, org, region);
    return c.json(orgJson(await completeMove(c.env, { ...org, movingTo: region }, c.get("requestId"))), 200);
  });

  app.openapi(moveBegin, async (c) => {
    const org = await mustGetOrg(c.env, c.req.valid("param").org_id);
    const { region } = c.req.valid("json");
    await beginMove(c.env, org, region);
    await auditOperator(c.env, org, "org.move_begin", { from: org.region, to: region }, c.get("requestId"));
    return c.json(orgJson({ ...org, movingTo: region }), 202);
  });

  app.openapi(moveComplete, async (c) => {
    const org = await mustGetOrg(c.env, c.req.valid("param").org_id);
    return c.json(orgJson(await completeMove(c.env, org, c.get("requestId"))), 200);
  });
}
