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
  if (base !== null) return "invalid_url";
  if (dev) return null;
  return hostIsPublic(url.hostname) ? null : "host_not_public";
}

const INTERNAL_SUFFIXES = [".localhost", ".local", ".internal", ".intranet", ".lan", ".home.arpa", ".corp", ".localdomain"];

/** A host name or IP literal (as URL.hostname gives it: lower case, IPv6 in brackets, IPv4 normalised). */
export function hostIsPublic(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  if (host.startsWith("[") && host.endsWith("]")) return isPublicAddress(host.slice(1, -1));
  if (/^[0-9.]+$/.test(host)) return isPublicAddress(host);
  if (host === "localhost" || !host.includes(".")) return false;
  return !INTERNAL_SUFFIXES.some((s) => host.endsWith(s));
}

function ipv4Octets(s: string): number[] | null {
  const parts = s.split(".");
  if (parts.length !== 4) return null;
  const octets = parts.map((p) => (/^\d{1,3}$/.test(p) ? Number(p) : NaN));
  return octets.every((o) => Number.isInteger(o) && o >= 0 && o <= 255) ? octets : null;
}

function publicIpv4([a, b, c]: number[]): boolean {
  if (a === 0 || a === 10 || a === 127) return false; // this network, private, loopback
  if (a === 100 && b >= 64 && b <= 127) return false; // carrier-grade NAT
  if (a === 169 && b === 254) return false; // link-local, cloud metadata
  if (a === 172 && b >= 16 && b <= 31) return false; // private
  if (a === 192 && b === 168) return false; // private
  if (a === 192 && b === 0 && (c === 0 || c === 2)) return false; // IETF protocol assignments, TEST-NET-1
  if (a === 198 && (b === 18 || b === 19)) return false; // benchmarking
  if (a === 198 && b === 51 && c === 100) return false; // TEST-NET-2
  if (a === 203 && b === 0 && c === 113) return false; // TEST-NET-3
  if (a >= 224) return false; // multicast, reserved, broadcast
  return true;
}

/** Expands an IPv6 text form into 8 groups, or null. */
function ipv6Groups(s: string): number[] | null {
  let text = s.split("%")[0];
  // A trailing dotted IPv4 (e.g. ::ffff:10.0.0.1) becomes two groups.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const o = ipv4Octets(v4[1]);
    if (!o) return null;
    text = `${text.slice(0, -v4[1].length)}${((o[0] << 8) | o[1]).toString(16)}:${((o[2] << 8) | o[3]).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const parse = (part: string) => (part === "" ? [] : part.split(":").map((g) => (/^[0-9a-f]{1,4}$/i.test(g) ? parseInt(g, 16) : NaN)));
  const head = parse(halves[0]);
  const tail = halves.length === 2 ? parse(halves[1]) : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 && head.length !== 8) return null;
  if (halves.length === 2 && missing < 1) return null;
  const groups = [...head, ...Array(halves.length === 2 ? missing : 0).fill(0), ...tail];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g)) ? groups : null;
}

/** Whether an IP address (v4 dotted, or v6 text without brackets) is a public unicast address. */
export function isPublicAddress(ip: string): boolean {
  const v4 = ipv4Octets(ip);
  if (v4) return publicIpv4(v4);
  const g = ipv6Groups(ip);
  if (!g) return false;
  const embeddedV4 = () => [g[6] >> 8, g[6] & 255, g[7] >> 8, g[7] & 255];
  if (g.every((x) => x === 0)) return false; // unspecified
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return false; // loopback
  if (g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) return publicIpv4(embeddedV4()); // IPv4-mapped
  if (g.slice(0, 6).every((x) => x === 0)) return publicIpv4(embeddedV4()); // IPv4-compatible (deprecated)
  if (g[0] === 0x64 && g[1] === 0xff9b) return publicIpv4(embeddedV4()); // NAT64
  if ((g[0] & 0xfe00) === 0xfc00) return false; // unique local
  if ((g[0] & 0xffc0) === 0xfe80) return false; // link-local
  if ((g[0] & 0xff00) === 0xff00) return false; // multicast
  if (g[0] === 0x2001 && g[1] === 0x0db8) return false; // documentation
  if (g[0] === 0x2002) return false; // 6to4 (can embed any IPv4)
  return true;
}
