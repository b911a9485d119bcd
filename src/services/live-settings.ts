/**
 * Live capture timings and connection limits. Production uses the spec's values; the environment may
 * shorten them (tests close idle sockets in a second rather than a minute). The credential re-check can
 * be made more frequent but never less than every 30 s, the spec's bound.
 */
import type { Env } from "../env";
import {
  LIVE_IDLE_MS,
  LIVE_INSTANCE_CONNECTIONS,
  LIVE_MAX_MS,
  LIVE_RECHECK_MS,
  LIVE_TENANT_CONNECTIONS,
  type LiveTimings,
} from "../domain/live";

export interface LiveSettingsEnv {
  /** Close after this long without a message from the client (default 60000). */
  LIVE_IDLE_MS?: string;
  /** Close after this long in any case (default 600000). */
  LIVE_MAX_MS?: string;
  /** Re-check each connection's credential this often (default and maximum 30000). */
  LIVE_RECHECK_MS?: string;
  /** Live connections per tenant (default 20) and per instance (default 200). */
  LIVE_TENANT_CONNECTIONS?: string;
  LIVE_INSTANCE_CONNECTIONS?: string;
}

function setting(raw: string | undefined, fallback: number, min: number, max = Infinity): number {
  if (raw === undefined || raw.trim() === "") return fallback;
  const n = Number(raw);
  return Number.isFinite(n) && n >= min ? Math.min(Math.floor(n), max) : fallback;
}

export function liveSettings(env: Env): { timings: LiveTimings; limits: { tenant: number; instance: number } } {
  const e = env as Env & LiveSettingsEnv;
  return {
    timings: {
      idleMs: setting(e.LIVE_IDLE_MS, LIVE_IDLE_MS, 10),
      maxMs: setting(e.LIVE_MAX_MS, LIVE_MAX_MS, 10),
      recheckMs: setting(e.LIVE_RECHECK_MS, LIVE_RECHECK_MS, 10, LIVE_RECHECK_MS),
    },
    limits: {
      tenant: setting(e.LIVE_TENANT_CONNECTIONS, LIVE_TENANT_CONNECTIONS, 1),
      instance: setting(e.LIVE_INSTANCE_CONNECTIONS, LIVE_INSTANCE_CONNECTIONS, 1),
    },
  };
}
