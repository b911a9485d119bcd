import type { MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import { logInfo, logWarn, withLogContext } from "../util/log";
import type { AppEnv } from "./context";

/**
 * One JSON line per request: method, route template (never the raw path, which holds ids), status,
 * duration, request id, the organisation when one was established, and the problem code of an error.
 * Installed right after `requestId()`, it also puts the request id into the log context, so every line
 * logged while the request runs carries it. A streamed response is logged when its headers are sent.
 */
export function accessLog(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const requestId = c.get("requestId");
    const started = Date.now();
    await withLogContext({ request_id: requestId }, next);
    const status = c.res.status;
    const route = routePath(c, -1);
    // A 5xx is the service's failure: warn, so it shows among the warnings; its error line says why.
    (status >= 500 ? logWarn : logInfo)("request", {
      request_id: requestId,
      method: c.req.method,
      // Only middleware ("*") matched: no route has this path.
      route: route === "*" || route === "/*" ? null : route,
      status,
      // Workers advance the clock only across I/O, so this is the request's I/O-bound time.
      duration_ms: Date.now() - started,
      org_id: c.get("tenant")?.org.id ?? c.get("caller")?.orgId ?? null,
      ...(status >= 400 ? { code: await problemCode(c.res) } : {}),
    });
  };
}

/** The `code` of a problem document; problem bodies are small and the clone leaves the response intact. */
async function problemCode(res: Response): Promise<string | null> {
  if (!(res.headers.get("Content-Type") ?? "").startsWith("application/problem+json")) return null;
  try {
    const body = (await res.clone().json()) as { code?: unknown };
    return typeof body.code === "string" ? body.code : null;
  } catch {
    return null;
  }
}
