import type { App } from "../../app";
import { registerAuditRoutes } from "./audit";
import { registerKeyRoutes } from "./keys";
import { registerMeRoutes } from "./me";
import { registerOrgRoutes } from "./orgs";
import { registerVersionPinRoutes } from "./version-pin";

/** The platform surface under /platform/: operator routes (operator credential) and tenant self-service. */
export function registerPlatformRoutes(app: App): void {
  app.openAPIRegistry.registerComponent("securitySchemes", "operator", {
    type: "http",
    scheme: "bearer",
    description: "The operator credential (OPERATOR_TOKEN secret)",
  });
  registerOrgRoutes(app);
  registerKeyRoutes(app);
  registerMeRoutes(app);
  registerAuditRoutes(app);
  registerVersionPinRoutes(app);
}
