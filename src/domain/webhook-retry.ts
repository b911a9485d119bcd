/**
 * The delivery schedule of webhook messages and when an endpoint is disabled. Pure: the consumer
 * passes the configuration (production defaults below, shorter ones in tests) and the clock.
 *
 * Default schedule: the first attempt at once, then after each failure 10 s, 1 min, 5 min, 30 min, 1 h,
 * 3 h, 6 h, 12 h, 24 h and 24 h: eleven attempts over about 2 days 22 hours. Delays from one minute up
 * get up to 10% of jitter, so many endpoints failing together do not retry in lockstep.
 *
 * Cloudflare Queues delays a message by at most 12 h, so a longer wait is made of hops: the message
 * carries the time it is due, and a consumer that receives it early sends it on again for the rest
 * (see src/queues/webhooks.ts).
 */

export const DEFAULT_RETRY_DELAYS_S = [10, 60, 300, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 24 * 3600, 24 * 3600];
/** An endpoint failing every delivery for this long is disabled (and the tenant told). */
export const DEFAULT_DISABLE_AFTER_S = 5 * 24 * 3600;
/** The longest delay Cloudflare Queues gives one message. */
export const MAX_QUEUE_DELAY_S = 12 * 3600;
/** How long one attempt may take (connect, send, first KB of the answer). */
export const DEFAULT_ATTEMPT_TIMEOUT_MS = 15_000;

export interface RetryConfig {
  /** Delay before attempt n+2 after attempt n+1 failed; its length + 1 is the number of attempts. */
  delaysS: number[];
  disableAfterS: number;
  attemptTimeoutMs: number;
}

/** Parses the optional overrides (WEBHOOK_RETRY_SCHEDULE "10,60,...", WEBHOOK_DISABLE_AFTER_SECONDS, WEBHOOK_ATTEMPT_TIMEOUT_MS). */
export function retryConfig(raw: { schedule?: string; disableAfter?: string; timeoutMs?: string }): RetryConfig {
  const delays = raw.schedule?.trim()
    ? raw.schedule
        .split(",")
        .map((s) => Number(s.trim()))
        .filter((n) => Number.isFinite(n) && n >= 0)
    : DEFAULT_RETRY_DELAYS_S;
  const disableAfter = raw.disableAfter?.trim() ? Number(raw.disableAfter) : DEFAULT_DISABLE_AFTER_S;
  const timeout = raw.timeoutMs?.trim() ? Number(raw.timeoutMs) : DEFAULT_ATTEMPT_TIMEOUT_MS;
  return {
    delaysS: delays,
    disableAfterS: Number.isFinite(disableAfter) && disableAfter >= 0 ? disableAfter : DEFAULT_DISABLE_AFTER_S,
    attemptTimeoutMs: Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULT_ATTEMPT_TIMEOUT_MS,
  };
}

/** How many attempts a scheduled delivery gets. */
export function scheduledAttempts(config: RetryConfig): number {
  return config.delaysS.length + 1;
}

/** Seconds to wait after attempt `attempt` (1-based) failed, with jitter from `random` in [0, 1). */
export function retryDelaySeconds(config: RetryConfig, attempt: number, random: number = Math.random()): number {
  const base = config.delaysS[Math.min(attempt, config.delaysS.length) - 1] ?? 0;
  if (base < 60) return base;
  return Math.round(base * (1 + 0.1 * random));
}

/** The next hop of a wait: the whole remaining delay, at most what one queue message allows. */
export function hopDelaySeconds(dueAt: number, now: number): number {
  return Math.max(0, Math.min(MAX_QUEUE_DELAY_S, Math.ceil((dueAt - now) / 1000)));
}

/** Whether an endpoint failing since `failingSince` (epoch ms) is to be disabled at `now`. */
export function shouldDisable(failingSince: number | null, now: number, config: Pick<RetryConfig, "disableAfterS">): boolean {
  return failingSince !== null && now - failingSince >= config.disableAfterS * 1000;
}
