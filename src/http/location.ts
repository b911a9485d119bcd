import type { Context } from "hono";
import type { AppEnv } from "./context";

/**
 * A `Location` (or `status_url`) on the address the caller used: absolute, as the check route has always
 * answered, so a client follows every Location the same way whichever regional host it called.
 */
export function absoluteUrl(c: Context<AppEnv>, path: string): string {
  return `${new URL(c.req.url).origin}${path}`;
}
