/**
 * Waiting on an event the test cannot subscribe to (a queue consumer finishing, a counter reaching a
 * value): read the state until the condition holds, a bounded number of times. The pause between reads
 * only spaces them out; correctness never depends on it, and the bound turns "never happened" into a
 * failure that says what was awaited and what was last seen.
 */
export async function until<T>(
  read: () => Promise<T>,
  holds: (value: T) => boolean,
  { what = "the condition", tries = 200, pauseMs = 50 }: { what?: string; tries?: number; pauseMs?: number } = {},
): Promise<T> {
  let last: T | undefined;
  for (let i = 0; i < tries; i++) {
    last = await read();
    if (holds(last)) return last;
    await new Promise((r) => setTimeout(r, pauseMs));
  }
  throw new Error(`${what} did not hold after ${tries} reads; last seen: ${JSON.stringify(last)}`);
}
