import { Hono } from "hono";

/** Path of the bare benchmark route (mounted by src/index.ts only when BENCH_BARE_ROUTE is "1"). */
export const BARE_ROUTE_PATH = "/__bench/bare";

/**
 * A bare Hono route, no middleware: what `npm run bench:api` divides the API's latency by, so the ratio
 * is the cost of our request pipeline alone (same Worker entry, same workerd, same connection path).
 */
export const bareApp = new Hono().get(BARE_ROUTE_PATH, (c) => c.json({ ok: true }));
