import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { api, createOrg, type CreatedOrg } from "../helpers/tenant";
import { outsideUrl, registerOutside, uniquePath } from "../helpers/outside";
import { expectProblem, postCheck } from "../helpers/checks";

const op = (path: string, init: Parameters<typeof api>[1] = {}) => api(path, { ...init, key: env.OPERATOR_TOKEN });
const outsideHost = new URL(env.TEST_OUTSIDE_URL).host;
const closedHost = new URL(env.TEST_CLOSED_URL).host;

describe("allowlist entries at organisation creation", () => {
  it("accepts the documented *.domain wildcard and host:port, normalised", async () => {
    const res = await op("/platform/orgs", {
      method: "POST",
      json: { name: "Wild", region: "us", allow_hosts: ["*.Example.com", "docs.example.org:443", "files.example.net:8443"] },
    });
    const text = await res.text();
    expect(res.status, text).toBe(201);
    expect(JSON.parse(text).allow_hosts).toEqual(["*.example.com", "docs.example.org", "files.example.net:8443"]);
  });

  it("refuses loopback, private, link-local and metadata addresses in any spelling, naming the entry", async () => {
    const refused = [
      "localhost",
      "169.254.169.254",
      "0x7f.1",
      "2130706433",
      "127.0.0.1:8080",
      "10.0.0.5",
      "[::1]",
      "[::ffff:127.0.0.1]",
      "metadata.google.internal",
      "*.com",
    ];
    for (const entry of refused) {
      const res = await op("/platform/orgs", {
        method: "POST",
        json: { name: "x", region: "us", allow_hosts: ["docs.example.com", entry] },
      });
      const problem = await expectProblem(res, 400, "invalid_request");
      expect(problem.errors[0].field, entry).toBe("body.allow_hosts.1");
      expect(problem.errors[0].message, entry).toContain(entry);
    }
  });
});

describe("what a fetch names when it is refused or fails", () => {
  let org: CreatedOrg;
  beforeAll(async () => {
    org = await createOrg({ allowHosts: [outsideHost, closedHost] });
  });

  const enrolByUrl = (url: string) =>
    api(`/sig/subjects/s-${crypto.randomUUID().slice(0, 8)}/references`, {
      method: "PUT",
      key: org.apiKey,
      json: { references: [{ ref_id: "u1", url }] },
    });
  const checkByUrl = (url: string) => postCheck(org.apiKey, { items: [{ file: { url }, subject_reference: "nobody" }] });

  for (const [target, scheme] of [
    ["file:///etc/passwd", "file:"],
    ["data:image/png;base64,iVBORw0KGgo=", "data:"],
    ["gopher://example.com:70/1", "gopher:"],
  ] as const) {
    it(`names the scheme of a refused redirect to ${scheme}`, async () => {
      const path = uniquePath("to-scheme.png");
      await registerOutside(path, { redirect: target });
      for (const send of [enrolByUrl, checkByUrl]) {
        const problem = await expectProblem(await send(outsideUrl(path)), 400, "invalid_request");
        expect(problem.reason).toBe("redirect_not_allowed");
        expect(problem.redirect_refusal).toBe("scheme_not_allowed");
        expect(problem.detail).toContain(`a redirect of the URL to a ${scheme} URL was refused`);
        expect(problem.detail).toContain(`uses the scheme ${scheme}, which is not allowed`);
        expect(problem.detail).not.toContain("null");
      }
    });
  }

  it("refuses a redirect to the metadata address or a mapped loopback address, naming it", async () => {
    for (const target of ["https://169.254.169.254/latest/meta-data/", "https://[::ffff:7f00:1]/x", "https://0x7f.1/x"]) {
      const path = uniquePath("to-metadata.png");
      await registerOutside(path, { redirect: target });
      const problem = await expectProblem(await enrolByUrl(outsideUrl(path)), 400, "invalid_request");
      expect(problem.reason, target).toBe("redirect_not_allowed");
      expect(problem.redirect_refusal, target).toBe("address_not_allowed");
      expect(problem.detail, target).toMatch(/never fetched/);
    }
  });

  it("fails a redirect whose Location is not a URL on both paths (502 fetch_failed invalid_redirect), and one without a Location", async () => {
    for (const location of ["http://[", "https://exa mple.com/doc.png"]) {
      const path = uniquePath("bad-location.png");
      await registerOutside(path, { redirect: location });
      for (const send of [enrolByUrl, checkByUrl]) {
        const problem = await expectProblem(await send(outsideUrl(path)), 502, "fetch_failed");
        expect(problem.reason, location).toBe("invalid_redirect");
        expect(problem.upstream_status).toBe(302);
        expect(problem.detail).toContain(`${outsideHost} answered 302 with a Location that is not a valid URL`);
      }
    }
    const path = uniquePath("no-location.png");
    await registerOutside(path, { status: 302 });
    const problem = await expectProblem(await checkByUrl(outsideUrl(path)), 502, "fetch_failed");
    expect(problem.reason).toBe("upstream_status");
    expect(problem.upstream_status).toBe(302);
  });

  it("names the host of a refused connection on both paths (502 connection_failed)", async () => {
    const url = `${env.TEST_CLOSED_URL}/doc.png`;
    for (const send of [enrolByUrl, checkByUrl]) {
      const problem = await expectProblem(await send(url), 502, "fetch_failed");
      expect(problem.reason).toBe("connection_failed");
      expect(problem.host).toBe(closedHost);
      expect(problem.detail).toContain(`could not connect to ${closedHost}`);
      expect(problem.detail).not.toMatch(/internal error|reference =/);
    }
  });
});
