import { describe, expect, it } from "vitest";
import { outsideRequests, outsideUrl, registerOutside, uniquePath, unregisterOutside } from "../helpers/outside";

// The local outside-world server that other tests use for URL fetches, JWKS and webhook receivers.
describe("outside-world test server", () => {
  it("serves a registered body with its headers and logs the request", async () => {
    const path = uniquePath("doc.bin");
    await registerOutside(path, { body_base64: btoa("\x89PNG"), headers: { "content-type": "image/png" } });
    const res = await fetch(outsideUrl(path) + "?x=1", { headers: { "X-Probe": "yes" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/png");
    expect(new Uint8Array(await res.arrayBuffer())).toEqual(new Uint8Array([0x89, 0x50, 0x4e, 0x47]));
    const log = await outsideRequests(path);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ method: "GET", path, query: "?x=1" });
    expect(log[0].headers["x-probe"]).toBe("yes");
  });

  it("redirects, limits how often it answers, and forgets unregistered paths", async () => {
    const target = uniquePath("target.json");
    const hop = uniquePath("hop");
    await registerOutside(target, { json: { ok: true }, times: 1 });
    await registerOutside(hop, { redirect: outsideUrl(target), status: 307 });
    const res = await fetch(outsideUrl(hop));
    expect(res.url).toBe(outsideUrl(target));
    expect(await res.json()).toEqual({ ok: true });
    expect((await fetch(outsideUrl(target))).status).toBe(404);
    await unregisterOutside(hop);
    expect((await fetch(outsideUrl(hop), { redirect: "manual" })).status).toBe(404);
  });

  it("streams chunks with delays, and stalls a body", async () => {
    const slow = uniquePath("slow");
    await registerOutside(slow, { chunks: [{ data: "ab" }, { size: 3, delay_ms: 150 }] });
    const t0 = Date.now();
    expect(await (await fetch(outsideUrl(slow))).text()).toBe("abaaa");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(140);

    const stalled = uniquePath("stalled");
    await registerOutside(stalled, { headers: { "content-length": "100" }, chunks: [{ size: 10 }], stall: true, stall_ms: 5000 });
    const res = await fetch(outsideUrl(stalled));
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(first.value?.byteLength).toBe(10);
    const next = await Promise.race([reader.read().then(() => "data"), new Promise((r) => setTimeout(() => r("stalled"), 300))]);
    expect(next).toBe("stalled");
    await reader.cancel();
  });
});
