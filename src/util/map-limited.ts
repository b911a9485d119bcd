/** Runs functions with at most `limit` in flight at once; the others wait their turn, in call order. */
export function concurrencyGate(limit: number): <R>(fn: () => Promise<R>) => Promise<R> {
  let active = 0;
  const waiting: (() => void)[] = [];
  return async (fn) => {
    if (active >= Math.max(1, limit)) await new Promise<void>((resolve) => waiting.push(resolve));
    else active++;
    try {
      return await fn();
    } finally {
      // The slot passes straight to the next waiter (active unchanged), or frees up.
      const next = waiting.shift();
      if (next) next();
      else active--;
    }
  };
}

/**
 * `fn` over every item with at most `limit` calls in flight at once; the results in input order. On the
 * first failure no further call starts, and the returned promise rejects only once every call already
 * started has ended: a caller that cleans up after a failure (deletes what was written) then sees
 * nothing land behind its back.
 */
export async function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const gate = concurrencyGate(limit);
  let failed = false;
  const settled = await Promise.allSettled(
    items.map((item, n) =>
      gate(async () => {
        if (failed) throw new Skipped();
        try {
          return await fn(item, n);
        } catch (err) {
          failed = true;
          throw err;
        }
      }),
    ),
  );
  const firstError = settled.find((r): r is PromiseRejectedResult => r.status === "rejected" && !(r.reason instanceof Skipped));
  if (firstError) throw firstError.reason;
  return settled.map((r) => (r as PromiseFulfilledResult<R>).value);
}

/** A call not started because an earlier one failed. */
class Skipped extends Error {}
