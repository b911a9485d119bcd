import type { MiddlewareHandler } from "hono";
import { recordAudit } from "../storage/audit";
import { directory } from "../storage/directory";
import { orgChain } from "../storage/directory-cache";
import { mayUseDirectoryCache } from "./auth";
import { regionStore } from "../storage/regions";
import type { AppEnv } from "./context";
import type { Org } from "../domain/tenancy";
import { ProblemError } from "./problem";
import { hostOfRegion, regionOfHost } from "./region";
import { applyPinnedVersion } from "./versioning";
import type { RouteRules } from "./route";

/** Seconds a client should wait before retrying while its organisation moves region. */
export const ORG_MOVING_RETRY_AFTER = 30;

const ORG_ID = /^org_[0-9A-HJKMNP-TV-Z]{26}$/;

/**
 * Sets c.var.tenant: the organisation the request acts in (the caller's own, or a descendant named by
 * Service-Org), after suspension, move and region checks, with its home region's storage.
 */
export function resolveTenant(_rules: Required<RouteRules>): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const caller = c.get("caller");
    const dir = directory(c.env.DIRECTORY);
    const requested = c.req.header("Service-Org")?.trim();
    if (requested?.includes(",")) {
      throw new ProblemError("invalid_request", "Service-Org: names one organisation per request.", {
        extensions: { errors: [{ field: "Service-Org", message: "names one organisation per request" }] },
      });
    }
    const actingAs = requested !== undefined && requested !== "" && requested !== caller.orgId;
    // Session tokens (the live capture) always read the directory: a suspension must close them at once.
    const mayUseCache = mayUseDirectoryCache(c.req.method, c.req.path) && caller.kind !== "session";

    let chain: Org[];
    if (actingAs) {
      if (!caller.permissions.has("org:children:access")) {
        throw new ProblemError(
          "permission_denied",
          "Acting in another organisation (Service-Org) requires the permission org:children:access.",
          {
            extensions: { permission: "org:children:access" },
          },
        );
      }
      chain = ORG_ID.test(requested) ? await orgChain(dir, requested, mayUseCache) : [];
      // Anything that is not strictly below the caller's organisation is answered as missing.
      if (!chain.slice(1).some((o) => o.id === caller.orgId)) {
        // A malformed value is not echoed at length: it names no organisation anyway.
        const named = ORG_ID.test(requested) ? requested : "named in Service-Org";
        throw new ProblemError("not_found", `The organisation ${named} does not exist.`);
      }
    } else {
      chain = await orgChain(dir, caller.orgId, mayUseCache);
      if (chain.length === 0) throw new ProblemError("unauthorized", "The credential's organisation no longer exists.");
    }

    const org = chain[0];
    // Suspension of an organisation or of any organisation above it refuses the credential (401), as the
    // spec prescribes for session tokens; API keys and dashboard users are treated the same way.
    const suspended = chain.find((o) => o.suspended);
    if (suspended) {
      throw new ProblemError(
        "unauthorized",
        suspended.id === org.id
          ? `The organisation ${org.id} is suspended.`
          : `The organisation ${org.id} is suspended through ${suspended.id}.`,
      );
    }
    if (org.movingTo) {
      throw new ProblemError("org_moving", `The organisation ${org.id} is being moved to region ${org.movingTo}; retry shortly.`, {
        headers: { "Retry-After": String(ORG_MOVING_RETRY_AFTER) },
      });
    }
    const hostRegion = regionOfHost(c.env, new URL(c.req.url).host);
    if (hostRegion && hostRegion !== org.region) {
      const apiHost = hostOfRegion(c.env, org.region) ?? undefined;
      throw new ProblemError("wrong_region", `The organisation lives in region ${org.region}; use ${apiHost}.`, {
        extensions: { region: org.region, api_host: apiHost },
      });
    }

    const store = regionStore(c.env, org.region);
    c.set("tenant", { org, store, actingAs });
    // Handlers see the organisation's pinned version from here on (unless the header overrode it).
    applyPinnedVersion(c);
    if (actingAs) {
      await recordAudit(store.db, {
        orgId: org.id,
        actor: caller.actor,
        action: "org.act_as",
        target: `${c.req.method} ${new URL(c.req.url).pathname}`,
        detail: { from_org: caller.orgId },
        requestId: c.get("requestId"),
      });
    }
    return next();
  };
}
