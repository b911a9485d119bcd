import type { Env } from "../env";
import type { Org } from "../http/context";
import type { UrlPolicy } from "../fetch/url-policy";

/**
 * The URL policy of an organisation: its allowlisted hosts and buckets. Plain http is allowed only for
 * the hosts in INSECURE_FETCH_HOSTS, which only the test configuration sets (its loopback document host).
 */
export function urlPolicyOf(org: Org, env: Env): UrlPolicy {
  return { allowHosts: org.allowHosts, allowBuckets: org.allowBuckets, insecureHosts: insecureFetchHosts(env) };
}

/** INSECURE_FETCH_HOSTS: hosts that may be fetched over http and may be loopback (test configuration only). */
export function insecureFetchHosts(env: Env): string[] {
  return (env.INSECURE_FETCH_HOSTS ?? "").split(",").map((h) => h.trim()).filter(Boolean);
}
