import { z } from "@hono/zod-openapi";
import type { App } from "../../app";
import { AUTH_PROBLEMS, defineRoute, problems } from "../../http/route";
import { changePin, pinState } from "../../services/version-pins";

const PinStateSchema = z
  .object({
    pinned_version: z
      .string()
      .openapi({ description: "Used by requests without Service-Version, and by every webhook", example: "2026-09-27" }),
    latest_version: z.string(),
    upgrades: z.array(z.string()).openapi({ description: "Supported newer versions the pin can move to, newest first" }),
    rollback: z
      .object({ to: z.string(), until: z.string().openapi({ format: "date-time" }) })
      .nullable()
      .openapi({ description: "The last upgrade can be undone (PUT its `to`) until `until`: 72 hours after it" }),
    last_change: z
      .object({ from: z.string(), to: z.string(), kind: z.enum(["upgrade", "rollback"]), at: z.string().openapi({ format: "date-time" }) })
      .nullable(),
  })
  .openapi("VersionPin");

const json = { "application/json": { schema: PinStateSchema } };

const read = defineRoute(
  { permission: "org:read" },
  {
    method: "get",
    path: "/platform/org/version",
    tags: ["platform"],
    summary: "The organisation's pinned version, the versions it can move to, and whether the last upgrade can be rolled back",
    responses: { 200: { description: "The pin", content: json }, ...problems(...AUTH_PROBLEMS) },
  },
);

// Changing the pin is an organisation setting: dashboard users only (spec 5.5), API keys get 403.
const change = defineRoute(
  { permission: "sig:settings:manage", credentials: ["user"] },
  {
    method: "put",
    path: "/platform/org/version",
    tags: ["platform"],
    summary:
      "Upgrade the pin to a supported newer version, or roll the last upgrade back (to the version before it) within 72 hours (dashboard users only; audited)",
    request: {
      body: {
        required: true,
        content: {
          "application/json": {
            schema: z
              .object({ version: z.string().max(32).openapi({ example: "2026-09-27" }) })
              .strict()
              .openapi("VersionPinChange"),
          },
        },
      },
    },
    responses: {
      200: { description: "The pin after the change (unchanged when it already was that version)", content: json },
      ...problems(...AUTH_PROBLEMS, 409, 413, 415),
    },
  },
);

export function registerVersionPinRoutes(app: App): void {
  app.openapi(read, async (c) => {
    const { org, store } = c.get("tenant");
    return c.json(await pinState({ env: c.env, org, store }), 200);
  });

  app.openapi(change, async (c) => {
    const { org, store } = c.get("tenant");
    const { state } = await changePin({ env: c.env, org, store }, c.req.valid("json").version, c.get("caller").actor, c.get("requestId"));
    return c.json(state, 200);
  });
}
