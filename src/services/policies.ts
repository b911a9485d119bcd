/**
 * Publishing a policy: a spec that differs from the latest version (compared canonically) becomes the
 * next version, audited; one that equals it changes nothing. Two publishers racing for the same version
 * number: the loser re-reads and either finds its spec already published or takes the next number.
 */
import { samePolicySpec, type Policy, type PolicySpec } from "../domain/policy";
import { getLatestPolicy, insertPolicyVersion, type PolicyOwner } from "../storage/policies";
import { forgetPolicies } from "../storage/policy-cache";

/** A publisher that lost this many races in a row gives up (an internal error, never seen in practice). */
const MAX_ATTEMPTS = 5;

export function policyPublication(scope: { db: D1Database; org: PolicyOwner; actor: string; requestId?: string }) {
  return {
    async publish(name: string, spec: PolicySpec): Promise<{ created: boolean; policy: Policy }> {
      for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
        const latest = await getLatestPolicy(scope.db, scope.org, name);
        if (latest && samePolicySpec(latest.spec, spec)) {
          // Nothing new, but this isolate's cached list may predate that version (published elsewhere):
          // the publisher's next read shows what its publish answered.
          forgetPolicies(scope.org.id);
          return { created: false, policy: latest };
        }
        const policy: Policy = {
          name,
          version: (latest?.version ?? 0) + 1,
          spec,
          createdAt: new Date().toISOString(),
          createdBy: scope.actor,
          builtin: false,
        };
        const inserted = await insertPolicyVersion(scope.db, scope.org, policy, {
          actor: scope.actor,
          requestId: scope.requestId,
          previousVersion: latest?.version ?? null,
        });
        if (inserted) return { created: true, policy };
      }
      throw new Error(`policy ${name}: could not publish after repeated concurrent updates`);
    },
  };
}

export type PolicyPublication = ReturnType<typeof policyPublication>;
