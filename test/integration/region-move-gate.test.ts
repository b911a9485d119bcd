import { env } from "cloudflare:workers";
import { expect, it } from "vitest";
import { tenantGate } from "../../durable-objects/tenant-gate-client";
import { api, createOrg, operator } from "../helpers/tenant";

it("carries the month's usage counters to the new region's gate when an organisation moves", async () => {
  const { orgId, apiKey } = await createOrg({ region: "us" });
  const usGate = tenantGate(env, { id: orgId, region: "us" });
  await usGate.countItems(["job-1/0", "job-1/1", "job-2/0"]);
  expect(await usGate.monthTotal()).toBe(3);

  await operator("POST", `/platform/orgs/${orgId}/move`, { region: "eu" });
  expect((await api("/platform/me", { key: apiKey })).status).toBe(200);

  const euGate = tenantGate(env, { id: orgId, region: "eu" });
  expect(await euGate.monthTotal()).toBe(3);
  // An item counted before the move is still counted once after it.
  expect((await euGate.countItems(["job-1/0", "job-3/0"])).total).toBe(4);
});
