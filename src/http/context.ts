import type { Env } from "../env";
import type { Caller, Tenant } from "../domain/tenancy";

export type AppVariables = {
  requestId: string;
  /** The Service-Version used for this request (resolved from the header or the pin). */
  version: string;
  /** True when the version came from the Service-Version header rather than the pin. */
  versionFromHeader: boolean;
  caller: Caller;
  tenant: Tenant;
};

export type AppEnv = { Bindings: Env; Variables: AppVariables };
