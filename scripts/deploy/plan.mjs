// The deploy script's decisions, kept free of I/O so they can be tested on canned `wrangler ... list`
// output: which resources to create, the generated Wrangler configuration, which secrets to set, and
// the commands that finish a deployment. scripts/deploy.mjs runs what this plans.

/**
 * Secrets the Worker reads (src/env.ts, src/config.ts). `generate`: a random value is fine when the account
 * holder gives none; "new" only for a Worker with no secrets yet, because the Worker already running has
 * sealed data under the fallback (OPERATOR_TOKEN) and a new key would make it unreadable. `when`: needed
 * only with these settings.
 */
export const SECRETS = [
  { name: "OPERATOR_TOKEN", generate: false, about: "the operator credential for /platform/orgs... (keep it; `npm run ops` needs it)" },
  {
    name: "CURSOR_SECRET",
    generate: true,
    about: "the list-cursor signing key (kept apart so rotating OPERATOR_TOKEN keeps cursors valid)",
  },
  {
    name: "WEBHOOK_SECRET_KEY",
    generate: "new",
    about: "seals webhook signing secrets at rest (kept apart so rotating OPERATOR_TOKEN keeps them readable)",
  },
  {
    name: "BUCKET_SECRET_KEY",
    generate: true,
    about: "seals bucket key secrets at rest when BUCKET_KEYS_MODE is local (r2 mode keeps no secret)",
  },
  {
    name: "CF_API_TOKEN",
    generate: false,
    when: (settings) => settings.bucketDrops !== null,
    about: "a Cloudflare API token that may mint R2 temporary credentials (bucket_drops, docs/bucket-drops.md)",
  },
];

/** The secrets a deployment with these settings reads. */
export function secretsFor(settings) {
  return SECRETS.filter((s) => !s.when || s.when(settings));
}

const LOCAL_PREFIX = "countersign";
const NAME = /^[a-z0-9][a-z0-9-]{0,40}$/;
const HOST = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

/**
 * Reads deploy/<env>.json. Everything an account holder chooses is here; everything else comes from
 * wrangler.toml, the one description of the Worker's bindings.
 */
export function parseSettings(raw, env) {
  const fail = (what) => {
    throw new Error(`deploy/${env}.json: ${what}`);
  };
  if (typeof raw !== "object" || raw === null) fail("must be a JSON object");
  const s = {
    env,
    worker: raw.worker ?? (env === "production" ? LOCAL_PREFIX : `${LOCAL_PREFIX}-${env}`),
    prefix: raw.prefix ?? (env === "production" ? LOCAL_PREFIX : `${LOCAL_PREFIX}-${env}`),
    apiKeyEnv: raw.api_key_env ?? (env === "production" ? "live" : "test"),
    hosts: { global: raw.hosts?.global ?? null, regions: raw.hosts?.regions ?? {} },
    docsUrl: raw.docs_url,
    jwt: raw.jwt ?? {},
    placement: raw.placement ?? {},
    vars: raw.vars ?? {},
    // The public address behind webhook payload links and summary.json status_url: the global host,
    // unless given; workers.dev has no host setting, so its address must be given.
    apiBaseUrl: raw.api_base_url ?? (raw.hosts?.global ? `https://${raw.hosts.global}` : null),
    bucketDrops: raw.bucket_drops ?? null,
  };
  if (!NAME.test(s.worker)) fail(`worker "${s.worker}" must be lowercase letters, digits and dashes`);
  if (!NAME.test(s.prefix)) fail(`prefix "${s.prefix}" must be lowercase letters, digits and dashes`);
  if (!/^[a-z0-9]{1,16}$/.test(s.apiKeyEnv)) fail("api_key_env must be 1 to 16 lowercase letters or digits (it appears in every key)");
  for (const host of [s.hosts.global, ...Object.values(s.hosts.regions)]) {
    if (host !== null && !HOST.test(String(host))) fail(`"${host}" is not a host name`);
  }
  if (typeof s.docsUrl !== "string" || !s.docsUrl.startsWith("https://")) fail("docs_url must be an https URL");
  if (typeof s.jwt.issuer !== "string" || typeof s.jwt.audience !== "string") fail("jwt.issuer and jwt.audience are required");
  if (s.jwt.jwks_url !== undefined && !String(s.jwt.jwks_url).startsWith("https://")) fail("jwt.jwks_url must be an https URL");
  if (s.apiBaseUrl === null)
    fail(
      "api_base_url is required when hosts.global is not set: the Worker's public https address " +
        "(on workers.dev, https://<worker>.<subdomain>.workers.dev), for links in webhooks and drop summaries",
    );
  if (!isPublicHttpsOrigin(s.apiBaseUrl)) fail(`api_base_url "${s.apiBaseUrl}" must be an https origin such as https://api.example.com`);
  if (s.bucketDrops !== null) {
    const b = s.bucketDrops;
    if (typeof b.account_id !== "string" || !/^[0-9a-f]{32}$/.test(b.account_id))
      fail("bucket_drops.account_id must be the Cloudflare account id (32 hex digits)");
    if (typeof b.parent_access_key_id !== "string" || b.parent_access_key_id.trim() === "")
      fail("bucket_drops.parent_access_key_id is required (the access key id of the parent R2 API token)");
  }
  for (const [where, p] of Object.entries(s.placement)) {
    if (p.jurisdiction !== undefined && p.jurisdiction !== "eu" && p.jurisdiction !== "fedramp")
      fail(`placement.${where}.jurisdiction must be "eu" or "fedramp"`);
    if (p.location !== undefined && !["weur", "eeur", "apac", "oc", "wnam", "enam"].includes(p.location))
      fail(`placement.${where}.location is not a location hint`);
  }
  return s;
}

/** An https origin (no path) that is not a loopback or .localhost address. */
function isPublicHttpsOrigin(value) {
  let url;
  try {
    url = new URL(String(value));
  } catch {
    return false;
  }
  const local = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\]|0\.0\.0\.0)$|\.localhost$/.test(url.hostname);
  return url.protocol === "https:" && !local && url.pathname === "/" && !url.search && !url.hash;
}

/** `countersign-us` becomes `<prefix>-us`: the local names with the deployment's prefix. */
export function deployedName(localName, prefix) {
  return localName.startsWith(LOCAL_PREFIX) ? prefix + localName.slice(LOCAL_PREFIX.length) : `${prefix}-${localName}`;
}

/** `DB_US`, `FILES_EU`: the region a binding serves (its suffix); anything else is global. */
export function regionOfBinding(binding) {
  const m = /_([A-Z]{2})$/.exec(binding);
  return m ? m[1].toLowerCase() : "global";
}

/** Every resource wrangler.toml binds, under its deployed name, with where the account holder placed it. */
export function desiredResources(config, settings) {
  const placementOf = (binding) => settings.placement[regionOfBinding(binding)] ?? {};
  const d1 = (config.d1_databases ?? []).map((db) => ({
    binding: db.binding,
    localName: db.database_name,
    name: deployedName(db.database_name, settings.prefix),
    ...placementOf(db.binding),
  }));
  const r2 = (config.r2_buckets ?? []).map((b) => {
    const { jurisdiction, location } = placementOf(b.binding);
    // R2 knows only the eu jurisdiction; a fedramp placement keeps its location hint alone.
    return {
      binding: b.binding,
      localName: b.bucket_name,
      name: deployedName(b.bucket_name, settings.prefix),
      ...(jurisdiction === "eu" ? { jurisdiction } : {}),
      ...(location ? { location } : {}),
    };
  });
  const queueNames = new Set();
  for (const p of config.queues?.producers ?? []) queueNames.add(p.queue);
  for (const c of config.queues?.consumers ?? []) {
    queueNames.add(c.queue);
    if (c.dead_letter_queue) queueNames.add(c.dead_letter_queue);
  }
  const queues = [...queueNames].map((q) => ({ localName: q, name: deployedName(q, settings.prefix) }));
  return { d1, r2, queues };
}

// --- Reading what exists. Only `d1 list` and `secret list` speak JSON; the others print for people. ---

/** `wrangler d1 list --json`: name -> uuid. */
export function parseD1List(json) {
  return new Map(JSON.parse(json).map((db) => [db.name, db.uuid]));
}

/** `wrangler r2 bucket list [--jurisdiction eu]` prints `name:  <bucket>` blocks. */
export function parseR2List(text) {
  return new Set([...stripAnsi(text).matchAll(/^name:\s+(\S+)\s*$/gm)].map((m) => m[1]));
}

/** `wrangler queues list` prints a table whose header row names the columns. */
export function parseQueuesList(text) {
  const rows = stripAnsi(text)
    .split("\n")
    .filter((l) => l.includes("│"))
    .map((l) =>
      l
        .split("│")
        .slice(1, -1)
        .map((c) => c.trim()),
    );
  const column = rows[0]?.indexOf("name") ?? -1;
  if (column < 0) return new Set();
  return new Set(
    rows
      .slice(1)
      .map((r) => r[column])
      .filter(Boolean),
  );
}

/** `wrangler secret list --format json`. */
export function parseSecretList(json) {
  return new Set(JSON.parse(json).map((s) => s.name));
}

function stripAnsi(text) {
  // The escape character is what the colour codes start with; wrangler colours only a terminal's output.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching ANSI escapes is the point.
  return text.replace(/\u001b\[[0-9;]*m/g, "");
}

// --- The plan. ---

/** The `create` commands for what does not exist yet; what exists is left as it is. */
export function planCreates(desired, existing) {
  const steps = [];
  for (const db of desired.d1) {
    if (existing.d1.has(db.name)) continue;
    const where = db.jurisdiction ? ["--jurisdiction", db.jurisdiction] : db.location ? ["--location", db.location] : [];
    steps.push({ args: ["d1", "create", db.name, ...where, "--update-config=false"], about: `D1 database for ${db.binding}` });
  }
  for (const b of desired.r2) {
    const listed = b.jurisdiction === "eu" ? existing.r2Eu : existing.r2;
    if (listed.has(b.name)) continue;
    const where = [...(b.jurisdiction ? ["--jurisdiction", b.jurisdiction] : []), ...(b.location ? ["--location", b.location] : [])];
    steps.push({ args: ["r2", "bucket", "create", b.name, ...where, "--update-config=false"], about: `R2 bucket for ${b.binding}` });
  }
  for (const q of desired.queues) {
    if (existing.queues.has(q.name)) continue;
    steps.push({ args: ["queues", "create", q.name], about: "queue" });
  }
  return steps;
}

/**
 * The deployment's Wrangler configuration: wrangler.toml with the deployed names and ids, the chosen
 * hosts as custom domains, and the production values of the variables. Databases created in this run
 * have no id yet in a dry run; they show a placeholder.
 */
export function buildConfig(config, settings, desired, d1Ids, { allowMissingIds = false } = {}) {
  const renameQueue = (q) => deployedName(q, settings.prefix);
  const d1 = (config.d1_databases ?? []).map((db) => {
    const name = deployedName(db.database_name, settings.prefix);
    const id = d1Ids.get(name);
    if (!id && !allowMissingIds) throw new Error(`no D1 database named ${name}: was it created?`);
    return { ...db, database_name: name, database_id: id ?? `<id of ${name}, from d1 create>` };
  });
  const r2 = (config.r2_buckets ?? []).map((b) => {
    const want = desired.r2.find((d) => d.binding === b.binding);
    return { ...b, bucket_name: want.name, ...(want.jurisdiction ? { jurisdiction: want.jurisdiction } : {}) };
  });
  const queues = {
    producers: (config.queues?.producers ?? []).map((p) => ({ ...p, queue: renameQueue(p.queue) })),
    consumers: (config.queues?.consumers ?? []).map((c) => ({
      ...c,
      queue: renameQueue(c.queue),
      ...(c.dead_letter_queue ? { dead_letter_queue: renameQueue(c.dead_letter_queue) } : {}),
    })),
  };
  const hosts = [settings.hosts.global, ...Object.values(settings.hosts.regions)].filter(Boolean);
  const vars = {
    ...config.vars,
    API_KEY_ENV: settings.apiKeyEnv,
    REGION_HOSTS: JSON.stringify(settings.hosts.regions),
    DOCS_URL: settings.docsUrl,
    JWT_ISSUER: settings.jwt.issuer,
    JWT_AUDIENCE: settings.jwt.audience,
    JWKS_URL: settings.jwt.jwks_url ?? "",
    // A key set inlined in configuration is for local use only.
    JWKS_INLINE: "",
    API_BASE_URL: settings.apiBaseUrl.replace(/\/$/, ""),
    // wrangler.toml's `local` mode is for `wrangler dev` and tests, where R2 has no S3 API; a deployment
    // uses R2's S3 endpoint and event notifications (docs/bucket-drops.md). Without bucket_drops the
    // bucket-key routes answer 501.
    BUCKET_KEYS_MODE: "r2",
    R2_ACCOUNT_ID: settings.bucketDrops?.account_id ?? "",
    R2_PARENT_ACCESS_KEY_ID: settings.bucketDrops?.parent_access_key_id ?? "",
    // The buckets as S3 clients (and R2's event messages) name them: the deployed, prefixed names.
    R2_BUCKET_NAMES: JSON.stringify(Object.fromEntries(desired.r2.map((b) => [regionOfBinding(b.binding), b.name]))),
    ...settings.vars,
  };
  checkDeployedVars(vars, settings);
  return {
    $schema: "node_modules/wrangler/config-schema.json",
    ...config,
    name: settings.worker,
    vars,
    d1_databases: d1,
    r2_buckets: r2,
    queues,
    // Served on the account holder's hosts only when there are some; else on workers.dev to try it out.
    ...(hosts.length > 0
      ? { routes: hosts.map((pattern) => ({ pattern, custom_domain: true })), workers_dev: false }
      : { workers_dev: true }),
  };
}

/**
 * Local-development values that `vars` overrides could still bring into a deployment. The variables the
 * settings derive are right by construction; this guards what an account holder writes by hand.
 */
function checkDeployedVars(vars, settings) {
  const fail = (what) => {
    throw new Error(`deploy/${settings.env}.json: ${what}`);
  };
  if (!isPublicHttpsOrigin(vars.API_BASE_URL)) fail(`API_BASE_URL "${vars.API_BASE_URL}" must be a public https origin`);
  if (vars.BUCKET_KEYS_MODE === "local" && settings.env === "production")
    fail("BUCKET_KEYS_MODE local is for local development; production uses r2 (set bucket_drops, docs/deploy.md)");
  if (!["", "local", "r2"].includes(vars.BUCKET_KEYS_MODE)) fail("BUCKET_KEYS_MODE must be r2, local or empty");
}

/**
 * Which secrets this run sets: those the account holder supplied (an explicit value always wins), and
 * those the Worker lacks. A missing secret that must be chosen, not generated, is reported; one only a
 * new Worker gets generated is left to its fallback on a Worker that runs already (`fallback`).
 */
export function planSecrets(existingSecrets, supplied, secrets = SECRETS) {
  const set = [];
  const generate = [];
  const missing = [];
  const fallback = [];
  const newWorker = existingSecrets.size === 0;
  for (const s of secrets) {
    if (supplied[s.name]) set.push(s.name);
    else if (existingSecrets.has(s.name)) continue;
    else if (s.generate === "new") (newWorker ? generate : fallback).push(s.name);
    else if (s.generate) generate.push(s.name);
    else missing.push(s.name);
  }
  return { set, generate, missing, fallback };
}

/**
 * `wrangler r2 bucket notification list <bucket>` prints one block of `label: value` lines per rule;
 * each rule as `<queue_name> <prefix>`.
 */
export function parseNotificationList(text) {
  const rules = new Set();
  for (const block of stripAnsi(text).split(/\n\s*\n/)) {
    const queue = /^queue_name:\s+(\S+)\s*$/m.exec(block)?.[1];
    const prefix = /^prefix:\s+(.*?)\s*$/m.exec(block)?.[1];
    if (queue) rules.add(`${queue} ${prefix ?? ""}`);
  }
  return rules;
}

/**
 * r2 mode learns of uploads from R2 event notifications: one rule per regional bucket sending object
 * creations under `orgs/` to the bucket-events queue. `existingRules`: bucket name -> parseNotificationList.
 */
export function planNotifications(config, settings, desired, existingRules) {
  if (settings.bucketDrops === null) return [];
  const binding = (config.queues?.producers ?? []).find((p) => p.binding === "BUCKET_EVENTS_QUEUE");
  if (!binding) throw new Error("wrangler.toml has no BUCKET_EVENTS_QUEUE producer");
  const queue = deployedName(binding.queue, settings.prefix);
  const steps = [];
  for (const b of desired.r2) {
    const rules = existingRules.get(b.name) ?? new Set();
    if (rules.has(`${queue} orgs/`) || rules.has(`${queue} (all prefixes)`)) continue;
    steps.push({
      args: [
        "r2",
        "bucket",
        "notification",
        "create",
        b.name,
        "--event-type",
        "object-create",
        "--queue",
        queue,
        "--prefix",
        "orgs/",
        ...(b.jurisdiction ? ["--jurisdiction", b.jurisdiction] : []),
      ],
      about: `uploads to ${b.name} reach the bucket-events queue (bucket drops)`,
    });
  }
  return steps;
}

/** After the resources and configuration: the remote migrations of every database, then the deploy. */
export function planRollout(config, configPath, { secretsFile = null } = {}) {
  const migrations = (config.d1_databases ?? []).map((db) => ({
    args: ["d1", "migrations", "apply", db.binding, "--remote", "--config", configPath],
    about: `migrations of ${db.database_name} (${db.migrations_dir})`,
  }));
  const deploy = {
    args: ["deploy", "--config", configPath, ...(secretsFile ? ["--secrets-file", secretsFile] : [])],
    about: "the Worker, its bindings, routes and cron, with the secrets it lacks",
  };
  return [...migrations, deploy];
}
