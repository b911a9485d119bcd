/**
 * How much inline checking an isolate takes on, and for how long. A synchronous or streamed check takes
 * a slot; when none frees up within the item's budget the request answers 503 busy and the job goes on
 * through the queue. The settings come from the environment so that tests (and operators) can force
 * both outcomes; unset, the production values apply.
 */
import type { Env } from "../env";
import { ITEM_BUDGET_MS } from "../domain/job";
import { FETCH_DEADLINE_MS } from "../fetch/url-fetch";

/** Optional settings read by checks; none is needed in production. */
export interface CheckSettingsEnv {
  /** Budget of one inline item in ms (default 30000). */
  CHECK_ITEM_BUDGET_MS?: string;
  /** Inline checks one isolate runs at once (default 4); 0 sends every inline check to the queue. */
  CHECK_CAPACITY?: string;
  /** Interval of the stream's keep-alive comments in ms (default 10000). */
  CHECK_KEEPALIVE_MS?: string;
  /** Shared deadline of one request's URL fetches in ms (default 60000); enrolment reads it too. */
  URL_FETCH_DEADLINE_MS?: string;
}

export const DEFAULT_CAPACITY = 4;
export const KEEPALIVE_MS = 10_000;

function intSetting(raw: string | undefined, fallback: number, min: number): number {
  if (raw === undefined || raw.trim() === "") return fallback;
  const n = Number(raw);
  return Number.isFinite(n) && n >= min ? Math.floor(n) : fallback;
}

export function checkSettings(env: Env) {
  const e = env as Env & CheckSettingsEnv;
  return {
    itemBudgetMs: intSetting(e.CHECK_ITEM_BUDGET_MS, ITEM_BUDGET_MS, 1),
    capacity: intSetting(e.CHECK_CAPACITY, DEFAULT_CAPACITY, 0),
    keepAliveMs: intSetting(e.CHECK_KEEPALIVE_MS, KEEPALIVE_MS, 10),
    fetchDeadlineMs: intSetting(e.URL_FETCH_DEADLINE_MS, FETCH_DEADLINE_MS, 1),
  };
}

/** A counting semaphore for the isolate's inline checks; waiters are served in arrival order. */
class Slots {
  #active = 0;
  #waiters: { grant: () => void }[] = [];

  /** A release function, or null when no slot frees up before `deadline`. */
  async acquire(limit: number, deadline: number): Promise<(() => void) | null> {
    if (this.#active < limit && this.#waiters.length === 0) return this.#take(limit);
    if (limit <= 0) return null;
    return new Promise((resolve) => {
      const waiter = {
        grant: () => {
          clearTimeout(timer);
          resolve(this.#take(limit));
        },
      };
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((w) => w !== waiter);
        resolve(null);
      }, Math.max(0, deadline - Date.now()));
      this.#waiters.push(waiter);
    });
  }

  #take(limit: number): () => void {
    this.#active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#active--;
      if (this.#active < limit) this.#waiters.shift()?.grant();
    };
  }
}

export const inlineSlots = new Slots();
