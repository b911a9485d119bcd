import { describe, expect, it } from "vitest";
import { parseIpv6, specialHost } from "../../src/fetch/host-address";
import { normaliseHostEntry, refuseUrl, type UrlPolicy } from "../../src/fetch/url-policy";

/** The host as a fetch would see it: the URL parser's form. */
const hostOf = (spelling: string) => new URL(`https://${spelling}/`).hostname;

describe("special hosts, in every spelling", () => {
  const special: [string, RegExp][] = [
    ["127.0.0.1", /loopback/],
    ["0x7f.1", /loopback/],
    ["2130706433", /loopback/],
    ["0177.0.0.1", /loopback/],
    ["127.1", /loopback/],
    ["0x7f000001", /loopback/],
    ["169.254.169.254", /metadata/],
    ["0xa9.0xfe.0xa9.0xfe", /metadata/],
    ["2852039166", /metadata/],
    ["10.1.2.3", /private/],
    ["012.1.2.3", /private/],
    ["172.16.0.1", /private/],
    ["172.31.255.255", /private/],
    ["192.168.1.1", /private/],
    ["100.64.0.1", /shared/],
    ["0.0.0.0", /unspecified/],
    ["0", /unspecified/],
    ["224.0.0.1", /multicast/],
    ["255.255.255.255", /reserved or broadcast/],
    ["169.254.1.1", /link-local/],
    ["[::1]", /loopback/],
    ["[0:0:0:0:0:0:0:1]", /loopback/],
    ["[::]", /unspecified/],
    ["[::ffff:127.0.0.1]", /loopback address \(IPv4 inside IPv6\)/],
    ["[::ffff:169.254.169.254]", /metadata/],
    ["[::ffff:a00:1]", /private/],
    ["[64:ff9b::a9fe:a9fe]", /metadata/],
    ["[2002:7f00:1::]", /loopback/],
    ["[fe80::1]", /link-local/],
    ["[fd00:ec2::254]", /unique local/],
    ["[fc00::1]", /unique local/],
    ["[ff02::1]", /multicast/],
    ["[2001:db8::1]", /documentation/],
    ["localhost", /loopback name/],
    ["LOCALHOST.", /loopback name/],
    ["api.localhost", /loopback name/],
    ["metadata.google.internal", /local-network/],
    ["printer.local", /local-network/],
  ];
  for (const [spelling, reason] of special) {
    it(`refuses ${spelling}`, () => {
      expect(specialHost(hostOf(spelling))).toMatch(reason);
    });
  }

  it("leaves public addresses and names alone", () => {
    for (const spelling of [
      "8.8.8.8",
      "1.1.1.1",
      "172.32.0.1",
      "100.128.0.1",
      "[2606:4700:4700::1111]",
      "[::ffff:8.8.8.8]",
      "docs.example.com",
      "localhost.example.com",
    ]) {
      expect(specialHost(hostOf(spelling)), spelling).toBeNull();
    }
  });

  it("parses IPv6 with a dotted tail and compressed zeros", () => {
    expect(parseIpv6("::ffff:1.2.3.4")).toEqual([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304]);
    expect(parseIpv6("1::")).toEqual([1, 0, 0, 0, 0, 0, 0, 0]);
    expect(parseIpv6("1:2:3:4:5:6:7:8")).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(parseIpv6("1:2:3:4:5:6:7")).toBeNull();
    expect(parseIpv6("1::2::3")).toBeNull();
  });
});

describe("allowlist entries", () => {
  it("refuses special addresses and names in every spelling, naming why", () => {
    for (const raw of [
      "localhost",
      "169.254.169.254",
      "0x7f.1",
      "2130706433",
      "127.0.0.1:8080",
      "[::1]",
      "[::ffff:169.254.169.254]:443",
      "10.0.0.1",
      "*.localhost",
      "metadata.google.internal",
    ]) {
      const got = normaliseHostEntry(raw);
      expect("problem" in got, raw).toBe(true);
      expect((got as { problem: string }).problem, raw).toMatch(/^is (a|an|the) .*never fetched from it$/);
    }
  });

  it("refuses malformed entries, single labels and a wildcard over one label", () => {
    for (const raw of ["https://x/", "x.com/path", "user@x.com", "intranet", "*.com", "*.8.8.8.8", "*", "a..b.com", "-a.example.com"]) {
      expect("problem" in normaliseHostEntry(raw), raw).toBe(true);
    }
  });

  it("keeps the documented forms, normalised", () => {
    expect(normaliseHostEntry("*.example.com")).toEqual({ entry: "*.example.com" });
    expect(normaliseHostEntry("*.Example.com:8443")).toEqual({ entry: "*.example.com:8443" });
    expect(normaliseHostEntry("Docs.Example.com:443")).toEqual({ entry: "docs.example.com" });
    expect(normaliseHostEntry("docs.example.com:8443")).toEqual({ entry: "docs.example.com:8443" });
    expect(normaliseHostEntry("8.8.8.8:8080")).toEqual({ entry: "8.8.8.8:8080" });
    expect(normaliseHostEntry("0x08.8.8.8")).toEqual({ entry: "8.8.8.8" });
    expect(normaliseHostEntry("[2606:4700:4700::1111]")).toEqual({ entry: "[2606:4700:4700::1111]" });
  });

  it("lets the test configuration's loopback host through", () => {
    expect(normaliseHostEntry("127.0.0.1:4000", ["127.0.0.1:4000"])).toEqual({ entry: "127.0.0.1:4000" });
    expect("problem" in normaliseHostEntry("127.0.0.1:4001", ["127.0.0.1:4000"])).toBe(true);
  });
});

describe("URLs against the allowlist", () => {
  const policy = (allowHosts: string[]): UrlPolicy => ({ allowHosts, allowBuckets: [] });

  it("reads an entry without a port as port 443 only", () => {
    const p = policy(["docs.example.com"]);
    expect(refuseUrl("https://docs.example.com/a.png", p)).toBeNull();
    expect(refuseUrl("https://docs.example.com:443/a.png", p)).toBeNull();
    expect(refuseUrl("https://docs.example.com:8443/a.png", p)).toBe("host_not_allowed");
    expect(refuseUrl("https://docs.example.com:22/a.png", p)).toBe("host_not_allowed");
  });

  it("reads an entry with a port as that port only", () => {
    const p = policy(["docs.example.com:8443"]);
    expect(refuseUrl("https://docs.example.com:8443/a.png", p)).toBeNull();
    expect(refuseUrl("https://docs.example.com/a.png", p)).toBe("host_not_allowed");
  });

  it("matches *.domain on every subdomain, not the domain or a look-alike", () => {
    const p = policy(["*.example.com"]);
    expect(refuseUrl("https://a.example.com/x", p)).toBeNull();
    expect(refuseUrl("https://b.a.example.com/x", p)).toBeNull();
    expect(refuseUrl("https://example.com/x", p)).toBe("host_not_allowed");
    expect(refuseUrl("https://evilexample.com/x", p)).toBe("host_not_allowed");
    expect(refuseUrl("https://a.example.com:8443/x", p)).toBe("host_not_allowed");
  });

  it("refuses special addresses whatever the allowlist holds (entries stored before the check)", () => {
    const p = policy(["localhost", "127.0.0.1", "169.254.169.254", "0x7f.1", "[::1]"]);
    for (const url of [
      "https://localhost/x",
      "https://0x7f.1/x",
      "https://2130706433/x",
      "https://169.254.169.254/latest",
      "https://[::1]/x",
      "https://[::ffff:7f00:1]/x",
    ]) {
      expect(refuseUrl(url, p), url).toBe("address_not_allowed");
    }
  });

  it("allows a loopback address only for the test configuration's insecure host", () => {
    const p: UrlPolicy = { allowHosts: ["127.0.0.1:4000"], allowBuckets: [], insecureHosts: ["127.0.0.1:4000"] };
    expect(refuseUrl("http://127.0.0.1:4000/x", p)).toBeNull();
    expect(refuseUrl("http://127.0.0.1:4001/x", p)).toBe("scheme_not_allowed");
    expect(refuseUrl("https://127.0.0.1:4001/x", p)).toBe("address_not_allowed");
  });
});
