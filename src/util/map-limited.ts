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

/** `fn` over every item with at most `limit` calls in flight at once; the results in input order. */
export function mapLimited<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const gate = concurrencyGate(limit);
  return Promise.all(items.map((item, n) => gate(() => fn(item, n))));
}
