/**
 * Which URLs a tenant's documents may be fetched from: https only, and only from the tenant's
 * allowlisted hosts and object-storage buckets. Pure: no I/O, so enrolment and checks share it.
 */
export interface UrlPolicy {
  /** Exact host names (`docs.example.com`, optionally with `:port`) or `*.example.com` for subdomains. */
  allowHosts: string[];
  /** Object-storage bucket names, matched in S3, R2 and GCS URL forms. */
  allowBuckets: string[];
  /**
   * Hosts that may be fetched over plain http. Empty in production; the test configuration lists
   * the loopback server that stands in for customers' document hosts.
   */
  insecureHosts?: string[];
}

export type UrlRefusal = "invalid_url" | "scheme_not_allowed" | "host_not_allowed" | "credentials_in_url";

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

function hostAllowed(url: URL, allowHosts: string[]): boolean {
  const host = url.hostname.toLowerCase();
  const hostPort = url.host.toLowerCase();
  return allowHosts.some((raw) => {
    const entry = raw.toLowerCase();
    if (entry.startsWith("*.")) return host.endsWith(entry.slice(1)) && host.length > entry.length - 1;
    return entry === host || entry === hostPort;
  });
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
  const insecureOk = url.protocol === "http:" && (policy.insecureHosts ?? []).some((h) => h === url.host || h === url.hostname);
  if (url.protocol !== "https:" && !insecureOk) return "scheme_not_allowed";
  if (hostAllowed(url, policy.allowHosts)) return null;
  const bucket = bucketOf(url);
  if (bucket !== null && policy.allowBuckets.includes(bucket)) return null;
  return "host_not_allowed";
}

export const REFUSAL_TEXT: Record<UrlRefusal, string> = {
  invalid_url: "is not a valid absolute URL",
  scheme_not_allowed: "must use https",
  host_not_allowed: "is not on the organisation's allowlist of hosts and buckets",
  credentials_in_url: "must not carry user credentials",
};
