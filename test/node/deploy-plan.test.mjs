import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { experimental_readRawConfig } from "wrangler";
import {
  buildConfig,
  desiredResources,
  parseD1List,
  parseQueuesList,
  parseR2List,
  parseSecretList,
  parseSettings,
  planCreates,
  planRollout,
  planSecrets,
} from "../../scripts/deploy/plan.mjs";

// The deploy script's decisions on the real wrangler.toml and the documented example settings, with
// `wrangler ... list` output as wrangler 4 prints it (JSON for d1 and secrets, text for r2 and queues).
const { rawConfig } = experimental_readRawConfig({ config: "wrangler.toml" });
const example = JSON.parse(readFileSync("deploy/example.json", "utf8"));
const settings = parseSettings(example, "production");
const desired = desiredResources(rawConfig, settings);

const d1ListJson = JSON.stringify([
  {
    uuid: "11111111-1111-4111-8111-111111111111",
    name: "countersign-directory",
    created_at: "2026-11-01T00:00:00Z",
    version: "production",
  },
  { uuid: "22222222-2222-4222-8222-222222222222", name: "countersign-us", created_at: "2026-11-01T00:00:00Z", version: "production" },
  { uuid: "99999999-9999-4999-8999-999999999999", name: "someone-elses-db", created_at: "2026-11-01T00:00:00Z", version: "production" },
]);
const r2ListText = `Listing buckets...
name:           countersign-files-us
creation_date:  2026-11-01T00:00:00.000Z

name:           unrelated-bucket
creation_date:  2026-10-01T00:00:00.000Z
`;
const queuesTable = (names) => `┌──────────────────────────────────┬${"─".repeat(20)}┐
│ id                               │ name               │ created_on │ modified_on │ producers │ consumers │
├──────────────────────────────────┼${"─".repeat(20)}┤
${names.map((n, i) => `│ ${String(i).padStart(32, "0")} │ ${n} │ 2026-11-01 │ 2026-11-01 │ 1 │ 1 │`).join("\n")}
└──────────────────────────────────┴${"─".repeat(20)}┘`;

const allQueues = desired.queues.map((q) => q.name);
const partly = {
  d1: parseD1List(d1ListJson),
  r2: parseR2List(r2ListText),
  r2Eu: parseR2List(""),
  queues: parseQueuesList(queuesTable(["countersign-check-items", "countersign-dead-letter"])),
};

describe("deploy planning", () => {
  it("reads what exists from wrangler's list output", () => {
    expect(partly.d1.get("countersign-us")).toBe("22222222-2222-4222-8222-222222222222");
    expect([...partly.r2]).toEqual(["countersign-files-us", "unrelated-bucket"]);
    expect([...partly.queues]).toEqual(["countersign-check-items", "countersign-dead-letter"]);
    expect(parseQueuesList("\u001b[90m┌─┐\u001b[39m\n│ id │ name │\n│ 1 │ q-one │")).toEqual(new Set(["q-one"]));
    expect(parseSecretList('[{"name":"OPERATOR_TOKEN","type":"secret_text"}]')).toEqual(new Set(["OPERATOR_TOKEN"]));
  });

  it("creates only what is missing, placing the eu region's database and bucket in the EU jurisdiction", () => {
    const steps = planCreates(desired, partly).map((s) => s.args.join(" "));
    expect(steps).toEqual([
      "d1 create countersign-eu --jurisdiction eu --update-config=false",
      "r2 bucket create countersign-files-eu --jurisdiction eu --update-config=false",
      ...allQueues.filter((q) => q !== "countersign-check-items" && q !== "countersign-dead-letter").map((q) => `queues create ${q}`),
    ]);
    // Every queue a producer, consumer or dead-letter setting names is planned, the dead-letter queue included.
    expect(allQueues).toEqual(expect.arrayContaining(["countersign-dead-letter", "countersign-check-items", "countersign-enrolments"]));
  });

  it("creates nothing on a second run once everything exists", () => {
    const everything = {
      d1: new Map(desired.d1.map((d, i) => [d.name, `id-${i}`])),
      r2: new Set(desired.r2.filter((b) => !b.jurisdiction).map((b) => b.name)),
      r2Eu: new Set(desired.r2.filter((b) => b.jurisdiction === "eu").map((b) => b.name)),
      queues: parseQueuesList(queuesTable(allQueues)),
    };
    expect(planCreates(desired, everything)).toEqual([]);
  });

  it("generates a configuration with the deployed names, the listed ids, custom domains and production variables", () => {
    const ids = new Map([...partly.d1, ["countersign-eu", "33333333-3333-4333-8333-333333333333"]]);
    const config = buildConfig(rawConfig, settings, desired, ids);
    expect(config.d1_databases.map((d) => [d.binding, d.database_name, d.database_id, d.migrations_dir])).toEqual([
      ["DIRECTORY", "countersign-directory", "11111111-1111-4111-8111-111111111111", "migrations/directory"],
      ["DB_US", "countersign-us", "22222222-2222-4222-8222-222222222222", "migrations/region"],
      ["DB_EU", "countersign-eu", "33333333-3333-4333-8333-333333333333", "migrations/region"],
    ]);
    expect(config.r2_buckets).toEqual([
      { binding: "FILES_US", bucket_name: "countersign-files-us" },
      { binding: "FILES_EU", bucket_name: "countersign-files-eu", jurisdiction: "eu" },
    ]);
    expect(config.routes).toEqual([
      { pattern: "api.example.com", custom_domain: true },
      { pattern: "us.api.example.com", custom_domain: true },
      { pattern: "eu.api.example.com", custom_domain: true },
    ]);
    expect(config.workers_dev).toBe(false);
    expect(config.vars).toMatchObject({
      API_KEY_ENV: "live",
      REGION_HOSTS: '{"us":"us.api.example.com","eu":"eu.api.example.com"}',
      JWKS_URL: "https://id.example.com/.well-known/jwks.json",
      JWKS_INLINE: "",
    });
    // What the settings do not touch comes from wrangler.toml unchanged.
    expect(config.durable_objects).toEqual(rawConfig.durable_objects);
    expect(config.observability).toEqual(rawConfig.observability);
    expect(config.triggers).toEqual(rawConfig.triggers);
    expect(() => buildConfig(rawConfig, settings, desired, partly.d1)).toThrow(/countersign-eu/);
  });

  it("prefixes every resource and queue reference of a second environment", () => {
    const staging = parseSettings(
      { ...example, worker: undefined, prefix: undefined, hosts: undefined, api_key_env: undefined },
      "staging",
    );
    const want = desiredResources(rawConfig, staging);
    const config = buildConfig(rawConfig, staging, want, new Map(), { allowMissingIds: true });
    expect(config.name).toBe("countersign-staging");
    expect(config.vars.API_KEY_ENV).toBe("test");
    expect(config.workers_dev).toBe(true);
    expect(config.routes).toBeUndefined();
    const names = JSON.stringify([config.d1_databases, config.r2_buckets, config.queues]);
    expect(names.match(/"countersign-(?!staging)[a-z-]+"/g)).toBeNull();
    for (const c of config.queues.consumers.filter((c) => c.dead_letter_queue))
      expect(c.dead_letter_queue).toBe("countersign-staging-dead-letter");
  });

  it("sets supplied secrets, generates a missing cursor secret and asks for a missing operator token", () => {
    expect(planSecrets(new Set(), {})).toEqual({ set: [], generate: ["CURSOR_SECRET"], missing: ["OPERATOR_TOKEN"] });
    expect(planSecrets(new Set(["OPERATOR_TOKEN", "CURSOR_SECRET"]), {})).toEqual({ set: [], generate: [], missing: [] });
    expect(planSecrets(new Set(["OPERATOR_TOKEN", "CURSOR_SECRET"]), { OPERATOR_TOKEN: "rotated" })).toEqual({
      set: ["OPERATOR_TOKEN"],
      generate: [],
      missing: [],
    });
  });

  it("applies every database's migrations remotely before deploying with the secrets file", () => {
    const steps = planRollout(rawConfig, "wrangler.production.json", { secretsFile: "/tmp/s.json" }).map((s) => s.args.join(" "));
    expect(steps).toEqual([
      "d1 migrations apply DIRECTORY --remote --config wrangler.production.json",
      "d1 migrations apply DB_US --remote --config wrangler.production.json",
      "d1 migrations apply DB_EU --remote --config wrangler.production.json",
      "deploy --config wrangler.production.json --secrets-file /tmp/s.json",
    ]);
  });

  it("refuses settings that would deploy something broken", () => {
    expect(() => parseSettings({ ...example, docs_url: "http://docs.example.com" }, "production")).toThrow(/docs_url/);
    expect(() => parseSettings({ ...example, hosts: { regions: { eu: "not a host" } } }, "production")).toThrow(/not a host/);
    expect(() => parseSettings({ ...example, placement: { eu: { jurisdiction: "mars" } } }, "production")).toThrow(/jurisdiction/);
    expect(() => parseSettings({ ...example, jwt: {} }, "production")).toThrow(/jwt/);
  });
});
