import { z } from "@hono/zod-openapi";
import type { App } from "../app";
import { defineRoute, problems } from "../http/route";
import { fieldName, invalidField } from "../http/problem";
import { buildUsageReport, parsePeriod } from "../domain/usage";
import { checksRepo } from "../storage/checks";

const UsageSchema = z
  .object({
    period: z.string().openapi({ description: "The UTC month, YYYY-MM" }),
    from: z.string(),
    to: z.string(),
    checks: z.number().int().openapi({ description: "Checked items" }),
    billable_checks: z.number().int(),
    not_charged: z.number().int(),
    decisions: z.record(z.string(), z.number().int()).openapi({ description: "Counts by decision; `errors` counts items without one" }),
    estimate: z.object({
      currency: z.literal("USD"),
      unit_price: z.string().openapi({ example: "0.50" }),
      billable_checks: z.number().int(),
      amount: z.string().openapi({ example: "12.50" }),
      amount_cents: z.number().int(),
    }),
    billing: z.object({
      mode: z.enum(["self", "parent"]).openapi({ description: "`parent`: billed through the parent organisation, which is invoiced" }),
      detail: z.string(),
    }),
    daily: z
      .array(z.object({ date: z.string(), checks: z.number().int(), billable_checks: z.number().int(), not_charged: z.number().int() }))
      .openapi({ description: "One entry for every day of the month that has begun" }),
  })
  .openapi("Usage");

const getUsage = defineRoute(
  { permission: "org:read" },
  {
    method: "get",
    path: "/sig/usage",
    tags: ["usage"],
    summary: "Checked items and the estimated charge of a UTC month",
    request: {
      query: z.object({
        // The pattern is stated in the document only: parsePeriod answers a malformed period with a 400 naming `period`.
        period: z.string().default("current").openapi({
          description: "`current` (default) or YYYY-MM (a UTC month, 0000-01 to 9999-11)",
          pattern: "^(current|\\d{4}-(0[1-9]|1[0-2]))$",
        }),
      }),
    },
    responses: {
      200: { description: "Usage of the period", content: { "application/json": { schema: UsageSchema } } },
      ...problems(400, 401, 403, 421, 429),
    },
  },
);

export function registerUsageRoutes(app: App): void {
  app.openapi(getUsage, async (c) => {
    const { period: raw } = c.req.valid("query");
    const period = parsePeriod(raw, new Date());
    if (!period) throw invalidField(fieldName("query", "period"), "must be current or a UTC month YYYY-MM, 0000-01 to 9999-11");
    const tenant = c.get("tenant");
    const rows = await checksRepo(tenant.store.db).dailyDecisions(tenant.org.id, period.from, period.to);
    return c.json(buildUsageReport(period, rows, tenant.org.billing === "parent"), 200);
  });
}
