import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { experimental_readRawConfig } from "wrangler";
import {
  buildConfig,
  desiredResources,
  parseD1List,
  parseNotificationList,
  parseQueuesList,
  parseR2List,
  parseSecretList,
  parseSettings,
  planCreates,
  planNotifications,
  planRollout,
  planSecrets,
  secretsFor,
} from "../../scripts/deploy/plan.mjs";
import { parseConfig } from "../../src/config.ts";

// The deploy script's decisions on the real wrangler.toml and the documented example settings, with
// `wrangler ... list` output as wrangler 4 prints it (JSON for d1 and secrets, text for r2 and queues).
const { rawConfig } = experimental_readRawConfig({ config: "wrangler.toml" });
const example = JSON.parse(readFileSync("deploy/example.json", "utf8"));
// With bucket drops configured (the example leaves them out: they need an R2 API token set up first).
const settings = parseSettings(
  { ...example, bucket_drops: { account_id: "0123456789abcdef0123456789abcdef", parent_access_key_id: "parent-access-key-id" } },
  "production",
);
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
    // Nothing meant for the local runtime survives: wrangler.toml's values are local ones.
    expect(rawConfig.vars).toMatchObject({ BUCKET_KEYS_MODE: "local", API_BASE_URL: "http://127.0.0.1:8787" });
    expect(config.vars).toMatchObject({
      API_BASE_URL: "https://api.example.com",
      BUCKET_KEYS_MODE: "r2",
      R2_BUCKET_NAMES: '{"us":"countersign-files-us","eu":"countersign-files-eu"}',
      R2_ACCOUNT_ID: "0123456789abcdef0123456789abcdef",
      R2_PARENT_ACCESS_KEY_ID: "parent-access-key-id",
    });
    expect(JSON.stringify(config)).not.toMatch(/127\.0\.0\.1|localhost/);
    // The Worker accepts it as configured for r2 bucket drops, with the secrets the deploy sets.
    const secrets = Object.fromEntries(secretsFor(settings).map((s) => [s.name, `${s.name.toLowerCase()}-0123456789`]));
    const parsed = parseConfig({ ...config.vars, ...secrets });
    expect(parsed.drops).toMatchObject({
      mode: "r2",
      bucketNames: { us: "countersign-files-us", eu: "countersign-files-eu" },
      r2: { accountId: "0123456789abcdef0123456789abcdef", apiToken: "cf_api_token-0123456789", parentAccessKeyId: "parent-access-key-id" },
    });
    expect(parsed.apiBaseUrl).toBe("https://api.example.com");
    expect(parsed.webhooks.secretKey).toBe("webhook_secret_key-0123456789");
    // What the settings do not touch comes from wrangler.toml unchanged.
    expect(config.durable_objects).toEqual(rawConfig.durable_objects);
    expect(config.observability).toEqual(rawConfig.observability);
    expect(config.triggers).toEqual(rawConfig.triggers);
    expect(() => buildConfig(rawConfig, settings, desired, partly.d1)).toThrow(/countersign-eu/);
  });

  it("prefixes every resource and queue reference of a second environment", () => {
    const staging = parseSettings(
      {
        ...example,
        worker: undefined,
        prefix: undefined,
        hosts: undefined,
        api_key_env: undefined,
        api_base_url: "https://countersign-staging.example.workers.dev",
      },
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
    // The Worker finds a drop's region by the bucket's name, so it must know the prefixed names.
    expect(JSON.parse(config.vars.R2_BUCKET_NAMES)).toEqual({ us: "countersign-staging-files-us", eu: "countersign-staging-files-eu" });
    expect(config.vars.API_BASE_URL).toBe("https://countersign-staging.example.workers.dev");
  });

  it("takes the public address from the global host, else requires it, and never a local one", () => {
    const noHosts = { ...example, hosts: undefined };
    expect(() => parseSettings(noHosts, "staging")).toThrow(/api_base_url is required when hosts\.global is not set/);
    expect(parseSettings({ ...example, api_base_url: "https://sig.example.org" }, "production").apiBaseUrl).toBe("https://sig.example.org");
    for (const bad of [
      "http://api.example.com",
      "https://127.0.0.1:8787",
      "https://api.countersign.localhost",
      "https://api.example.com/v1",
    ])
      expect(() => parseSettings({ ...noHosts, api_base_url: bad }, "staging")).toThrow(/api_base_url/);
    // The `vars` escape hatch cannot bring the local values back.
    const local = parseSettings({ ...example, vars: { API_BASE_URL: "http://127.0.0.1:8787" } }, "production");
    expect(() => buildConfig(rawConfig, local, desired, new Map(), { allowMissingIds: true })).toThrow(/API_BASE_URL/);
    const localDrops = parseSettings({ ...example, vars: { BUCKET_KEYS_MODE: "local" } }, "production");
    expect(() => buildConfig(rawConfig, localDrops, desired, new Map(), { allowMissingIds: true })).toThrow(/BUCKET_KEYS_MODE local/);
  });

  it("uses r2 mode without bucket_drops too, leaving the bucket-key routes off (501) and asking for no API token", () => {
    const plain = parseSettings(example, "production");
    const config = buildConfig(rawConfig, plain, desired, new Map(), { allowMissingIds: true });
    expect(config.vars).toMatchObject({ BUCKET_KEYS_MODE: "r2", R2_ACCOUNT_ID: "", R2_PARENT_ACCESS_KEY_ID: "" });
    expect(secretsFor(plain).map((s) => s.name)).not.toContain("CF_API_TOKEN");
    expect(planNotifications(rawConfig, plain, desired, new Map())).toEqual([]);
    expect(() => parseSettings({ ...example, bucket_drops: { account_id: "acct" } }, "production")).toThrow(/bucket_drops\.account_id/);
  });

  it("routes each bucket's uploads under orgs/ to the bucket-events queue once", () => {
    const listed = parseNotificationList(`Fetching notification rules for bucket countersign-files-us...
rule_id:     abc
created_at:  2026-11-01T00:00:00.000Z
queue_name:  countersign-bucket-events
prefix:      orgs/
suffix:      (all suffixes)
event_type:  PutObject,CopyObject,CompleteMultipartUpload
`);
    expect(listed).toEqual(new Set(["countersign-bucket-events orgs/"]));
    const steps = planNotifications(rawConfig, settings, desired, new Map([["countersign-files-us", listed]]));
    expect(steps.map((s) => s.args.join(" "))).toEqual([
      "r2 bucket notification create countersign-files-eu --event-type object-create --queue countersign-bucket-events --prefix orgs/ --jurisdiction eu",
    ]);
  });

  it("sets supplied secrets, generates the keys and asks for the operator token and the R2 API token", () => {
    const secrets = secretsFor(settings);
    // Every secret the Worker reads (src/env.ts) is set by the deploy.
    expect(secrets.map((s) => s.name)).toEqual([
      "OPERATOR_TOKEN",
      "CURSOR_SECRET",
      "WEBHOOK_SECRET_KEY",
      "BUCKET_SECRET_KEY",
      "CF_API_TOKEN",
    ]);
    expect(planSecrets(new Set(), {}, secrets)).toEqual({
      set: [],
      generate: ["CURSOR_SECRET", "WEBHOOK_SECRET_KEY", "BUCKET_SECRET_KEY"],
      missing: ["OPERATOR_TOKEN", "CF_API_TOKEN"],
      fallback: [],
    });
    const all = new Set(secrets.map((s) => s.name));
    expect(planSecrets(all, {}, secrets)).toEqual({ set: [], generate: [], missing: [], fallback: [] });
    expect(planSecrets(all, { OPERATOR_TOKEN: "rotated" }, secrets)).toEqual({
      set: ["OPERATOR_TOKEN"],
      generate: [],
      missing: [],
      fallback: [],
    });
    // A Worker deployed before WEBHOOK_SECRET_KEY existed sealed its webhook secrets under OPERATOR_TOKEN:
    // a generated key would make them unreadable, so it keeps the fallback.
    expect(planSecrets(new Set(["OPERATOR_TOKEN", "CURSOR_SECRET", "CF_API_TOKEN"]), {}, secrets)).toEqual({
      set: [],
      generate: ["BUCKET_SECRET_KEY"],
      missing: [],
      fallback: ["WEBHOOK_SECRET_KEY"],
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
