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
    // The delayed chunk still arrives (the fetch deadline tests rely on delays holding a response back).
    expect(await (await fetch(outsideUrl(slow))).text()).toBe("abaaa");

    // A stalled body sends its first chunk, then nothing, until the server drops the connection: the
    // client never gets more than the 10 of the 100 declared bytes.
    const stalled = uniquePath("stalled");
    await registerOutside(stalled, { headers: { "content-length": "100" }, chunks: [{ size: 10 }], stall: true, stall_ms: 50 });
    const res = await fetch(outsideUrl(stalled));
    const reader = res.body!.getReader();
    let received = 0;
    let broken = false;
    try {
      for (let r = await reader.read(); !r.done; r = await reader.read()) received += r.value.byteLength;
    } catch {
      broken = true;
    }
    expect(received).toBe(10);
    expect(broken).toBe(true);
  });
});
