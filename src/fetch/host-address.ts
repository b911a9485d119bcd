/**
 * Which hosts a fetch on a caller's behalf must never reach: loopback, private, link-local (with the
 * cloud metadata address 169.254.169.254), and the other special-purpose ranges of IPv4 and IPv6, plus
 * the names that only ever mean this machine or a local network. Pure: no I/O.
 *
 * Hosts are checked in their WHATWG URL form (`new URL(...).hostname`), which already turns every IPv4
 * spelling (`0x7f.1`, `2130706433`, `0177.0.0.1`, `127.1`) into dotted decimal and IPv6 (incl. a mapped
 * `::ffff:127.0.0.1`) into bracketed, compressed hex; the parsers below accept those forms.
 */

/** Why a host is refused, as a phrase ("a loopback address"), or null when it is an ordinary host. */
export function specialHost(hostname: string): string | null {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  const v4 = parseIpv4(host);
  if (v4 !== null) return specialIpv4(v4);
  if (host.startsWith("[") && host.endsWith("]")) {
    const v6 = parseIpv6(host.slice(1, -1));
    return v6 === null ? "not a valid IPv6 address" : specialIpv6(v6);
  }
  if (host === "localhost" || host.endsWith(".localhost")) return "a loopback name";
  if (LOCAL_SUFFIXES.some((s) => host === s || host.endsWith(`.${s}`))) return "a local-network name";
  return null;
}

/** Names that resolve only inside a machine or a local network (mDNS, cloud-internal DNS, home networks). */
const LOCAL_SUFFIXES = ["local", "internal", "localdomain", "home.arpa", "lan", "intranet"];

/** Dotted-decimal IPv4 (the URL parser's output) to a 32-bit number, else null. */
export function parseIpv4(host: string): number | null {
  const m = host.match(/^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return null;
  return ((parts[0] << 24) | (parts[1] << 16) | (parts[2] << 8) | parts[3]) >>> 0;
}

/** IPv6 text (without brackets) to its eight 16-bit groups, else null. Accepts `::` and a dotted tail. */
export function parseIpv6(text: string): number[] | null {
  let s = text.toLowerCase();
  if (s.includes("%")) return null; // zone ids never reach a URL host
  const tail = s.match(/:(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/);
  if (tail) {
    const v4 = parseIpv4(tail[1]);
    if (v4 === null) return null;
    s = `${s.slice(0, -tail[1].length)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const groups = (h: string) => (h === "" ? [] : h.split(":"));
  const head = groups(halves[0]);
  const rest = halves.length === 2 ? groups(halves[1]) : [];
  if ([...head, ...rest].some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return null;
  const known = head.length + rest.length;
  if (halves.length === 1 ? known !== 8 : known > 7) return null;
  const zeros = new Array(8 - known).fill(0);
  return [...head, ...zeros, ...rest].map((g) => (typeof g === "number" ? g : parseInt(g, 16)));
}

/** [network, prefix length, phrase]; the first match names the reason. */
const V4_RANGES: [string, number, string][] = [
  ["169.254.169.254", 32, "the cloud metadata address"],
  ["0.0.0.0", 8, "an unspecified ('this network') address"],
  ["10.0.0.0", 8, "a private address"],
  ["100.64.0.0", 10, "a shared (carrier-grade NAT) address"],
  ["127.0.0.0", 8, "a loopback address"],
  ["169.254.0.0", 16, "a link-local address"],
  ["172.16.0.0", 12, "a private address"],
  ["192.0.0.0", 24, "an IETF protocol address"],
  ["192.0.2.0", 24, "a documentation address"],
  ["192.88.99.0", 24, "a 6to4 relay address"],
  ["192.168.0.0", 16, "a private address"],
  ["198.18.0.0", 15, "a benchmarking address"],
  ["198.51.100.0", 24, "a documentation address"],
  ["203.0.113.0", 24, "a documentation address"],
  ["224.0.0.0", 4, "a multicast address"],
  ["240.0.0.0", 4, "a reserved or broadcast address"],
];

export function specialIpv4(addr: number): string | null {
  for (const [net, bits, phrase] of V4_RANGES) {
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    if ((addr & mask) >>> 0 === (parseIpv4(net)! & mask) >>> 0) return phrase;
  }
  return null;
}

export function specialIpv6(g: number[]): string | null {
  const v4 = (hi: number, lo: number) => ((hi << 16) | lo) >>> 0;
  const zeroUpTo = (n: number) => g.slice(0, n).every((x) => x === 0);
  if (zeroUpTo(8)) return "an unspecified address";
  if (zeroUpTo(7) && g[7] === 1) return "a loopback address";
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::a.b.c.d): the IPv4 decides.
  if (zeroUpTo(5) && g[5] === 0xffff) return mapped(specialIpv4(v4(g[6], g[7])));
  if (zeroUpTo(6)) return mapped(specialIpv4(v4(g[6], g[7]))) ?? "a deprecated IPv4-compatible address";
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return mapped(specialIpv4(v4(g[6], g[7])));
  if (g[0] === 0x2002) return mapped(specialIpv4(v4(g[1], g[2]))); // 6to4 embeds its IPv4
  if ((g[0] & 0xfe00) === 0xfc00) return "a unique local (private) address";
  if ((g[0] & 0xffc0) === 0xfe80) return "a link-local address";
  if ((g[0] & 0xffc0) === 0xfec0) return "a site-local address";
  if ((g[0] & 0xff00) === 0xff00) return "a multicast address";
  if (g[0] === 0x2001 && g[1] === 0x0db8) return "a documentation address";
  if (g[0] === 0x2001 && g[1] === 0) return "a Teredo tunnel address";
  if (g[0] === 0x0100 && g.slice(1, 4).every((x) => x === 0)) return "a discard-only address";
  return null;
}

function mapped(phrase: string | null): string | null {
  return phrase === null ? null : `${phrase} (IPv4 inside IPv6)`;
}
