import type { TenantGate } from "../durable-objects/tenant-gate";
import type { Job } from "../durable-objects/job";
import type { LiveCapture } from "../durable-objects/live-capture";

/** The Worker's bindings, as declared in wrangler.toml (plus secrets). */
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
}
