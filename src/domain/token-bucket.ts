/**
 * The token bucket of spec part 8, as a pure function shared by the tenant's gate (the authority) and an
 * isolate's estimate of it (src/http/local-rate.ts), so both refill the same way.
 */
export interface BucketRule {
  /** Tokens per second. */
  rate: number;
  burst: number;
}

/** Tokens of a bucket that held `tokens` at `updatedAt`, refilled continuously up to the burst by `now`. */
export function refilledTokens(rule: BucketRule, tokens: number, updatedAt: number, now: number): number {
  return Math.min(rule.burst, tokens + (Math.max(0, now - updatedAt) * rule.rate) / 1000);
}

/** Whole seconds until the bucket holds one token again (at least 1): the Retry-After of a 429. */
export function secondsUntilToken(rule: BucketRule, tokens: number): number {
  return Math.max(1, Math.ceil((1 - tokens) / rule.rate));
}
