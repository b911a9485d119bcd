/** Exponential backoff for queue retries: 10 s, 20 s, 40 s ... capped at 10 minutes. */
export function backoffSeconds(attempts: number): number {
  return Math.min(600, 10 * 2 ** Math.max(0, attempts - 1));
}
