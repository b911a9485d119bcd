/**
 * Where a webhook endpoint may point: https on a public host. The scheme and credential rules are the
 * URL fetcher's (`refuseUrl` of src/fetch/url-policy.ts); what is webhook-specific is that any public
 * host is allowed (no allowlist) while loopback, private, link-local, metadata and other special
 * addresses are refused, both as literals in the URL and, at every delivery, after resolving the name
 * (DNS can change between the endpoint's creation and a delivery).
 *
 * A local development setting (`devHosts`, from WEBHOOK_DEV_HOSTS) names `host:port`s that are allowed
 * over plain http and despite being loopback: the test configuration's loopback receiver. Empty in
 * production.
 */
import { refuseUrl } from "../fetch/url-policy";
import { parseIpv4, parseIpv6, specialHost } from "../fetch/host-address";

export const MAX_WEBHOOK_URL_LENGTH = 2048;

export type WebhookUrlRefusal =
  | "invalid_url"
  | "too_long"
  | "scheme_not_allowed"
  | "credentials_in_url"
  | "host_not_public"
  | "address_not_public";

export const WEBHOOK_URL_REFUSAL_TEXT: Record<WebhookUrlRefusal, string> = {
  invalid_url: "is not a valid absolute URL",
  too_long: `is longer than ${MAX_WEBHOOK_URL_LENGTH} characters`,
  scheme_not_allowed: "must use https",
  credentials_in_url: "must not carry user credentials",
  host_not_public: "must name a public host (not localhost, an internal name or a private, loopback or link-local address)",
  address_not_public: "resolves to a private, loopback, link-local or otherwise non-public address",
};

/** Whether the URL's host is one of the development hosts (exact `host:port` or host). */
export function isDevHost(url: URL, devHosts: readonly string[]): boolean {
  return devHosts.some((h) => h === url.host || h === url.hostname);
}

/** Static checks of an endpoint URL (no I/O); null when it may be used. */
export function refuseWebhookUrl(raw: string, devHosts: readonly string[] = []): WebhookUrlRefusal | null {
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) return "too_long";
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "invalid_url";
  }
  const dev = isDevHost(url, devHosts);
  // The fetcher's rules for scheme and credentials; the host itself is judged below, not by an allowlist.
  const base = refuseUrl(url, { allowHosts: [url.host], allowBuckets: [], insecureHosts: dev ? [url.host] : [] });
  if (base === "invalid_url" || base === "scheme_not_allowed" || base === "credentials_in_url") return base;
  // The fetcher refuses special addresses before any allowlist: for a webhook that means "not public".
  if (base === "address_not_allowed") return "host_not_public";
  if (base !== null) return "invalid_url";
  if (dev) return null;
  return hostIsPublic(url.hostname) ? null : "host_not_public";
}

/** Internal names beyond the fetcher's local-network suffixes that a webhook must not name either. */
const INTERNAL_SUFFIXES = [".corp"];

/**
 * A host name or IP literal as URL.hostname gives it. Special addresses and local names are the
 * fetcher's rules (src/fetch/host-address.ts); a webhook also refuses single-label names, which only
 * resolve inside a network.
 */
export function hostIsPublic(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  if (specialHost(host) !== null) return false;
  if (host.startsWith("[") || parseIpv4(host) !== null) return true;
  if (!host.includes(".")) return false;
  return !INTERNAL_SUFFIXES.some((s) => host.endsWith(s));
}

/** Whether a resolved address (v4 dotted, or v6 text without brackets) is a public unicast address. */
export function isPublicAddress(ip: string): boolean {
  if (parseIpv4(ip) !== null) return specialHost(ip) === null;
  return parseIpv6(ip) !== null && specialHost(`[${ip}]`) === null;
}
