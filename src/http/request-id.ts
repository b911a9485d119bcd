import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./context";
import { newId } from "../domain/ids";

const CALLER_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** Takes the caller's X-Request-Id when it is well formed, else mints `req_<ulid>`. */
export function requestId(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const given = c.req.header("X-Request-Id");
    const id = given !== undefined && CALLER_ID.test(given) ? given : newId("req");
    c.set("requestId", id);
    await next();
    c.header("X-Request-Id", id);
  };
}
