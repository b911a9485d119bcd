import { z } from "@hono/zod-openapi";
import type { App } from "../../app";
import { AUTH_PROBLEMS, defineRoute, problems } from "../../http/route";
import { recordAudit } from "../../storage/audit";
import { directory } from "../../storage/directory";
import { OrgSchema, PermissionSchema, orgJson } from "./schemas";

const CallerSchema = z
  .object({
    actor: z.string().openapi({ description: "Audit actor: key:<id> or user:<id>" }),
    credential: z.enum(["api_key", "user", "session"]),
    caller_org_id: z.string().openapi({ description: "The organisation the credential belongs to" }),
    permissions: z.array(PermissionSchema),
    acting_as: z.boolean().openapi({ description: "True when Service-Org selected a descendant organisation" }),
    org: OrgSchema.openapi({ description: "The organisation this request acts in" }),
  })
  .openapi("Caller");

const me = defineRoute(
  { permission: "org:read" },
  {
    method: "get",
    path: "/platform/me",
    tags: ["platform"],
    summary: "Who is calling: actor, permissions and the organisation acted in",
    responses: {
      200: { description: "The caller", content: { "application/json": { schema: CallerSchema } } },
      ...problems(...AUTH_PROBLEMS),
    },
  },
);

const SettingsSchema = z
  .object({
    name: z.string().min(1).max(200).optional(),
    learning: z.boolean().optional(),
    inbox_ttl: z
      .number()
      .int()
      .min(60)
      .max(30 * 86400)
      .optional(),
  })
  .strict()
  .openapi("OrgSettingsChange");

// Changing organisation settings is for dashboard users only (spec part 5.5): API keys get 403.
const updateSettings = defineRoute(
  { permission: "sig:settings:manage", credentials: ["user"] },
  {
    method: "patch",
    path: "/platform/org",
    tags: ["platform"],
    summary: "Change the organisation's settings (dashboard users only)",
    request: { body: { required: true, content: { "application/json": { schema: SettingsSchema } } } },
    responses: {
      200: { description: "The organisation", content: { "application/json": { schema: OrgSchema } } },
      ...problems(...AUTH_PROBLEMS, 415),
    },
  },
);

export function registerMeRoutes(app: App): void {
  app.openapi(me, (c) => {
    const caller = c.get("caller");
    const tenant = c.get("tenant");
    return c.json(
      {
        actor: caller.actor,
        credential: caller.kind,
        caller_org_id: caller.orgId,
        permissions: [...caller.permissions].sort(),
        acting_as: tenant.actingAs,
        org: orgJson(tenant.org),
      },
      200,
    );
  });

  app.openapi(updateSettings, async (c) => {
    const body = c.req.valid("json");
    const { org, store } = c.get("tenant");
    const changes = { name: body.name, learning: body.learning, inboxTtlSeconds: body.inbox_ttl };
    const defined = Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined));
    await directory(c.env.DIRECTORY).updateSettings(org.id, defined);
    await recordAudit(store.db, {
      orgId: org.id,
      actor: c.get("caller").actor,
      action: "org.update",
      target: org.id,
      detail: body,
      requestId: c.get("requestId"),
    });
    return c.json(orgJson({ ...org, ...defined }), 200);
  });
}
