import type { App } from "../app";
import { registerEndpointRoutes } from "./webhook-routes";

/**
 * Verification webhook endpoints (spec 2.7, 6.2): listing and reading need `org:read`, every change
 * `sig:settings:manage`. Creating takes no Idempotency-Key (spec 4.1): the secret is shown once, and a
 * replay would show it again.
 */
export function registerWebhookRoutes(app: App): void {
  registerEndpointRoutes(app, {
    product: "sig",
    base: "/sig/webhooks",
    tag: "webhooks",
    label: "verification",
    read: "org:read",
    manage: "sig:settings:manage",
    createIdempotency: "none",
    routes: ["list", "create", "read", "update", "delete", "rotate", "deliveries", "delivery", "attempts", "test", "redeliver"],
  });
}
