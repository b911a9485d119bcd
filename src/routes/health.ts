import { z } from "@hono/zod-openapi";
import type { App } from "../app";
import { defineRoute } from "../http/route";

const health = defineRoute(
  { permission: "none" },
  {
    method: "get",
    path: "/health",
    tags: ["operations"],
    summary: "Liveness (unauthenticated)",
    responses: {
      200: {
        description: "The service is up",
        content: { "application/json": { schema: z.object({ status: z.literal("ok") }).openapi("Health") } },
      },
    },
  },
);

export function registerHealthRoutes(app: App): void {
  app.openapi(health, (c) => c.json({ status: "ok" as const }, 200));
}
