import { createRoute, type RouteConfig } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { constantTimeEqual } from "../../domain/api-key";
import { bearerToken } from "../../http/auth";
import type { AppEnv } from "../../http/context";
import { configOf } from "../../config";
import { ProblemError } from "../../http/problem";

/** Audit actor of every change made through the operator routes. */
export const OPERATOR_ACTOR = "operator";

/** 401 unless the request carries the operator secret (compared in constant time). */
export function operatorAuth(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const expected = configOf(c.env).operatorToken;
    const token = bearerToken(c.req.header("Authorization"));
    // An unset secret must never match an empty or missing token.
    if (!expected || !token || !constantTimeEqual(token, expected)) {
      throw new ProblemError("unauthorized", "This platform route requires the operator credential.", {
        headers: { "WWW-Authenticate": 'Bearer realm="countersign-platform"' },
      });
    }
    return next();
  };
}

/**
 * A platform route contract: like defineRoute, but guarded by the operator credential instead of the
 * tenant pipeline (no tenant, rate limit or idempotency: operators act on any organisation).
 */
export function platformRoute<R extends RouteConfig>(config: R) {
  return createRoute({
    ...config,
    tags: ["platform"],
    security: [{ operator: [] }],
    middleware: [operatorAuth()] as never,
    "x-permission": "operator",
  } as R);
}
