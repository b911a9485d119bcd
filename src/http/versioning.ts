import type { Context, MiddlewareHandler } from "hono";
import { REGISTRY, latestVersion, versionProblem, versionStatus } from "../versions/registry";
import { renderRouteForVersion, routeChangesIn } from "../versions/render";
import type { VersionRegistry } from "../versions/types";
import type { AppEnv } from "./context";
import { configOf } from "../config";
import { ProblemError, renderProblem } from "./problem";

/** The current version of the interface. */
export const LATEST_VERSION = latestVersion(REGISTRY);
export const VERSION_HEADER = "Service-Version";

export interface VersioningOptions {
  /** Injected by tests; production uses the real registry. */
  registry?: VersionRegistry;
  now?: () => Date;
}

/** Deprecation, Sunset and Link headers (RFC 9745, RFC 8594) of a deprecated version, if it is one. */
export function deprecationHeaders(version: string, docsUrl: string, now: Date, registry: VersionRegistry): Record<string, string> {
  const status = versionStatus(version, now, registry);
  if (!status || status.status === "current") return {};
  const docs = docsUrl.replace(/\/$/, "");
  return {
    Deprecation: `@${Math.floor(Date.parse(`${status.deprecatedAt}T00:00:00Z`) / 1000)}`,
    Sunset: new Date(`${status.sunset}T00:00:00Z`).toUTCString(),
    Link: `<${docs}/changelog#${version}>; rel="deprecation", <${docs}/upgrading#${version}>; rel="sunset"`,
  };
}

/**
 * The organisation's pin applies once the tenant is known. Tenancy may call this as soon as it sets
 * the tenant, so handlers see the version too; the response phase applies it in any case.
 */
export function applyPinnedVersion(c: Context<AppEnv>, registry: VersionRegistry = REGISTRY, now: Date = new Date()): void {
  if (c.get("versionFromHeader")) return;
  const pin = c.get("tenant")?.org.pinnedVersion;
  // A pin that is unknown here or already sunset falls back to the latest version.
  if (pin && versionProblem(pin, now, registry) === null) c.set("version", pin);
}

/** Pipeline step after tenancy: handlers see the organisation's pinned version from here on. */
export function pinnedVersion(options: VersioningOptions = {}): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    applyPinnedVersion(c, options.registry, options.now?.());
    return next();
  };
}

/**
 * Service-Version (spec part 9): the header, checked before anything else, overrides the
 * organisation's pin for one request; unauthenticated routes use the latest version. Responses in
 * an older version are rewritten by the registry's changes, and every response, errors included,
 * names the version used and the latest one.
 */
export function versioning(options: VersioningOptions = {}): MiddlewareHandler<AppEnv> {
  const registry = options.registry ?? REGISTRY;
  const now = options.now ?? (() => new Date());
  const latest = latestVersion(registry);

  const stamp = (headers: Headers, version: string, docsUrl: string) => {
    headers.set(VERSION_HEADER, version);
    headers.set("Service-Latest-Version", latest);
    for (const [name, value] of Object.entries(deprecationHeaders(version, docsUrl, now(), registry))) headers.set(name, value);
  };

  return async (c, next) => {
    const requested = c.req.header(VERSION_HEADER);
    c.set("version", latest);
    c.set("versionFromHeader", false);
    if (requested !== undefined) {
      const problem = versionProblem(requested.trim(), now(), registry);
      if (problem) {
        const res = renderProblem(
          new ProblemError("invalid_version", problem, { extensions: { errors: [{ field: VERSION_HEADER, message: problem }] } }),
          configOf(c.env).docsUrl,
          c.get("requestId"),
        );
        stamp(res.headers, latest, configOf(c.env).docsUrl);
        return res;
      }
      c.set("version", requested.trim());
      c.set("versionFromHeader", true);
    }

    await next();

    applyPinnedVersion(c, registry, now());
    const version = c.get("version");
    const route = `${c.req.method} ${c.req.routePath}`;
    const res = c.res;
    if (
      version !== latest &&
      res.status < 300 &&
      (res.headers.get("Content-Type") ?? "").startsWith("application/json") &&
      routeChangesIn(route, version, registry)
    ) {
      const body = renderRouteForVersion(route, await res.json(), version, registry);
      const headers = new Headers(res.headers);
      headers.delete("Content-Length");
      c.res = undefined;
      c.res = new Response(JSON.stringify(body), { status: res.status, headers });
    }
    try {
      stamp(c.res.headers, version, configOf(c.env).docsUrl);
    } catch {
      // A response passed through from fetch() has immutable headers: stamp a copy.
      const copy = new Response(c.res.body, c.res);
      stamp(copy.headers, version, configOf(c.env).docsUrl);
      c.res = undefined;
      c.res = copy;
    }
  };
}
