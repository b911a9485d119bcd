/**
 * The use cases one request may run, built once per request from what the request established (its
 * tenant, caller and id) and the deployment (bindings, config, engine). Route handlers receive them
 * through services(c) (src/http/services.ts) and stay a contract plus a thin handler; queue consumers
 * build what they need the same way, from a message instead of a request.
 */
import type { Config } from "../config";
import type { Env } from "../env";
import type { Caller, Tenant } from "../domain/tenancy";
import { checkCrops } from "./check-crops";
import { liveCheckEngine } from "./check-engine-live";
import { checkRuns } from "./check-runs";
import type { CheckContext } from "./checks";
import { policyPublication } from "./policies";
import { referenceIngestion } from "./reference-ingestion";

export interface RequestScope {
  env: Env;
  config: Config;
  tenant: Tenant;
  caller: Caller;
  requestId: string;
  /** Keeps work alive after the response (ExecutionContext.waitUntil). */
  waitUntil(work: Promise<unknown>): void;
}

export function requestServices(scope: RequestScope) {
  const { env, config, tenant } = scope;
  const engine = liveCheckEngine();
  const checkContext: CheckContext = { env, org: tenant.org, store: tenant.store, engine };
  return {
    engine,
    /** The context check jobs are created and run in (services/checks.ts). */
    checkContext,
    checkRuns: checkRuns({ ctx: checkContext, checks: config.checks, waitUntil: scope.waitUntil }),
    crops: checkCrops({ orgId: tenant.org.id, store: tenant.store, engine }),
    references: referenceIngestion({ env, org: tenant.org, store: tenant.store, engine, urlFetch: config.urlFetch }),
    policies: policyPublication({ db: tenant.store.db, org: tenant.org, actor: scope.caller.actor, requestId: scope.requestId }),
  };
}

export type RequestServices = ReturnType<typeof requestServices>;
