// `npm run deploy -- --env <name> [--dry-run]`: from a Cloudflare account to a running service.
// Creates what wrangler.toml binds (D1 directory and regional databases, regional R2 buckets, queues and
// the dead-letter queue) unless it exists, writes wrangler.<env>.json with their ids, applies the D1
// migrations remotely and deploys with the secrets the Worker lacks. Running it again creates nothing
// that exists and deploys the current code. docs/deploy.md walks through it; plan.mjs holds the decisions.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline/promises";
import { experimental_readRawConfig } from "wrangler";
import {
  SECRETS,
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
} from "./deploy/plan.mjs";

const WRANGLER = "node_modules/.bin/wrangler";
const USAGE = `usage: npm run deploy -- --env <name> [--dry-run]

  --env <name>   reads deploy/<name>.json (copy deploy/example.json) and writes wrangler.<name>.json
  --dry-run      lists what exists (read-only), prints every command it would run, and changes nothing

Secrets come from the environment (${SECRETS.map((s) => s.name).join(", ")}); a missing
OPERATOR_TOKEN (and CF_API_TOKEN, with bucket_drops) is asked for, the others are generated.`;

const args = process.argv.slice(2);
const flag = (name) => args.includes(name);
const option = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
if (flag("--help") || flag("-h")) {
  console.log(USAGE);
  process.exit(0);
}
const envName = option("--env");
const dryRun = flag("--dry-run");
if (!envName || !/^[a-z0-9-]+$/.test(envName)) {
  console.error(USAGE);
  process.exit(2);
}

const settingsPath = path.join("deploy", `${envName}.json`);
if (!existsSync(settingsPath)) {
  console.error(`${settingsPath} does not exist: copy deploy/example.json there and fill it in (docs/deploy.md).`);
  process.exit(2);
}
const settings = parseSettings(JSON.parse(readFileSync(settingsPath, "utf8")), envName);
const { rawConfig } = experimental_readRawConfig({ config: "wrangler.toml" });
const desired = desiredResources(rawConfig, settings);
const configPath = `wrangler.${envName}${dryRun ? ".dry-run" : ""}.json`;

console.log(`${dryRun ? "Dry run: " : ""}deploying "${settings.worker}" (resources prefixed "${settings.prefix}")`);

// 1. What exists already.
const existing = {
  d1: parseD1List(list(["d1", "list", "--json"], "[]")),
  r2: parseR2List(list(["r2", "bucket", "list"], "")),
  r2Eu: desired.r2.some((b) => b.jurisdiction === "eu")
    ? parseR2List(list(["r2", "bucket", "list", "--jurisdiction", "eu"], ""))
    : new Set(),
  queues: listQueues(),
};

// 2. Create what is missing.
const creates = planCreates(desired, existing);
if (creates.length === 0) console.log("Every D1 database, R2 bucket and queue exists.");
for (const step of creates) run(step);
const d1Ids = creates.some((s) => s.args[0] === "d1") && !dryRun ? parseD1List(list(["d1", "list", "--json"])) : existing.d1;

// 2b. With bucket_drops: the R2 event notification rules that tell the Worker of uploads.
if (settings.bucketDrops) {
  // A bucket created in a dry run does not exist yet, so it has no rules to list.
  const rules = new Map(
    desired.r2.map((b) => [
      b.name,
      parseNotificationList(
        list(["r2", "bucket", "notification", "list", b.name, ...(b.jurisdiction ? ["--jurisdiction", b.jurisdiction] : [])], ""),
      ),
    ]),
  );
  for (const step of planNotifications(rawConfig, settings, desired, rules)) run(step);
} else console.log("No bucket_drops in the settings: bucket drops are off (the bucket-key routes answer 501).");

// 3. The deployment's configuration.
const config = buildConfig(rawConfig, settings, desired, d1Ids, { allowMissingIds: dryRun });
writeFileSync(configPath, `${JSON.stringify(config, null, 2)}\n`);
console.log(`Wrote ${configPath}.`);

// 4. Secrets, 5. migrations and deploy.
// A Worker not deployed yet has no secrets; any other failure to read them stops the run.
const existingSecrets = parseSecretList(
  list(["secret", "list", "--format", "json", "--config", configPath], "[]", { emptyWhen: /10007|does not exist|not found/i }),
);
const wanted = secretsFor(settings);
const supplied = Object.fromEntries(wanted.map((s) => [s.name, process.env[s.name] ?? ""]));
const secrets = planSecrets(existingSecrets, supplied, wanted);
const values = {};
for (const name of secrets.set) values[name] = supplied[name];
for (const name of secrets.generate) values[name] = randomBytes(32).toString("base64url");
for (const name of secrets.missing) {
  if (dryRun) continue;
  values[name] = await ask(`${name} (${SECRETS.find((s) => s.name === name).about}): `);
  if (!values[name]) fail(`${name} is required: set it in the environment or type it when asked.`);
}
if (dryRun && secrets.missing.length > 0) console.log(`${secrets.missing.join(", ")}: not in the environment; would be asked for.`);
for (const name of secrets.fallback)
  console.log(`${name}: not set; this Worker's data is sealed under OPERATOR_TOKEN, which it keeps using (docs/deploy.md).`);
const secretNames = [...secrets.set, ...secrets.generate, ...secrets.missing];
if (secretNames.length > 0)
  console.log(
    `Secrets set with this deploy: ${secretNames.join(", ")}${secrets.generate.length ? ` (${secrets.generate.join(", ")} generated)` : ""}`,
  );

const secretsDir = secretNames.length > 0 ? mkdtempSync(path.join(tmpdir(), "countersign-secrets-")) : null;
const secretsFile = secretsDir ? path.join(secretsDir, "secrets.json") : null;
try {
  if (secretsFile && !dryRun) writeFileSync(secretsFile, JSON.stringify(values), { mode: 0o600 });
  for (const step of planRollout(config, configPath, { secretsFile })) run(step, { CI: "true" });
} finally {
  if (secretsDir) rmSync(secretsDir, { recursive: true, force: true });
}

const hosts = [settings.hosts.global, ...Object.values(settings.hosts.regions)].filter(Boolean);
console.log(
  dryRun
    ? `\nDry run: nothing was changed (${configPath} shows the configuration; ids of databases not yet created are placeholders).`
    : `\nDeployed. ${hosts.length ? `Custom domains: ${hosts.join(", ")} (certificates may take a few minutes).` : "Served on workers.dev."}\nCheck it: curl https://${hosts[0] ?? "<worker>.<subdomain>.workers.dev"}/health`,
);

// --- helpers ---

/** `wrangler queues list` shows one page at a time. */
function listQueues() {
  const names = new Set();
  for (let page = 1; page <= 100; page++) {
    const before = names.size;
    for (const name of parseQueuesList(list(["queues", "list", "--page", String(page)], ""))) names.add(name);
    if (names.size === before) break;
  }
  return names;
}

/**
 * Runs a read-only `wrangler ... list`. In a dry run without a login it assumes nothing exists; `emptyWhen`
 * names the failures that mean "none" (a Worker that does not exist has no secrets).
 */
function list(argv, fallback, { emptyWhen = null } = {}) {
  const res = spawnSync(WRANGLER, argv, { encoding: "utf8", env: wranglerEnv(), stdio: ["ignore", "pipe", "pipe"] });
  if (res.status === 0) {
    // JSON output starts at its first line opening an array or object (nothing else is printed before it today).
    const json = argv.includes("--json") || argv.includes("json");
    return json ? res.stdout.slice(Math.max(0, res.stdout.search(/^\s*[[{]/m))) : res.stdout;
  }
  if (fallback !== undefined && emptyWhen?.test(`${res.stderr}${res.stdout}`)) return fallback;
  if (fallback !== undefined && dryRun) {
    console.log(`(could not run \`wrangler ${argv.join(" ")}\`; assuming none exist)`);
    return fallback;
  }
  fail(`wrangler ${argv.join(" ")} failed:\n${res.stderr || res.stdout}`);
}

function run(step, extraEnv = {}) {
  console.log(`\n$ wrangler ${step.args.join(" ")}    # ${step.about}`);
  if (dryRun) return;
  const res = spawnSync(WRANGLER, step.args, { stdio: "inherit", env: { ...wranglerEnv(), ...extraEnv } });
  if (res.status !== 0)
    fail(`wrangler ${step.args[0]} failed (exit ${res.status}); fix the cause and run the same command again: finished steps are skipped.`);
}

function wranglerEnv() {
  return { ...process.env, WRANGLER_SEND_METRICS: "false" };
}

async function ask(question) {
  if (!process.stdin.isTTY) return "";
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    return (await rl.question(question)).trim();
  } finally {
    rl.close();
  }
}

function fail(message) {
  console.error(message);
  process.exit(1);
}
