/**
 * The service's configuration: every variable and secret the code reads from the environment, parsed
 * and validated once into a typed Config. The entry point (src/index.ts) parses it before anything
 * else runs, so a bad value fails the request, queue batch or cron run at its start with a message
 * naming each bad variable, instead of surfacing later as a wrong answer or a 500 deep in a handler.
 *
 * Every timing lives here too, so tests inject short ones through bindings (vitest.config.ts) or by
 * setting a variable on `env` for one test: the parse is cached per env object and per raw values, so a
 * changed variable is read again and an unchanged one never is.
 */
import { DEFAULT_LEARNED_CAP } from "./domain/learning-bar";
import { z } from "zod";
import type { Env } from "./env";
import type { RegionName } from "./domain/tenancy";
import { ITEM_BUDGET_MS } from "./domain/job";
import { FETCH_DEADLINE_MS, STALL_WINDOW_MS } from "./fetch/url-fetch";
import {
  LIVE_IDLE_MS,
  LIVE_INSTANCE_CONNECTIONS,
  LIVE_MAX_MS,
  LIVE_RECHECK_MS,
  LIVE_TENANT_CONNECTIONS,
  type LiveTimings,
} from "./domain/live";
import { DEFAULT_ATTEMPT_TIMEOUT_MS, DEFAULT_DISABLE_AFTER_S, DEFAULT_RETRY_DELAYS_S, type RetryConfig } from "./domain/webhook-retry";

/** The production values of every timing and capacity, used when the variable is unset or empty. */
export const DEFAULTS = {
  checkItemBudgetMs: ITEM_BUDGET_MS,
  checkCapacity: 4,
  checkKeepAliveMs: 10_000,
  /** Shared deadline of one request's URL fetches (enrolment and checks). */
  urlFetchDeadlineMs: FETCH_DEADLINE_MS,
  /** A fetched body must carry 64 KiB per window of this length or it is abandoned as stalled. */
  urlFetchStallWindowMs: STALL_WINDOW_MS,
} as const;

export interface Config {
  /** Operator credential for /platform routes (a secret). */
  operatorToken: string;
  /** The `<env>` part of API keys minted here: `live` in production, `test` elsewhere. */
  apiKeyEnv: string;
  /** Each region's own host name; a region without one is reached through the global host only. */
  regionHosts: Partial<Record<RegionName, string>>;
  docsUrl: string;
  jwt: {
    issuer: string;
    audience: string;
    /** The identity provider's key set: a URL, or an inline JSON key set (local use); neither disables dashboard tokens. */
    jwksUrl: string | null;
    jwksInline: { keys: Record<string, unknown>[] } | null;
  };
  /** Key material of list cursors: CURSOR_SECRET, else OPERATOR_TOKEN (see http/cursor.ts). */
  cursorSecret: string;
  /** Hosts URL inputs may reach over plain http: set only by the test configuration. */
  insecureFetchHosts: string[];
  checks: {
    /** Budget of one inline item. */
    itemBudgetMs: number;
    /** Inline checks one isolate runs at once; 0 sends every inline check to the queue. */
    capacity: number;
    /** Interval of a check stream's keep-alive comments. */
    keepAliveMs: number;
  };
  urlFetch: {
    deadlineMs: number;
    stallWindowMs: number;
  };
  /** Learned references kept per subject when the policy sets no learning.max_references (docs/learning.md). */
  learning: { cap: number };
  /** Live capture: close timings and connection limits (spec part 8; tests shorten them). */
  live: { timings: LiveTimings; limits: { tenant: number; instance: number } };
  /** Bucket drops (docs/bucket-drops.md): how the drop bucket is served, and its settings. */
  drops: {
    /** `local`: the Worker's own S3 endpoint; `r2`: R2's S3 endpoint and event notifications; null: 501. */
    mode: "local" | "r2" | null;
    /** Key material sealing bucket key secrets at rest (local mode). */
    secretKey: string | null;
    /** Each region's R2 bucket name, as S3 clients address it. */
    bucketNames: Record<RegionName, string>;
    /** The S3 endpoint URL shown to clients in local mode; null: the caller's origin. */
    s3EndpointUrl: string | null;
    /** How long a batch waits for the files its manifest names. */
    waitSeconds: number;
    /** r2 mode: the account, an API token that may mint R2 credentials, and the parent R2 access key. */
    r2: { accountId: string; apiToken: string; parentAccessKeyId: string } | null;
  };
  /** The public {base_url} of links in webhook payloads; null: the region's own address. */
  apiBaseUrl: string | null;
  webhooks: {
    /** `host:port`s endpoints may use over plain http and despite being loopback (development and tests only). */
    devHosts: string[];
    retry: RetryConfig;
    /** DNS-over-HTTPS JSON endpoint that re-checks endpoint addresses at each delivery. */
    dnsUrl: string;
    /** Key material sealing signing secrets at rest: WEBHOOK_SECRET_KEY, else OPERATOR_TOKEN. */
    secretKey: string;
  };
}

/** A configuration that cannot be used; the message names every bad variable. */
export class ConfigError extends Error {
  constructor(readonly issues: string[]) {
    super(`Invalid configuration: ${issues.join("; ")}`);
    this.name = "ConfigError";
  }
}

/** An integer setting at least `min`, given as a string (wrangler vars) or a number (test bindings). */
function integer(fallback: number, min: number) {
  return z
    .union([z.string(), z.number()])
    .optional()
    .transform((raw, ctx) => {
      if (raw === undefined || (typeof raw === "string" && raw.trim() === "")) return fallback;
      const n = typeof raw === "number" ? raw : Number(raw.trim());
      if (!Number.isSafeInteger(n) || n < min) {
        ctx.addIssue({ code: "custom", message: `must be an integer of at least ${min} (got ${JSON.stringify(raw)})` });
        return z.NEVER;
      }
      return n;
    });
}

/** Unset and "" both mean "not configured" (wrangler.toml declares optional vars as ""). */
const optionalText = z
  .string()
  .optional()
  .transform((s) => (s === undefined || s.trim() === "" ? null : s.trim()));

const required = (what: string) =>
  z
    .string({ error: `is required (${what})` })
    .trim()
    .min(1, `is required (${what})`);

const httpUrl = z.url({ protocol: /^https?$/, error: "must be an http(s) URL" });

/** Issues of a nested parse, re-raised on the variable (with where in its value they are). */
function forward(issues: z.core.$ZodIssue[], ctx: z.RefinementCtx, what?: string): void {
  for (const issue of issues) {
    const at = issue.path.length ? ` at ${issue.path.join(".")}` : "";
    ctx.addIssue({ code: "custom", message: `${issue.message}${at}${what ? ` (${what})` : ""}` });
  }
}

/** A JSON value in a string variable, validated by `schema`. */
function json<T extends z.ZodType>(schema: T, what: string) {
  return z.string().transform((s, ctx): z.output<T> => {
    let value: unknown;
    try {
      value = JSON.parse(s);
    } catch {
      ctx.addIssue({ code: "custom", message: `must be JSON (${what})` });
      return z.NEVER;
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      forward(parsed.error.issues, ctx, what);
      return z.NEVER;
    }
    return parsed.data;
  });
}

/** An optional variable: null when unset or "", else validated by `schema`. */
function whenSet<T extends z.ZodType>(schema: T) {
  return optionalText.transform((s, ctx): z.output<T> | null => {
    if (s === null) return null;
    const parsed = schema.safeParse(s);
    if (!parsed.success) {
      forward(parsed.error.issues, ctx);
      return z.NEVER;
    }
    return parsed.data;
  });
}

const hostName = z.string().regex(/^[A-Za-z0-9.-]+(:\d+)?$/, "must be a bare host name, without scheme or path");

const Vars = z.object({
  OPERATOR_TOKEN: required("the operator secret: wrangler secret put OPERATOR_TOKEN").pipe(
    z.string().min(16, "must be at least 16 characters"),
  ),
  API_KEY_ENV: z.string().regex(/^[a-z0-9]{1,16}$/, "must be 1 to 16 of [a-z0-9], e.g. live or test"),
  REGION_HOSTS: whenSet(
    json(
      z.strictObject({ us: hostName.optional(), eu: hostName.optional() }),
      'a JSON object such as {"us":"us.api.example.com","eu":"eu.api.example.com"}',
    ),
  ),
  DOCS_URL: httpUrl,
  JWT_ISSUER: required("the dashboard token issuer"),
  JWT_AUDIENCE: required("the dashboard token audience"),
  JWKS_URL: whenSet(httpUrl),
  JWKS_INLINE: whenSet(json(z.object({ keys: z.array(z.record(z.string(), z.unknown())) }), 'a JSON Web Key Set, {"keys":[...]}')),
  CURSOR_SECRET: whenSet(z.string().min(16, "must be at least 16 characters when set")),
  INSECURE_FETCH_HOSTS: optionalText.transform((s) =>
    s === null
      ? []
      : s
          .split(",")
          .map((h) => h.trim())
          .filter(Boolean),
  ),
  CHECK_ITEM_BUDGET_MS: integer(DEFAULTS.checkItemBudgetMs, 1),
  CHECK_CAPACITY: integer(DEFAULTS.checkCapacity, 0),
  CHECK_KEEPALIVE_MS: integer(DEFAULTS.checkKeepAliveMs, 10),
  URL_FETCH_DEADLINE_MS: integer(DEFAULTS.urlFetchDeadlineMs, 1),
  URL_FETCH_STALL_WINDOW_MS: integer(DEFAULTS.urlFetchStallWindowMs, 1),
  LEARNED_REFERENCE_CAP: integer(DEFAULT_LEARNED_CAP, 1).refine((n) => n <= 200, "must be at most 200"),
  LIVE_IDLE_MS: integer(LIVE_IDLE_MS, 10),
  LIVE_MAX_MS: integer(LIVE_MAX_MS, 10),
  // The credential is re-checked at least every 30 s (spec part 8): more often may be configured, never less.
  LIVE_RECHECK_MS: integer(LIVE_RECHECK_MS, 10).refine((n) => n <= LIVE_RECHECK_MS, `must be at most ${LIVE_RECHECK_MS}`),
  LIVE_TENANT_CONNECTIONS: integer(LIVE_TENANT_CONNECTIONS, 1),
  LIVE_INSTANCE_CONNECTIONS: integer(LIVE_INSTANCE_CONNECTIONS, 1),
  API_BASE_URL: whenSet(httpUrl),
  BUCKET_KEYS_MODE: whenSet(z.enum(["local", "r2"], { error: "must be local, r2 or empty" })),
  BUCKET_SECRET_KEY: whenSet(z.string().min(16, "must be at least 16 characters when set")),
  R2_BUCKET_NAMES: whenSet(
    json(
      z.strictObject({ us: z.string().min(3).optional(), eu: z.string().min(3).optional() }),
      'a JSON object such as {"us":"countersign-files-us","eu":"countersign-files-eu"}',
    ),
  ),
  S3_ENDPOINT_URL: whenSet(httpUrl),
  DROP_WAIT_SECONDS: integer(300, 0),
  R2_ACCOUNT_ID: optionalText,
  CF_API_TOKEN: optionalText,
  R2_PARENT_ACCESS_KEY_ID: optionalText,
  WEBHOOK_DEV_HOSTS: optionalText.transform((s) =>
    s === null
      ? []
      : s
          .split(",")
          .map((h) => h.trim())
          .filter(Boolean),
  ),
  WEBHOOK_RETRY_SCHEDULE: whenSet(
    z
      .string()
      .regex(/^\s*\d+(\s*,\s*\d+)*\s*$/, "must be comma-separated whole seconds, e.g. 0,60,300")
      .transform((s) => s.split(",").map((n) => Number(n.trim()))),
  ),
  WEBHOOK_DISABLE_AFTER_SECONDS: integer(DEFAULT_DISABLE_AFTER_S, 0),
  WEBHOOK_ATTEMPT_TIMEOUT_MS: integer(DEFAULT_ATTEMPT_TIMEOUT_MS, 1),
  WEBHOOK_DNS_URL: whenSet(httpUrl),
  WEBHOOK_SECRET_KEY: whenSet(z.string().min(16, "must be at least 16 characters when set")),
});

/** The names of every variable the configuration reads. */
export const CONFIG_VARS = Object.keys(Vars.shape) as (keyof typeof Vars.shape)[];

/** Parses the environment's variables; throws ConfigError naming every bad one. */
export function parseConfig(env: Record<string, unknown>): Config {
  const raw = Object.fromEntries(CONFIG_VARS.map((k) => [k, env[k]]));
  const result = Vars.safeParse(raw);
  if (!result.success) {
    throw new ConfigError(result.error.issues.map((i) => `${i.path.join(".") || "env"} ${i.message}`));
  }
  const v = result.data;
  return {
    operatorToken: v.OPERATOR_TOKEN,
    apiKeyEnv: v.API_KEY_ENV,
    regionHosts: v.REGION_HOSTS ?? {},
    docsUrl: v.DOCS_URL,
    jwt: { issuer: v.JWT_ISSUER, audience: v.JWT_AUDIENCE, jwksUrl: v.JWKS_URL, jwksInline: v.JWKS_INLINE },
    cursorSecret: v.CURSOR_SECRET ?? v.OPERATOR_TOKEN,
    insecureFetchHosts: v.INSECURE_FETCH_HOSTS,
    checks: { itemBudgetMs: v.CHECK_ITEM_BUDGET_MS, capacity: v.CHECK_CAPACITY, keepAliveMs: v.CHECK_KEEPALIVE_MS },
    urlFetch: { deadlineMs: v.URL_FETCH_DEADLINE_MS, stallWindowMs: v.URL_FETCH_STALL_WINDOW_MS },
    learning: { cap: v.LEARNED_REFERENCE_CAP },
    live: {
      timings: { idleMs: v.LIVE_IDLE_MS, maxMs: v.LIVE_MAX_MS, recheckMs: v.LIVE_RECHECK_MS },
      limits: { tenant: v.LIVE_TENANT_CONNECTIONS, instance: v.LIVE_INSTANCE_CONNECTIONS },
    },
    drops: {
      mode: v.BUCKET_KEYS_MODE ?? null,
      secretKey: v.BUCKET_SECRET_KEY ?? null,
      bucketNames: { us: "countersign-files-us", eu: "countersign-files-eu", ...(v.R2_BUCKET_NAMES ?? {}) },
      s3EndpointUrl: v.S3_ENDPOINT_URL ?? null,
      waitSeconds: v.DROP_WAIT_SECONDS,
      r2:
        v.R2_ACCOUNT_ID && v.CF_API_TOKEN && v.R2_PARENT_ACCESS_KEY_ID
          ? { accountId: v.R2_ACCOUNT_ID, apiToken: v.CF_API_TOKEN, parentAccessKeyId: v.R2_PARENT_ACCESS_KEY_ID }
          : null,
    },
    apiBaseUrl: v.API_BASE_URL ? v.API_BASE_URL.replace(/\/$/, "") : null,
    webhooks: {
      devHosts: v.WEBHOOK_DEV_HOSTS,
      retry: {
        delaysS: v.WEBHOOK_RETRY_SCHEDULE ?? [...DEFAULT_RETRY_DELAYS_S],
        disableAfterS: v.WEBHOOK_DISABLE_AFTER_SECONDS,
        attemptTimeoutMs: v.WEBHOOK_ATTEMPT_TIMEOUT_MS,
      },
      dnsUrl: v.WEBHOOK_DNS_URL ?? "https://cloudflare-dns.com/dns-query",
      secretKey: v.WEBHOOK_SECRET_KEY ?? v.OPERATOR_TOKEN,
    },
  };
}

const parsed = new WeakMap<object, { fingerprint: string; config: Config }>();

/**
 * The environment's Config, parsed on first use and kept for the env object. The raw values are
 * compared on every call (a few string reads), so a test that sets a variable on `env` gets it read.
 */
export function configOf(env: Env): Config {
  const record = env as unknown as Record<string, unknown>;
  const fingerprint = JSON.stringify(CONFIG_VARS.map((k) => record[k] ?? null));
  const hit = parsed.get(env);
  if (hit && hit.fingerprint === fingerprint) return hit.config;
  const config = parseConfig(record);
  parsed.set(env, { fingerprint, config });
  return config;
}
