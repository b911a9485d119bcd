import type { App } from "../app";
import { registerEndpointRoutes } from "./webhook-routes";

/**
 * Verification webhook endpoints (spec 2.7, 6.2): listing and reading need `org:read`, every change
 * `sig:settings:manage`. Spec 4.1 exempts POST /sig/webhooks from Idempotency-Key, so creating needs none;
 * a key sent is honoured all the same, so a retry after a lost response does not create a second endpoint.
 */
export function registerWebhookRoutes(app: App): void {
  registerEndpointRoutes(app, {
    product: "sig",
    base: "/sig/webhooks",
    tag: "webhooks",
    label: "verification",
    read: "org:read",
    manage: "sig:settings:manage",
    createIdempotency: "optional",
    routes: ["list", "create", "read", "update", "delete", "rotate", "deliveries", "delivery", "attempts", "test", "redeliver"],
  });
}
