import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./context";
import { newId } from "../domain/ids";

const CALLER_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** The caller's X-Request-Id when it is well formed (spec 4.1), else a new `req_<ulid>`. */
export function requestIdFor(given: string | null | undefined): string {
  return typeof given === "string" && CALLER_ID.test(given) ? given : newId("req");
}

/** Takes the caller's X-Request-Id when it is well formed, else mints `req_<ulid>`. */
export function requestId(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const id = requestIdFor(c.req.header("X-Request-Id"));
    c.set("requestId", id);
    await next();
    c.header("X-Request-Id", id);
  };
}
