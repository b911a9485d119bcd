import type { TenantGate } from "../durable-objects/tenant-gate";
import type { Job } from "../durable-objects/job";
import type { LiveCapture } from "../durable-objects/live-capture";

/**
 * The Worker's bindings, as declared in wrangler.toml (plus secrets). The variables are raw strings: code
 * reads them through configOf(env) (src/config.ts), which validates them once.
 */
export interface Env {
  DIRECTORY: D1Database;
  DB_US: D1Database;
  DB_EU: D1Database;
  FILES_US: R2Bucket;
  FILES_EU: R2Bucket;
  TENANT_GATE: DurableObjectNamespace<TenantGate>;
  JOB: DurableObjectNamespace<Job>;
  LIVE_CAPTURE: DurableObjectNamespace<LiveCapture>;
  CHECK_QUEUE: Queue;
  ENROL_QUEUE: Queue;
  LEARN_QUEUE: Queue;
  WEBHOOK_QUEUE: Queue;
  BUCKET_EVENTS_QUEUE: Queue;
  DEAD_LETTER_QUEUE: Queue;
  /** Static assets (public/): the reviewer page under /review/. */
  ASSETS?: Fetcher;

  /** Operator credential for /platform routes (a secret). */
  OPERATOR_TOKEN: string;
  /** The `<env>` part of API keys minted here: `live` in production, `test` elsewhere. */
  API_KEY_ENV: string;
  /** JSON object: region name -> that region's own host name. */
  REGION_HOSTS: string;
  DOCS_URL: string;
  JWT_ISSUER: string;
  JWT_AUDIENCE: string;
  JWKS_URL?: string;
  JWKS_INLINE?: string;
  /** Comma-separated hosts that URL inputs may reach over plain http: set only by the test configuration. */
  INSECURE_FETCH_HOSTS?: string;
  /** Key material of list cursors (a secret); OPERATOR_TOKEN when unset. */
  CURSOR_SECRET?: string;
  /** Timings and capacity, unset in production (src/config.ts holds their defaults and rules). */
  CHECK_ITEM_BUDGET_MS?: string;
  CHECK_CAPACITY?: string;
  CHECK_KEEPALIVE_MS?: string;
  /** Learned references kept per subject (default 20). */
  LEARNED_REFERENCE_CAP?: string;
  /** Live capture close timings and connection limits (docs/live-capture.md). */
  LIVE_IDLE_MS?: string;
  LIVE_MAX_MS?: string;
  LIVE_RECHECK_MS?: string;
  LIVE_TENANT_CONNECTIONS?: string;
  LIVE_INSTANCE_CONNECTIONS?: string;
  URL_FETCH_DEADLINE_MS?: string;
  URL_FETCH_STALL_WINDOW_MS?: string;
  /**
   * Comma-separated `host:port`s that webhook endpoints may use over plain http and despite being
   * loopback (local development and tests only; empty in production).
   */
  WEBHOOK_DEV_HOSTS?: string;
  /** Webhook retry delays in seconds, comma-separated (default: the schedule of docs/webhooks.md). */
  WEBHOOK_RETRY_SCHEDULE?: string;
  /** An endpoint failing every delivery this long is disabled (default 5 days). */
  WEBHOOK_DISABLE_AFTER_SECONDS?: string;
  /** Deadline of one delivery attempt (default 15 s). */
  WEBHOOK_ATTEMPT_TIMEOUT_MS?: string;
  /** DNS-over-HTTPS JSON endpoint used to re-check endpoint addresses at each delivery. */
  WEBHOOK_DNS_URL?: string;
  /** Key material sealing webhook signing secrets at rest (a secret; default derived from OPERATOR_TOKEN). */
  WEBHOOK_SECRET_KEY?: string;
  /** The public {base_url}, for links in webhook payloads (default: the region's own address). */
  API_BASE_URL?: string;
  /**
   * "1" mounts GET /__bench/bare, a bare Hono route beside the API, so `npm run bench:api` compares our
   * pipeline against the runtime alone. Set only by the benchmarks; never in wrangler.toml.
   */
  BENCH_BARE_ROUTE?: string;

  // ---- bucket drops (docs/bucket-drops.md) ----
  /** `local` (the Worker serves /s3/), `r2` (R2's S3 endpoint and event notifications), unset: 501. */
  BUCKET_KEYS_MODE?: string;
  /** Secret: encrypts bucket key secrets at rest (local mode). */
  BUCKET_SECRET_KEY?: string;
  /** JSON object: region name -> its R2 bucket's name, as S3 clients address it. */
  R2_BUCKET_NAMES?: string;
  /** The S3 endpoint URL shown to clients in local mode (default: the caller's origin). */
  S3_ENDPOINT_URL?: string;
  /** Seconds a batch waits for the files its manifest names (default 300). */
  DROP_WAIT_SECONDS?: string;
  /** r2 mode: the Cloudflare account, an API token that may mint R2 credentials, and the parent R2 key. */
  R2_ACCOUNT_ID?: string;
  CF_API_TOKEN?: string;
  R2_PARENT_ACCESS_KEY_ID?: string;
}
