import { DurableObject } from "cloudflare:workers";
import type { Env } from "../src/env";
import { migrate, type SqlMigration } from "./sql-migrations";
import { refilledTokens, secondsUntilToken } from "../src/domain/token-bucket";

/**
 * One per tenant: the tenant's rate buckets, its idempotency records and its usage counters.
 * Every method runs its reads and the writes that depend on them synchronously (no await in
 * between), so the object's input gate makes each call atomic with respect to the others.
 */

export type BucketName = "api" | "image";

/** Tokens per second and burst size of each bucket (spec part 8). */
export const BUCKETS: Record<BucketName, { rate: number; burst: number }> = {
  api: { rate: 20, burst: 50 },
  image: { rate: 50, burst: 200 },
};

export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/** An in-progress record older than this belongs to a request that died without releasing it. */
export const IDEMPOTENCY_LEASE_MS = 5 * 60 * 1000;
/** Item ids are remembered this long so that late redeliveries are still not counted twice. */
export const COUNTED_ITEM_TTL_MS = 70 * 24 * 60 * 60 * 1000;
/** DO SQLite values are limited to 2 MB; larger responses are not kept for replay. */
export const MAX_STORED_RESPONSE_BYTES = 1024 * 1024;

export type TakeResult = { ok: true; remaining: number } | { ok: false; retryAfterSeconds: number };

/** What settle() answers: tokens granted now, and the bucket afterwards (for an isolate's estimate). */
export interface SettleResult {
  granted: number;
  /** Tokens left (negative while spends admitted by isolates are owed), as of `updatedAt`. */
  tokens: number;
  /** The bucket's refill clock after the call (never behind the gate's `now`). */
  updatedAt: number;
  /** Seconds until one token is available again; 0 while one is. */
  retryAfterSeconds: number;
}

export interface StoredResponse {
  status: number;
  headers: [string, string][];
  body: ArrayBuffer;
}

export type BeginResult =
  | { kind: "new"; lease: string }
  | { kind: "replay"; response: StoredResponse }
  | { kind: "conflict" }
  | { kind: "in_progress" }
  | { kind: "not_replayable"; jobId: string | null };

type IdemRow = {
  key: string;
  fingerprint: string;
  state: "in_progress" | "completed" | "not_replayable";
  lease: string | null;
  status: number | null;
  headers: string | null;
  body: ArrayBuffer | null;
  job_id: string | null;
  created_at: number;
  updated_at: number;
};

/** A gate's durable state, as carried by a region move. */
export interface GateState {
  usage: { month: string; items: number }[];
  items: { item_id: string; month: string; counted_at: number }[];
  records: (Omit<IdemRow, "lease"> & { route: string; lease: string | null })[];
}

/** Migration 1: the schema as it was before migrations were numbered (hence IF NOT EXISTS). */
const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS buckets (
     name TEXT PRIMARY KEY,
     tokens REAL NOT NULL,
     updated_at INTEGER NOT NULL
   )`,
  `CREATE TABLE IF NOT EXISTS idempotency (
     key TEXT PRIMARY KEY,
     fingerprint TEXT NOT NULL,
     route TEXT NOT NULL,
     state TEXT NOT NULL,
     lease TEXT,
     status INTEGER,
     headers TEXT,
     body BLOB,
     job_id TEXT,
     created_at INTEGER NOT NULL,
     updated_at INTEGER NOT NULL
   )`,
  `CREATE INDEX IF NOT EXISTS idempotency_created ON idempotency (created_at)`,
  `CREATE TABLE IF NOT EXISTS counted_items (
     item_id TEXT PRIMARY KEY,
     month TEXT NOT NULL,
     counted_at INTEGER NOT NULL
   )`,
  `CREATE INDEX IF NOT EXISTS counted_items_time ON counted_items (counted_at)`,
  `CREATE TABLE IF NOT EXISTS monthly_usage (
     month TEXT PRIMARY KEY,
     items INTEGER NOT NULL
   )`,
];

/** The gate's schema, one numbered migration per change: never edit a shipped one, add the next. */
export const MIGRATIONS: readonly SqlMigration[] = [
  { id: 1, description: "rate buckets, idempotency records, counted items and monthly usage", statements: SCHEMA },
];

/** `YYYY-MM` of a time, in UTC. */
export function utcMonth(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}

export class TenantGate extends DurableObject<Env> {
  #sql: SqlStorage;
  /** The alarm currently set (mirrors storage, so scheduling needs no await). */
  #alarmAt: number | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
    ctx.blockConcurrencyWhile(async () => {
      migrate(ctx.storage, MIGRATIONS);
      this.#alarmAt = await ctx.storage.getAlarm();
    });
  }

  // ---- rate buckets -------------------------------------------------------------------------

  /** Takes one token from a bucket, refilled continuously at the bucket's rate up to its burst. */
  take(bucket: BucketName): TakeResult {
    const r = this.settle(bucket, 0, 1);
    return r.granted === 1 ? { ok: true, remaining: Math.floor(r.tokens) } : { ok: false, retryAfterSeconds: r.retryAfterSeconds };
  }

  /**
   * Charges `spent` tokens that an isolate has already admitted on its own estimate (src/http/local-rate.ts),
   * then grants up to `want` more, one per waiting request, while whole tokens remain. Charged spends may
   * take the bucket below zero: that debt delays the next requests, so over time the tenant never gets
   * more than the rate allows.
   */
  settle(bucket: BucketName, spent: number, want: number): SettleResult {
    const rule = BUCKETS[bucket];
    const now = Date.now();
    const row = this.#sql
      .exec<{ tokens: number; updated_at: number }>("SELECT tokens, updated_at FROM buckets WHERE name = ?", bucket)
      .toArray()[0];
    let tokens = row ? refilledTokens(rule, row.tokens, row.updated_at, now) : rule.burst;
    // The refill clock never runs backwards, even if the wall clock does.
    const refilledTo = row ? Math.max(row.updated_at, now) : now;
    tokens -= Math.max(0, Math.floor(spent));
    const granted = Math.max(0, Math.min(Math.floor(want), Math.floor(tokens)));
    tokens -= granted;
    this.#sql.exec("INSERT OR REPLACE INTO buckets (name, tokens, updated_at) VALUES (?, ?, ?)", bucket, tokens, refilledTo);
    return { granted, tokens, updatedAt: refilledTo, retryAfterSeconds: tokens >= 1 ? 0 : secondsUntilToken(rule, tokens) };
  }

  // ---- idempotency --------------------------------------------------------------------------

  /**
   * Starts a request under an idempotency key. `new` hands out a lease that complete/release must
   * present, so a request whose abandoned record was taken over cannot overwrite the new owner's.
   */
  begin(key: string, fingerprint: string, route: string): BeginResult {
    const now = Date.now();
    const row = this.#idem(key, now);
    if (row) {
      const abandoned = row.state === "in_progress" && now - row.updated_at >= IDEMPOTENCY_LEASE_MS;
      if (!abandoned) {
        // A different request is a conflict whether or not the first still runs: "in progress" would
        // invite the caller to retry a request that can never succeed under this key.
        if (row.fingerprint !== fingerprint) return { kind: "conflict" };
        if (row.state === "in_progress") return { kind: "in_progress" };
        if (row.state === "not_replayable") return { kind: "not_replayable", jobId: row.job_id };
        return {
          kind: "replay",
          response: { status: row.status ?? 200, headers: JSON.parse(row.headers ?? "[]"), body: row.body ?? new ArrayBuffer(0) },
        };
      }
    }
    const lease = crypto.randomUUID();
    this.#sql.exec(
      `INSERT OR REPLACE INTO idempotency (key, fingerprint, route, state, lease, created_at, updated_at)
       VALUES (?, ?, ?, 'in_progress', ?, ?, ?)`,
      key,
      fingerprint,
      route,
      lease,
      now,
      now,
    );
    this.#scheduleSweep(now + IDEMPOTENCY_TTL_MS);
    return { kind: "new", lease };
  }

  /**
   * Stores the outcome to replay. The caller decides what is replayable (successful responses and
   * committed outcomes of checks); an outcome too large to keep releases the key instead.
   */
  complete(key: string, lease: string, response: StoredResponse): boolean {
    if (response.body.byteLength > MAX_STORED_RESPONSE_BYTES) return this.release(key, lease);
    const cursor = this.#sql.exec(
      `UPDATE idempotency SET state = 'completed', lease = NULL, status = ?, headers = ?, body = ?, updated_at = ?
       WHERE key = ? AND lease = ? AND state = 'in_progress'`,
      response.status,
      JSON.stringify(response.headers),
      response.body,
      Date.now(),
      key,
      lease,
    );
    return cursor.rowsWritten > 0;
  }

  /** Frees the key after an error, so the request may be retried with it. */
  release(key: string, lease: string): boolean {
    const cursor = this.#sql.exec("DELETE FROM idempotency WHERE key = ? AND lease = ? AND state = 'in_progress'", key, lease);
    return cursor.rowsWritten > 0;
  }

  /** A streamed check: its outcome cannot be replayed; later uses of the key point at the job. */
  markNotReplayable(key: string, lease: string, jobId: string | null): boolean {
    const cursor = this.#sql.exec(
      `UPDATE idempotency SET state = 'not_replayable', lease = NULL, job_id = ?, updated_at = ?
       WHERE key = ? AND lease = ? AND state = 'in_progress'`,
      jobId,
      Date.now(),
      key,
      lease,
    );
    return cursor.rowsWritten > 0;
  }

  // ---- usage counters -----------------------------------------------------------------------

  /**
   * Counts checked items in the current UTC month, each item id once however often it is reported
   * (queue redeliveries). Returns how many were new and the month's total afterwards.
   */
  countItems(itemIds: string[]): { counted: number; month: string; total: number } {
    const now = Date.now();
    const month = utcMonth(now);
    let counted = 0;
    for (const id of new Set(itemIds)) {
      if (this.#sql.exec("SELECT 1 FROM counted_items WHERE item_id = ?", id).toArray().length > 0) continue;
      this.#sql.exec("INSERT INTO counted_items (item_id, month, counted_at) VALUES (?, ?, ?)", id, month, now);
      counted++;
    }
    if (counted > 0) {
      this.#sql.exec(
        "INSERT INTO monthly_usage (month, items) VALUES (?, ?) ON CONFLICT (month) DO UPDATE SET items = items + excluded.items",
        month,
        counted,
      );
      this.#scheduleSweep(now + COUNTED_ITEM_TTL_MS);
    }
    return { counted, month, total: this.#monthTotal(month) };
  }

  /** Items counted in a UTC month (`YYYY-MM`, default the current one). */
  monthTotal(month?: string): number {
    return this.#monthTotal(month ?? utcMonth(Date.now()));
  }

  // ---- region moves -------------------------------------------------------------------------

  /** What a move carries to the gate in the new region: usage and settled idempotency records. */
  exportState(): GateState {
    const now = Date.now();
    return {
      usage: this.#sql.exec<{ month: string; items: number }>("SELECT month, items FROM monthly_usage").toArray(),
      items: this.#sql
        .exec<{ item_id: string; month: string; counted_at: number }>("SELECT item_id, month, counted_at FROM counted_items")
        .toArray(),
      records: this.#sql
        .exec<IdemRow & { route: string }>(
          "SELECT * FROM idempotency WHERE state != 'in_progress' AND created_at > ?",
          now - IDEMPOTENCY_TTL_MS,
        )
        .toArray()
        .map((r) => ({ ...r, body: r.body ? new Uint8Array(r.body).slice().buffer : null })),
    };
  }

  /** Merges an exported state; importing the same state twice changes nothing. */
  importState(state: GateState): void {
    for (const item of state.items) {
      if (this.#sql.exec("SELECT 1 FROM counted_items WHERE item_id = ?", item.item_id).toArray().length > 0) continue;
      this.#sql.exec("INSERT INTO counted_items (item_id, month, counted_at) VALUES (?, ?, ?)", item.item_id, item.month, item.counted_at);
      this.#sql.exec(
        "INSERT INTO monthly_usage (month, items) VALUES (?, 1) ON CONFLICT (month) DO UPDATE SET items = items + 1",
        item.month,
      );
    }
    for (const u of state.usage) {
      this.#sql.exec(
        "INSERT INTO monthly_usage (month, items) VALUES (?, ?) ON CONFLICT (month) DO UPDATE SET items = MAX(items, excluded.items)",
        u.month,
        u.items,
      );
    }
    for (const r of state.records) {
      this.#sql.exec(
        `INSERT OR IGNORE INTO idempotency (key, fingerprint, route, state, lease, status, headers, body, job_id, created_at, updated_at)
         VALUES (?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?)`,
        r.key,
        r.fingerprint,
        r.route,
        r.state,
        r.status,
        r.headers,
        r.body,
        r.job_id,
        r.created_at,
        r.updated_at,
      );
    }
    const oldest = Math.min(
      ...state.records.map((r) => r.created_at + IDEMPOTENCY_TTL_MS),
      ...state.items.map((i) => i.counted_at + COUNTED_ITEM_TTL_MS),
    );
    if (Number.isFinite(oldest)) this.#scheduleSweep(Math.max(oldest, Date.now() + 1000));
  }

  // ---- expiry -------------------------------------------------------------------------------

  override async alarm(): Promise<void> {
    const now = Date.now();
    this.#alarmAt = null;
    this.#sql.exec("DELETE FROM idempotency WHERE created_at <= ?", now - IDEMPOTENCY_TTL_MS);
    this.#sql.exec("DELETE FROM counted_items WHERE counted_at <= ?", now - COUNTED_ITEM_TTL_MS);
    const next = this.#sql
      .exec<{ at: number | null }>(
        `SELECT MIN(at) AS at FROM (
           SELECT MIN(created_at) + ? AS at FROM idempotency
           UNION ALL SELECT MIN(counted_at) + ? AS at FROM counted_items)`,
        IDEMPOTENCY_TTL_MS,
        COUNTED_ITEM_TTL_MS,
      )
      .one().at;
    if (next !== null) this.#scheduleSweep(Math.max(next, now + 1000));
  }

  #monthTotal(month: string): number {
    return this.#sql.exec<{ items: number }>("SELECT items FROM monthly_usage WHERE month = ?", month).toArray()[0]?.items ?? 0;
  }

  /** The record of a key, or null when absent or past its 24 h (deleted on sight). */
  #idem(key: string, now: number): IdemRow | null {
    const row = this.#sql.exec<IdemRow>("SELECT * FROM idempotency WHERE key = ?", key).toArray()[0];
    if (!row) return null;
    if (now - row.created_at >= IDEMPOTENCY_TTL_MS) {
      this.#sql.exec("DELETE FROM idempotency WHERE key = ?", key);
      return null;
    }
    return row;
  }

  /** Keeps one alarm at the earliest time something expires. */
  #scheduleSweep(at: number): void {
    if (this.#alarmAt !== null && this.#alarmAt <= at) return;
    this.#alarmAt = at;
    // Not awaited: storage writes are ordered and the output gate holds replies until it is durable.
    void this.ctx.storage.setAlarm(at);
  }
}
