import { describe, expect, it } from "vitest";
import { api } from "../helpers/tenant";

describe("the reviewer page", () => {
  it("is served under /review/ with a strict content security policy, without credentials", async () => {
    const res = await api("/review/");
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/^text\/html/);
    expect(res.headers.get("Content-Security-Policy")).toContain("frame-ancestors 'none'");
    expect(await res.text()).toContain('<script type="module" src="/review/review.js">');
    const js = await api("/review/review.js");
    expect(js.status).toBe(200);
    // The credential is never persisted.
    expect(await js.text()).not.toMatch(/localStorage|sessionStorage|document\.cookie/);
  });

  it("keeps API routes and unknown paths answered by the Worker", async () => {
    expect((await api("/review/nope.txt")).status).toBe(404);
    expect((await api("/sig/checks")).status).toBe(401);
  });
});
