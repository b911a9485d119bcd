import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { liveCapture } from "../../durable-objects/live-capture-client";
import { INSTANCE_NAME } from "../../durable-objects/live-capture";
import type { LiveMessage } from "../../src/domain/live";
import { REGION_BASE, api, createOrg, mintKey, operator, type CreatedOrg } from "../helpers/tenant";
import { enrolWriter } from "../helpers/checks";
import { mintSession } from "../helpers/sessions";
import { closeAllLive, liveSettings, openLive, type LiveSocket } from "../helpers/live";
import { darkFrame, emptyFrame, readyFrame } from "../helpers/frames";

let org: CreatedOrg;

beforeAll(async () => {
  org = await createOrg();
  await enrolWriter(org.apiKey, "alice", 8, 1);
});

async function problemOf(res: Response): Promise<{ code: string; detail: string }> {
  expect(res.headers.get("Content-Type")).toContain("application/problem+json");
  return (await res.json()) as { code: string; detail: string };
}

// First in the file: the instance-wide count starts from zero here (storage is per test file).
describe("GET /sig/live: the instance's limit", () => {
  it("refuses with 503 beyond the instance's connections, counted across organisations", async () => {
    const reset = liveSettings({ LIVE_INSTANCE_CONNECTIONS: "2" });
    const others = [await createOrg(), await createOrg()];
    const open: LiveSocket[] = [];
    try {
      open.push(await openLive({ key: org.apiKey }), await openLive({ key: others[0].apiKey }));
      expect(open.map((s) => s.response.status)).toEqual([101, 101]);
      const third = await openLive({ key: others[1].apiKey });
      expect(third.response.status).toBe(503);
      expect((await problemOf(third.response)).code).toBe("unavailable");
      // A closed connection frees its place.
      open[1].ws.close(1000, "done");
      await open[1].closed;
      let again: LiveSocket;
      // The close is reported by the tenant's object after the socket closes: wait on that event.
      for (;;) {
        again = await openLive({ key: others[1].apiKey });
        if (again.response.status === 101) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      open.push(again);
    } finally {
      reset();
      for (const s of open) s.ws.close(1000, "done");
    }
  });
});

describe("GET /sig/live: refusals before the upgrade", () => {
  it("400 without Upgrade: websocket, 401 without a credential, 403 without sig:checks:create, 402 without billing, 421 on another region's address", async () => {
    const plain = await openLive({ key: org.apiKey, upgrade: false });
    expect(plain.response.status).toBe(400);
    expect((await problemOf(plain.response)).detail).toMatch(/Upgrade/);
    expect((await openLive({})).response.status).toBe(401);
    const reader = await createOrg({ permissions: ["sig:checks:read"] });
    const denied = await openLive({ key: reader.apiKey });
    expect(denied.response.status).toBe(403);
    expect((await problemOf(denied.response)).code).toBe("permission_denied");
    const unpaid = await createOrg({ billing: "inactive" });
    const billing = await openLive({ key: unpaid.apiKey });
    expect(billing.response.status).toBe(402);
    expect((await problemOf(billing.response)).code).toBe("billing_required");
    const wrong = await openLive({ key: org.apiKey, base: REGION_BASE.eu });
    expect(wrong.response.status).toBe(421);
    expect((await problemOf(wrong.response)).code).toBe("wrong_region");
  });

  it("400 naming the header for a handshake without Sec-WebSocket-Key or with another version than 13", async () => {
    const noKey = await openLive({ key: org.apiKey, handshake: { "Sec-WebSocket-Key": "" } });
    expect(noKey.response.status).toBe(400);
    expect((await problemOf(noKey.response)).detail).toMatch(/^Sec-WebSocket-Key: /);
    const oldVersion = await openLive({ key: org.apiKey, handshake: { "Sec-WebSocket-Version": "8" } });
    expect(oldVersion.response.status).toBe(400);
    expect(oldVersion.response.headers.get("Sec-WebSocket-Version")).toBe("13");
    expect((await problemOf(oldVersion.response)).detail).toMatch(/^Sec-WebSocket-Version: /);
  });

  it("401 for a revoked or unknown session token, also when sent as the subprotocol", async () => {
    const s = await mintSession(org.apiKey, { subject_reference: "alice" });
    expect((await api(`/sig/sessions/${s.session_id}`, { method: "DELETE", key: org.apiKey })).status).toBe(204);
    expect((await openLive({ protocols: `service.session, ${s.token}` })).response.status).toBe(401);
    expect((await openLive({ key: s.token })).response.status).toBe(401);
  });

  it("429 for the 21st live connection of an organisation", async () => {
    const tenant = await createOrg();
    const open: LiveSocket[] = [];
    try {
      for (let i = 0; i < 20; i++) open.push(await openLive({ key: tenant.apiKey }));
      expect(open.every((s) => s.response.status === 101)).toBe(true);
      const extra = await openLive({ key: tenant.apiKey });
      expect(extra.response.status).toBe(429);
      const body = await problemOf(extra.response);
      expect(body.code).toBe("rate_limited");
      expect(body.detail).toMatch(/20 live connections/);
      expect(extra.response.headers.get("Retry-After")).not.toBeNull();
    } finally {
      for (const s of open) s.ws.close(1000, "done");
    }
  });
});

describe("GET /sig/live: guidance", () => {
  it("takes a session token as the service.session subprotocol and selects it", async () => {
    const s = await mintSession(org.apiKey, { subject_reference: "alice" });
    const live = await openLive({ protocols: `service.session, ${s.token}` });
    expect(live.response.status).toBe(101);
    expect(live.response.headers.get("Sec-WebSocket-Protocol")).toBe("service.session");
    live.send(readyFrame());
    const reply = await live.next();
    expect(reply).toMatchObject({ type: "guidance", seq: 1, cue: "ready", ready: true });
    if (reply.type !== "guidance") throw new Error("expected guidance");
    expect(reply.message).toMatch(/ready/i);
    expect(reply.quality.score).toBeGreaterThan(0);
    expect(reply.signature!.box.w).toBeGreaterThan(300);
    live.ws.close(1000, "done");
  });

  it("answers a burst with one reply per frame, in order, and a 6th frame within the second with an error", async () => {
    const live = await openLive({ key: org.apiKey });
    // Small frames, so the burst is analysed well within one second.
    const frames = [
      readyFrame(320, 240),
      emptyFrame(320, 240),
      darkFrame(320, 240),
      emptyFrame(320, 240, 3),
      readyFrame(320, 240, 4),
      readyFrame(320, 240, 5),
    ];
    for (const f of frames) live.send(f);
    const replies = [];
    for (let i = 0; i < frames.length; i++) replies.push(await live.next());
    expect(replies.map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(replies.slice(0, 5).map((r) => r.type)).toEqual(["guidance", "guidance", "guidance", "guidance", "guidance"]);
    expect(replies.slice(0, 4).map((r) => (r.type === "guidance" ? r.cue : r.code))).toEqual([
      "ready",
      "no_signature_in_view",
      "too_dark",
      "no_signature_in_view",
    ]);
    expect(replies[5]).toMatchObject({ type: "error", code: "too_fast" });
    if (replies[5].type !== "error") throw new Error("expected an error");
    expect(replies[5].retry_after_ms).toBeGreaterThan(0);
    expect(replies[5].retry_after_ms).toBeLessThanOrEqual(1000);
    // The connection stays open.
    expect(live.ws.readyState).toBe(WebSocket.OPEN);
    live.ws.close(1000, "done");
  });

  it("answers an oversize frame, a frame over 640 px, a text message and a non-image with error replies and stays open", async () => {
    const live = await openLive({ key: org.apiKey });
    const big = new Uint8Array(512 * 1024 + 1);
    big.set(readyFrame());
    live.send(big);
    live.send(readyFrame(800, 600));
    live.send("hello");
    live.send(new TextEncoder().encode("GIF89a not an image"));
    const replies = [await live.next(), await live.next(), await live.next(), await live.next()];
    expect(replies.map((r) => [r.seq, r.type === "error" ? r.code : r.type])).toEqual([
      [1, "frame_too_large"],
      [2, "frame_too_large"],
      [3, "unsupported_frame"],
      [4, "unsupported_frame"],
    ]);
    // The over-640 px frame is refused by the rule the client is told (640 px on the long side), not by the
    // decoder's pixel count for document pages ("page 1 declares ... pixels").
    const tooWide = replies[1].type === "error" ? replies[1].detail : "";
    expect(tooWide).toMatch(/640 px on the long side/);
    expect(tooWide).toMatch(/800x600/);
    expect(tooWide).not.toMatch(/page 1|declares/);
    live.send(readyFrame());
    expect(await live.next()).toMatchObject({ seq: 5, type: "guidance" });
    live.ws.close(1000, "done");
  });
});

/** The next reply, or a failure naming the frame that went unanswered (rather than the test's timeout). */
function replyWithin(live: LiveSocket, what: string, ms = 10_000): Promise<LiveMessage> {
  return Promise.race([
    live.next(),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no reply to ${what} within ${ms} ms`)), ms)),
  ]);
}

/**
 * Makes every frame's analysis throw something other than a VerifyError until the returned function runs: the
 * analysis objects run in this isolate, so their class's `analyse` is replaced for the time being. The
 * decoders are fuzzed to fail only with VerifyError (docs/fuzzing.md), so no frame does this by itself.
 */
async function breakAnalysis(orgId: string): Promise<() => Promise<void>> {
  const stub = liveCapture(env, orgId);
  const original = await runInDurableObject(stub, (instance) => {
    const proto = Object.getPrototypeOf(instance) as { analyse: (...args: unknown[]) => Promise<unknown> };
    const was = proto.analyse;
    proto.analyse = async () => {
      throw new TypeError("simulated decoder bug");
    };
    return was;
  });
  return () =>
    runInDurableObject(stub, (instance) => {
      (Object.getPrototypeOf(instance) as { analyse: unknown }).analyse = original;
    });
}

describe("GET /sig/live: an unexpected failure", () => {
  it("answers a frame whose analysis fails with an analysis_failed error, advances seq, and analyses the next frame", async () => {
    const live = await openLive({ key: org.apiKey });
    try {
      live.send(emptyFrame(320, 240));
      expect(await replyWithin(live, "frame 1")).toMatchObject({ seq: 1, type: "guidance" });
      const restore = await breakAnalysis(org.orgId);
      const sentAt = Date.now();
      try {
        live.send(readyFrame(320, 240));
        live.send(emptyFrame(320, 240, 3));
        const failed = [await replyWithin(live, "frame 2"), await replyWithin(live, "frame 3")];
        expect(failed.map((r) => [r.seq, r.type === "error" ? r.code : r.type])).toEqual([
          [2, "analysis_failed"],
          [3, "analysis_failed"],
        ]);
        if (failed[0].type !== "error") throw new Error("expected an error");
        expect(failed[0].detail).toMatch(/could not be analysed/);
      } finally {
        await restore();
      }
      // The failed frames counted as client messages: the connection's state moved on with them.
      const att = await runInDurableObject(liveCapture(env, org.orgId), (_i, state) =>
        state.getWebSockets().map((ws) => ws.deserializeAttachment() as { seq: number; lastDataAt: number; taken: number[] }),
      );
      const mine = att.find((a) => a.seq === 3);
      expect(mine).toBeDefined();
      expect(mine!.lastDataAt).toBeGreaterThanOrEqual(sentAt);
      expect(mine!.taken.length).toBe(3);
      live.send(readyFrame(320, 240));
      expect(await replyWithin(live, "frame 4")).toMatchObject({ seq: 4, type: "guidance", cue: "ready" });
      expect(live.ws.readyState).toBe(WebSocket.OPEN);
    } finally {
      live.ws.close(1000, "done");
    }
  });
});

describe("GET /sig/live: closing rules (short timings)", () => {
  it("answers a client's close without a status code with a close frame at once", async () => {
    // WebSocket.close() with no arguments (the browser's and the ws package's default) sends a close frame
    // without a code. RFC 6455 5.5.1: the server must answer with a close frame, else the client waits out
    // its own timeout and reports an abnormal closure (1006) instead of a clean one.
    const live = await openLive({ key: org.apiKey });
    live.send(emptyFrame(320, 240));
    await live.next();
    live.ws.close();
    const closed = await Promise.race([live.closed, new Promise<"no close frame">((r) => setTimeout(() => r("no close frame"), 3000))]);
    expect(closed).not.toBe("no close frame");
    expect(closed).toMatchObject({ code: expect.any(Number) });
    expect((closed as { code: number }).code).not.toBe(1006);
  });

  it("closes after the idle time without a message", async () => {
    const reset = liveSettings({ LIVE_IDLE_MS: "300" });
    try {
      const live = await openLive({ key: org.apiKey });
      live.send(emptyFrame(320, 240));
      await live.next();
      expect(await live.closed).toEqual({ code: 1000, reason: "idle" });
    } finally {
      reset();
    }
  });

  it("closes after the maximum duration even while frames arrive", async () => {
    const reset = liveSettings({ LIVE_MAX_MS: "400" });
    try {
      const live = await openLive({ key: org.apiKey });
      let open = true;
      void live.closed.then(() => (open = false));
      while (open) {
        live.send("keep me busy");
        await Promise.race([live.next(), live.closed]);
      }
      expect(await live.closed).toEqual({ code: 1000, reason: "max_duration" });
    } finally {
      reset();
    }
  });

  it("closes with 1008 when the session is revoked", async () => {
    const s = await mintSession(org.apiKey, { subject_reference: "alice" });
    const live = await openLive({ protocols: `service.session, ${s.token}` });
    expect(live.response.status).toBe(101);
    expect((await api(`/sig/sessions/${s.session_id}`, { method: "DELETE", key: org.apiKey })).status).toBe(204);
    expect(await live.closed).toEqual({ code: 1008, reason: "session_revoked" });
  });

  it("closes with 1008 when the subject is deleted", async () => {
    await enrolWriter(org.apiKey, "erin", 8, 1);
    const s = await mintSession(org.apiKey, { subject_reference: "erin" });
    const live = await openLive({ key: s.token });
    expect((await api("/sig/subjects/erin", { method: "DELETE", key: org.apiKey })).status).toBe(204);
    expect(await live.closed).toEqual({ code: 1008, reason: "session_revoked" });
  });

  it("closes with 1008 at the periodic re-check once the organisation is suspended", async () => {
    const reset = liveSettings({ LIVE_RECHECK_MS: "200" });
    try {
      const tenant = await createOrg();
      await enrolWriter(tenant.apiKey, "fay", 8, 1);
      const s = await mintSession(tenant.apiKey, { subject_reference: "fay" });
      const bySession = await openLive({ key: s.token });
      const byKey = await openLive({ key: tenant.apiKey });
      await operator("POST", `/platform/orgs/${tenant.orgId}/suspend`);
      expect(await bySession.closed).toEqual({ code: 1008, reason: "organisation_suspended" });
      expect(await byKey.closed).toEqual({ code: 1008, reason: "organisation_suspended" });
    } finally {
      reset();
    }
  });

  it("closes with 1008 at the re-check once the session has expired, or the API key is revoked", async () => {
    const reset = liveSettings({ LIVE_RECHECK_MS: "200" });
    try {
      const tenant = await createOrg();
      await enrolWriter(tenant.apiKey, "gus", 8, 1);
      const s = await mintSession(tenant.apiKey, { subject_reference: "gus", expires_in: 60 });
      const bySession = await openLive({ key: s.token });
      const other = await mintKey(tenant.orgId, ["sig:checks:create"]);
      const byKey = await openLive({ key: other.apiKey });
      // Time passing, without waiting for it: the session's expiry moves into the past.
      await env.DB_US.prepare("UPDATE sessions SET expires_at = ? WHERE session_id = ?")
        .bind(new Date(Date.now() - 1000).toISOString(), s.session_id.slice(4))
        .run();
      expect(await bySession.closed).toEqual({ code: 1008, reason: "session_expired" });
      await operator("DELETE", `/platform/orgs/${tenant.orgId}/keys/${other.keyId}`);
      expect(await byKey.closed).toEqual({ code: 1008, reason: "key_revoked" });
    } finally {
      reset();
    }
  });
});

// Last in the file: it closes whatever the tests above left open, so nothing of the live objects is still
// running when the file ends (a handler still resolving a module then fails the whole run at teardown).
describe("GET /sig/live: after the last connection", () => {
  it("keeps no alarm and reports no connections once every socket has closed", async () => {
    await closeAllLive();
    const { results } = await env.DIRECTORY.prepare("SELECT id AS org_id FROM orgs").all<{ org_id: string }>();
    expect(results.length).toBeGreaterThan(5);
    const instance = env.LIVE_CAPTURE.get(env.LIVE_CAPTURE.idFromName(INSTANCE_NAME));
    const deadline = Date.now() + 5000;
    for (;;) {
      // The close handlers run after the client has seen the close: wait for them to have reported.
      const states = await Promise.all(
        results.map(({ org_id }) =>
          runInDurableObject(liveCapture(env, org_id), async (_i, state) => ({
            open: state.getWebSockets().filter((ws) => ws.readyState === WebSocket.OPEN).length,
            alarm: await state.storage.getAlarm(),
          })),
        ),
      );
      const counts = await runInDurableObject(instance, (_i, state) => state.storage.get<Record<string, number>>("counts"));
      const settled = states.every((s) => s.open === 0 && s.alarm === null) && Object.keys(counts ?? {}).length === 0;
      if (settled) break;
      if (Date.now() > deadline) {
        expect({ states, counts }).toEqual({ states: states.map(() => ({ open: 0, alarm: null })), counts: {} });
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  });
});
