import type { BucketName, SettleResult } from "../../durable-objects/tenant-gate";
import { BUCKETS } from "../../durable-objects/tenant-gate";
import { refilledTokens } from "../domain/token-bucket";

/**
 * The isolate's side of a tenant's rate bucket (spec part 8; the gate, TenantGate, stays the authority).
 * See docs/hot-path.md.
 *
 * Each reply of the gate tells the isolate how full the bucket was. While that estimate, refilled at the
 * bucket's rate and less what this isolate has admitted since, stays above a margin, a request is admitted
 * here without a round trip, and the spend is reported to the gate within FLUSH_MS (in the background, or
 * with the next synchronous call). Near empty, after STALE_MS without news, or on first use, requests ask
 * the gate and wait: one call at a time per bucket, carrying the unreported spends first and asking for as
 * many tokens as requests are waiting, so decisions near the limit (429 and its Retry-After) are the
 * gate's own, in order.
 */

/** An estimate older than this is not trusted: the next request asks the gate. */
export const STALE_MS = 2_000;
/** Spends admitted locally reach the gate at most this long after the first of them. */
export const FLUSH_MS = 1_000;
/** How often a request waiting for another's gate call looks again. */
export const POLL_MS = 2;
/**
 * A gate call unanswered for this long is given up by the others: the request that made it may have
 * been cancelled (its client went away) and its promise may never settle. Later requests then make
 * their own call; the abandoned call's spends are charged again with it (at worst counted twice, never lost).
 */
export const CALL_ABANDON_MS = 5_000;
/** Buckets tracked per isolate; idle ones beyond this are forgotten. */
const MAX_BUCKETS = 5_000;

export type Decision = { ok: true } | { ok: false; retryAfterSeconds: number };

/** Sends unreported spends and asks for tokens (TenantGate.settle over RPC). */
export type Settle = (spent: number, want: number) => Promise<SettleResult>;

/** Tokens of the estimate that only the gate may hand out: the last fifth of the burst. */
export function marginOf(bucket: BucketName): number {
  return BUCKETS[bucket].burst / 5;
}

export class LocalBucket {
  /** The gate's last word: tokens as of its refill clock, and when we heard it (local clock). */
  #known: { tokens: number; updatedAt: number; heardAt: number } | null = null;
  /** Admitted here and not yet sent to the gate. */
  #unreported = 0;
  /** Sent with the call in flight, not yet reflected in #known. */
  #inFlight = 0;
  /** A gate call is in flight: other requests wait for its answer before they decide. */
  #busy = false;
  /** When the call in flight started, and which call it is (an abandoned call's end must not clear a newer one). */
  #busySince = 0;
  #callSeq = 0;
  #flushing = false;

  constructor(
    readonly bucket: BucketName,
    private readonly now: () => number = Date.now,
  ) {}

  /** The tokens this isolate believes the bucket holds now, or null when it has no fresh estimate. */
  estimate(): number | null {
    const known = this.#known;
    const now = this.now();
    if (!known || now - known.heardAt > STALE_MS) return null;
    return refilledTokens(BUCKETS[this.bucket], known.tokens, known.updatedAt, now) - this.#unreported - this.#inFlight;
  }

  /** Admits here when the estimate allows it (true), else the request must ask the gate. */
  admitLocally(): boolean {
    const estimate = this.estimate();
    if (estimate === null || estimate - 1 < marginOf(this.bucket)) return false;
    this.#unreported++;
    return true;
  }

  /**
   * Admits or refuses one request: locally when the estimate allows it, else through the gate. `settle`
   * is this request's own gate call; `background` keeps the later report of local spends alive after the
   * response (ctx.waitUntil); `mayAdmitLocally` false (writes) always asks the gate.
   *
   * Gate calls of one bucket go one at a time, so the spends a call carries are charged before any later
   * request is decided. A request cannot wait on a promise another request settles (Workers refuse I/O
   * across request contexts), so a request that finds a call in flight polls every POLL_MS until it is
   * answered, then decides on the fresh estimate or makes the next call itself.
   */
  async take(settle: Settle, background: (p: Promise<unknown>) => void, mayAdmitLocally = true): Promise<Decision> {
    for (;;) {
      if (mayAdmitLocally && this.admitLocally()) {
        this.#scheduleFlush(settle, background);
        return { ok: true };
      }
      if (!this.#waitingOnCall) break;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    const result = await this.#call(settle, 1);
    return result.granted === 1 ? { ok: true } : { ok: false, retryAfterSeconds: result.retryAfterSeconds };
  }

  /** Whether nothing is owed to the gate (the entry may be forgotten). */
  get idle(): boolean {
    return !this.#waitingOnCall && this.#unreported === 0;
  }

  /** A call is in flight and not yet given up (CALL_ABANDON_MS). */
  get #waitingOnCall(): boolean {
    return this.#busy && this.now() - this.#busySince < CALL_ABANDON_MS;
  }

  /** One gate call: the unreported spends first, then `want` tokens. */
  async #call(settle: Settle, want: number): Promise<SettleResult> {
    this.#busy = true;
    this.#busySince = this.now();
    const seq = ++this.#callSeq;
    // An abandoned call's spends are carried again: the gate may then count them twice, never not at all.
    const spent = this.#unreported + this.#inFlight;
    this.#unreported = 0;
    this.#inFlight = spent;
    try {
      const result = await settle(spent, want);
      this.#known = { tokens: result.tokens, updatedAt: result.updatedAt, heardAt: this.now() };
      return result;
    } catch (err) {
      // The spends were not charged: they go with the next call (unless a newer call carries them already).
      if (seq === this.#callSeq) this.#unreported += spent;
      throw err;
    } finally {
      if (seq === this.#callSeq) {
        this.#inFlight = 0;
        this.#busy = false;
      }
    }
  }

  #scheduleFlush(settle: Settle, background: (p: Promise<unknown>) => void): void {
    if (this.#flushing) return;
    this.#flushing = true;
    background(
      (async () => {
        await new Promise((r) => setTimeout(r, FLUSH_MS));
        // Spends admitted while a call was in flight are not in it: wait for it, then report them.
        while (this.#waitingOnCall) await new Promise((r) => setTimeout(r, POLL_MS));
        this.#flushing = false;
        // A call in the meantime may have carried them all.
        if (this.#unreported === 0) return;
        // A failed report keeps the spends for the next call; nobody waits on this one.
        await this.#call(settle, 0).catch(() => {});
      })(),
    );
  }
}

/** The isolate's buckets, by gate name and bucket. */
const buckets = new Map<string, LocalBucket>();

export function localBucket(gateName: string, bucket: BucketName): LocalBucket {
  const id = `${gateName}/${bucket}`;
  let local = buckets.get(id);
  if (!local) {
    if (buckets.size >= MAX_BUCKETS) {
      for (const [k, b] of buckets) if (b.idle && b.estimate() === null) buckets.delete(k);
    }
    local = new LocalBucket(bucket);
    buckets.set(id, local);
  }
  return local;
}
