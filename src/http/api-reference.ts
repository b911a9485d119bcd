import type { OpenAPIHono } from "@hono/zod-openapi";
import { Scalar } from "@scalar/hono-api-reference";
import type { AppEnv } from "./context";

/**
 * The Scalar UI script, pinned to an exact version so the page does not change under us when Scalar
 * publishes. It is loaded from the CDN rather than served by the Worker: the standalone build is a few MB,
 * the API itself never needs it, and only this page loads it (docs/deploy.md says how to self-host it).
 */
export const API_REFERENCE_SCRIPT = "https://cdn.jsdelivr.net/npm/@scalar/api-reference@1.72.1";

/** GET /docs: the rendered API reference of GET /openapi.json, unauthenticated like the document itself. */
export function registerApiReference(app: OpenAPIHono<AppEnv>): void {
  app.get(
    "/docs",
    Scalar({
      url: "/openapi.json",
      pageTitle: "Countersign API reference",
      cdn: API_REFERENCE_SCRIPT,
      // No telemetry and no third-party request proxy: "Try it" calls go from the browser to this origin.
      telemetry: false,
    }),
  );
}
