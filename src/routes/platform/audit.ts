import { z } from "@hono/zod-openapi";
import type { App } from "../../app";
import type { Env } from "../../env";
import type { Org } from "../../domain/tenancy";
import { decodeCursor, encodeCursor } from "../../http/cursor";
import { configOf } from "../../config";
import { notFound } from "../../http/problem";
import { AUTH_PROBLEMS, defineRoute, problems } from "../../http/route";
import { directory } from "../../storage/directory";
import { regionStore } from "../../storage/regions";
import { platformRoute } from "./operator";
import { OrgIdParam } from "./schemas";
import { queryInteger } from "../../http/schemas";

const AuditEntrySchema = z
  .object({
    id: z.string(),
    actor: z.string().openapi({ description: "key:<id>, user:<id>, session:<id> or operator" }),
    action: z.string(),
    target: z.string(),
    detail: z.record(z.string(), z.unknown()).nullable(),
    request_id: z.string().nullable(),
    created_at: z.string(),
  })
  .openapi("AuditEntry");

const AuditPageSchema = z.object({ entries: z.array(AuditEntrySchema), next_cursor: z.string().nullable() }).openapi("AuditLogPage");

const AuditQuery = z.object({
  limit: queryInteger({ min: 1, max: 200 }).default(50).openapi({ description: "1 to 200, default 50" }),
  cursor: z.string().max(4096).optional(),
});

const page = { description: "Audit entries, newest first", content: { "application/json": { schema: AuditPageSchema } } };

const operatorAudit = platformRoute({
  method: "get",
  path: "/platform/orgs/{org_id}/audit",
  summary: "Read an organisation's audit log (operator)",
  request: { params: z.object({ org_id: OrgIdParam }), query: AuditQuery },
  responses: { 200: page, ...problems(400, 401, 404) },
});

const tenantAudit = defineRoute(
  { permission: "org:read" },
  {
    method: "get",
    path: "/platform/audit",
    tags: ["platform"],
    summary: "Read the organisation's audit log",
    request: { query: AuditQuery },
    responses: { 200: page, ...problems(...AUTH_PROBLEMS) },
  },
);

interface Position {
  c: string;
  i: string;
}

interface Row {
  id: string;
  actor: string;
  action: string;
  target: string;
  detail: string | null;
  request_id: string | null;
  created_at: string;
}

/** One page of an organisation's audit log; both routes share the cursor name, as they list the same thing. */
async function readAuditPage(env: Env, org: Org, limit: number, cursor: string | undefined) {
  const route = `GET /platform/audit ${org.id}`;
  const after = cursor !== undefined ? await decodeCursor<Position>(configOf(env).cursorSecret, route, cursor) : null;
  const db = regionStore(env, org.region).db;
  const { results } = await (after
    ? db
        .prepare(
          `SELECT * FROM audit_log WHERE org_id = ?1 AND (created_at < ?2 OR (created_at = ?2 AND id < ?3))
           ORDER BY created_at DESC, id DESC LIMIT ?4`,
        )
        .bind(org.id, after.c, after.i, limit + 1)
    : db.prepare("SELECT * FROM audit_log WHERE org_id = ?1 ORDER BY created_at DESC, id DESC LIMIT ?2").bind(org.id, limit + 1)
  ).all<Row>();
  const rows = results.slice(0, limit);
  const last = rows.at(-1);
  return {
    entries: rows.map((r) => ({
      id: r.id,
      actor: r.actor,
      action: r.action,
      target: r.target,
      detail: r.detail ? (JSON.parse(r.detail) as Record<string, unknown>) : null,
      request_id: r.request_id,
      created_at: r.created_at,
    })),
    next_cursor:
      results.length > limit && last
        ? await encodeCursor(configOf(env).cursorSecret, route, { c: last.created_at, i: last.id } satisfies Position)
        : null,
  };
}

export function registerAuditRoutes(app: App): void {
  app.openapi(operatorAudit, async (c) => {
    const org = await directory(c.env.DIRECTORY).getOrg(c.req.valid("param").org_id);
    if (!org) throw notFound("organisation");
    const { limit, cursor } = c.req.valid("query");
    return c.json(await readAuditPage(c.env, org, limit, cursor), 200);
  });

  app.openapi(tenantAudit, async (c) => {
    const { limit, cursor } = c.req.valid("query");
    return c.json(await readAuditPage(c.env, c.get("tenant").org, limit, cursor), 200);
  });
}
