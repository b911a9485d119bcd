import { REGISTRY, changesSince } from "./registry";
import type { VersionRegistry } from "./types";

function apply(body: unknown, changes: { down(body: unknown): unknown }[]): unknown {
  return changes.reduce((b, change) => change.down(b), body);
}

/**
 * Renders a resource, produced in the latest shape, in an older version. Webhook payloads use this
 * with the organisation's pinned version.
 */
export function renderForVersion(resourceType: string, body: unknown, version: string, registry: VersionRegistry = REGISTRY): unknown {
  return apply(
    body,
    changesSince(version, registry, (c) => c.resources?.includes(resourceType) ?? false),
  );
}

/** Renders a route's response body (route as `METHOD /path/:param`) in an older version. */
export function renderRouteForVersion(route: string, body: unknown, version: string, registry: VersionRegistry = REGISTRY): unknown {
  return apply(
    body,
    changesSince(version, registry, (c) => c.routes?.includes(route) ?? false),
  );
}

/** True when a route's responses differ in `version` (so the body must be read and rewritten). */
export function routeChangesIn(route: string, version: string, registry: VersionRegistry = REGISTRY): boolean {
  return changesSince(version, registry, (c) => c.routes?.includes(route) ?? false).length > 0;
}
