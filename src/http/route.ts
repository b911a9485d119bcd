import { createRoute, z, type RouteConfig } from "@hono/zod-openapi";
import type { CredentialKind, Permission } from "../domain/tenancy";
import { bodyRules } from "./body";
import { pipelineFor } from "./pipeline";
import { ProblemSchema } from "./schemas";

/**
 * What a route demands of its caller. The pipeline (authentication, tenancy, region, permission,
 * billing, rate limit, idempotency) is derived from these rules, so each route states them once.
 */
export interface RouteRules {
  /** Exactly one permission, or "none" for an unauthenticated route. */
  permission: Permission | "none";
  /** Credentials accepted; default API keys and dashboard users. Session tokens must be listed. */
  credentials?: CredentialKind[];
  /** Which rate bucket the request draws from; default "api" for authenticated routes. */
  rate?: "api" | "image" | "none";
  /**
   * Idempotency-Key handling; default "required" on POST, "none" otherwise. "optional": a route the spec
   * exempts from the key, where a retry still does harm; a key sent is honoured as on "required" routes.
   */
  idempotency?: "required" | "optional" | "none";
  /** 402 billing_required while the subscription is inactive or canceled. */
  billing?: boolean;
}

export type DefinedRoute<R extends RouteConfig> = ReturnType<typeof createRoute<string, R>> & {
  rules: Required<RouteRules>;
};

export function resolveRules(method: string, rules: RouteRules): Required<RouteRules> {
  const authenticated = rules.permission !== "none";
  return {
    permission: rules.permission,
    credentials: rules.credentials ?? (authenticated ? ["api_key", "user"] : []),
    rate: rules.rate ?? (authenticated ? "api" : "none"),
    idempotency: rules.idempotency ?? (method.toLowerCase() === "post" ? "required" : "none"),
    billing: rules.billing ?? false,
  };
}

/** A route contract: zod request/response schemas plus its rules, giving validation, types and OpenAPI. */
export function defineRoute<R extends RouteConfig>(rules: RouteRules, config: R) {
  const resolved = resolveRules(config.method, rules);
  const body = bodyRules(config);
  const route = createRoute({
    ...config,
    middleware: [...pipelineFor(resolved, body.before), ...body.after] as never,
    "x-permission": resolved.permission,
    "x-credentials": resolved.credentials,
    "x-rate-limit": resolved.rate,
    "x-idempotency": resolved.idempotency,
    "x-billing": resolved.billing,
  } as R);
  return Object.assign(route, { rules: resolved });
}

const PROBLEM_DESCRIPTIONS: Record<number, string> = {
  400: "Invalid request (names the offending field)",
  401: "Missing, malformed, unknown, revoked or expired credential",
  402: "Billing required",
  403: "Permission denied",
  404: "Not found (also another tenant's resource)",
  408: "Request body not received within 120 s",
  409: "Conflict",
  413: "Body too large",
  415: "Unsupported media type",
  421: "Wrong region",
  422: "Unprocessable content",
  429: "Rate limited or quota exceeded",
  501: "Not implemented",
  502: "Fetch failed",
  503: "Busy, organisation moving, or unavailable",
  504: "Timeout",
};

/** Problem responses for a route's OpenAPI entry: `responses: { 200: ..., ...problems(400, 401) }`. */
export function problems(...statuses: number[]) {
  const out: Record<number, { description: string; content: { "application/problem+json": { schema: typeof ProblemSchema } } }> = {};
  for (const s of statuses) {
    out[s] = {
      description: PROBLEM_DESCRIPTIONS[s] ?? "Problem",
      content: { "application/problem+json": { schema: ProblemSchema } },
    };
  }
  return out;
}

/** The problem statuses every authenticated route can answer. */
export const AUTH_PROBLEMS = [400, 401, 403, 421, 429, 503] as const;

export { z };
