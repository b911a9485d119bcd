import type { Env } from "../env";
import type { Caller, Tenant } from "../domain/tenancy";
import type { RequestServices } from "../services/request-services";

export type AppVariables = {
  requestId: string;
  /** The Service-Version used for this request (resolved from the header or the pin). */
  version: string;
  /** True when the version came from the Service-Version header rather than the pin. */
  versionFromHeader: boolean;
  caller: Caller;
  tenant: Tenant;
  /** The request's use cases, built on first use by services(c) (http/services.ts). */
  services?: RequestServices;
};

export type AppEnv = { Bindings: Env; Variables: AppVariables };
