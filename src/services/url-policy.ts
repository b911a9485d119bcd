import type { Env } from "../env";
import { configOf } from "../config";
import type { Org } from "../domain/tenancy";
import type { UrlPolicy } from "../fetch/url-policy";

/**
 * The URL policy of an organisation: its allowlisted hosts and buckets. Plain http is allowed only for
 * the hosts in INSECURE_FETCH_HOSTS, which only the test configuration sets (its loopback document host).
 */
export function urlPolicyOf(org: Org, env: Env): UrlPolicy {
  return { allowHosts: org.allowHosts, allowBuckets: org.allowBuckets, insecureHosts: configOf(env).insecureFetchHosts };
}
