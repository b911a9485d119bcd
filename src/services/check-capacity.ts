/**
 * How much inline checking an isolate takes on. A synchronous or streamed check takes a slot; when none
 * frees up within the item's budget the request answers 503 busy and the job goes on through the queue.
 * The capacity and the budget are Config.checks (src/config.ts), so tests and operators can force both
 * outcomes.
 */

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
      const timer = setTimeout(
        () => {
          this.#waiters = this.#waiters.filter((w) => w !== waiter);
          resolve(null);
        },
        Math.max(0, deadline - Date.now()),
      );
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
