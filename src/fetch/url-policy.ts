/**
 * Which URLs a tenant's documents may be fetched from: https only, and only from the tenant's
 * allowlisted hosts and object-storage buckets, never from a loopback, private, link-local, metadata or
 * other special address (host-address.ts). Pure: no I/O, so enrolment and checks share it.
 */
import { specialHost } from "./host-address";

export interface UrlPolicy {
  /**
   * Host entries as normaliseHostEntry leaves them: `docs.example.com` (port 443 only),
   * `docs.example.com:8443` (that port only), or `*.example.com` (any subdomain, not the domain itself).
   */
  allowHosts: string[];
  /** Object-storage bucket names, matched in S3, R2 and GCS URL forms. */
  allowBuckets: string[];
  /**
   * Hosts that may be fetched over plain http. Empty in production; the test configuration lists
   * the loopback server that stands in for customers' document hosts.
   */
  insecureHosts?: string[];
}

export type UrlRefusal = "invalid_url" | "scheme_not_allowed" | "host_not_allowed" | "address_not_allowed" | "credentials_in_url";

/** The bucket a URL points into, for the storage URL forms we recognise, else null. */
export function bucketOf(url: URL): string | null {
  const host = url.hostname.toLowerCase();
  const firstSegment = url.pathname.split("/")[1] ?? "";
  // Virtual-hosted S3: <bucket>.s3.amazonaws.com or <bucket>.s3.<region>.amazonaws.com
  const virtual = host.match(/^(.+)\.s3(?:[.-][a-z0-9-]+)?\.amazonaws\.com$/);
  if (virtual) return virtual[1];
  // Path-style S3, R2's S3 endpoint and GCS: <endpoint>/<bucket>/<key>
  if (
    /^s3(?:[.-][a-z0-9-]+)?\.amazonaws\.com$/.test(host) ||
    /^[a-z0-9]+\.r2\.cloudflarestorage\.com$/.test(host) ||
    host === "storage.googleapis.com"
  ) {
    return firstSegment ? decodeURIComponent(firstSegment) : null;
  }
  return null;
}

/** The port a URL connects to (the URL parser leaves the scheme's default port empty). */
function effectivePort(url: URL): string {
  return url.port || (url.protocol === "http:" ? "80" : "443");
}

function hostAllowed(url: URL, allowHosts: string[]): boolean {
  const host = url.hostname.toLowerCase();
  const port = effectivePort(url);
  return allowHosts.some((raw) => {
    const entry = raw.toLowerCase();
    const colon = entry.lastIndexOf(":");
    // An entry without a port means 443 (https' own port) only; `[v6]` holds colons of its own.
    const hasPort = colon > entry.lastIndexOf("]");
    const entryHost = hasPort ? entry.slice(0, colon) : entry;
    const entryPort = hasPort ? entry.slice(colon + 1) : "443";
    if (entryPort !== port) return false;
    if (entryHost.startsWith("*.")) return host.endsWith(entryHost.slice(1)) && host.length > entryHost.length - 1;
    return entryHost === host;
  });
}

function isInsecureHost(url: URL, policy: UrlPolicy): boolean {
  return (policy.insecureHosts ?? []).some((h) => h === url.host || h === url.hostname);
}

/** Checks one URL (the first, or any redirect target) against the policy; null when allowed. */
export function refuseUrl(raw: string | URL, policy: UrlPolicy): UrlRefusal | null {
  let url: URL;
  try {
    url = typeof raw === "string" ? new URL(raw) : raw;
  } catch {
    return "invalid_url";
  }
  if (url.username || url.password) return "credentials_in_url";
  const insecureOk = url.protocol === "http:" && isInsecureHost(url, policy);
  if (url.protocol !== "https:" && !insecureOk) return "scheme_not_allowed";
  // Whatever the allowlist says (entries stored before this check existed included): never a special
  // address. Only the test configuration's loopback document host (insecureHosts) is exempt.
  if (specialHost(url.hostname) !== null && !isInsecureHost(url, policy)) return "address_not_allowed";
  if (hostAllowed(url, policy.allowHosts)) return null;
  const bucket = bucketOf(url);
  if (bucket !== null && policy.allowBuckets.includes(bucket)) return null;
  return "host_not_allowed";
}

/**
 * An allowlist entry as given at organisation creation, checked and put in the form hostAllowed
 * compares: lower case, the host as the URL parser writes it (so `0x7f.1` is seen as 127.0.0.1), the
 * port dropped when it is 443. Refuses special addresses and names, single-label names and a wildcard
 * over a single label (`*.com`). `exempt` are the test configuration's insecure hosts.
 */
export function normaliseHostEntry(raw: string, exempt: string[] = []): { entry: string } | { problem: string } {
  const text = raw.trim().toLowerCase();
  const wildcard = text.startsWith("*.");
  const rest = wildcard ? text.slice(2) : text;
  if (!/^[a-z0-9.-]+(:\d{1,5})?$|^\[[0-9a-f:.]+\](:\d{1,5})?$/.test(rest)) {
    return { problem: "must be a host name or IP address, optionally with a port, or *.domain" };
  }
  let url: URL;
  try {
    url = new URL(`https://${rest}/`);
  } catch {
    return { problem: "is not a valid host" };
  }
  const host = url.hostname;
  const entry = `${wildcard ? "*." : ""}${host}${url.port ? `:${url.port}` : ""}`;
  if (exempt.includes(url.host) || exempt.includes(rest)) return { entry };
  const special = specialHost(host);
  if (special) return { problem: `is ${special}; documents are never fetched from it` };
  const isIp = host.startsWith("[") || /^\d+\.\d+\.\d+\.\d+$/.test(host);
  if (wildcard && isIp) return { problem: "a wildcard applies to domain names, not IP addresses" };
  if (!isIp) {
    const labels = host.split(".");
    if (labels.some((l) => l === "" || l.length > 63 || l.startsWith("-") || l.endsWith("-")))
      return { problem: "is not a valid host name" };
    if (labels.length < 2)
      return {
        problem: wildcard ? "a wildcard needs a domain of at least two labels (*.example.com)" : "must be a fully qualified domain name",
      };
    if (/^\d+$/.test(labels[labels.length - 1])) return { problem: "is not a valid host name" };
  }
  return { entry };
}

export const REFUSAL_TEXT: Record<UrlRefusal, string> = {
  invalid_url: "is not a valid absolute URL",
  scheme_not_allowed: "must use https",
  host_not_allowed: "is not on the organisation's allowlist of hosts and buckets",
  address_not_allowed: "points at a loopback, private, link-local or other special address",
  credentials_in_url: "must not carry user credentials",
};
