import { DurableObject } from "cloudflare:workers";
import type { Env } from "../src/env";
import {
  CLOSE_CREDENTIAL,
  CLOSE_IDLE,
  CLOSE_MAX_DURATION,
  admitFrame,
  closeReason,
  guidance,
  nextDeadline,
  type LiveErrorCode,
  type LiveMessage,
  type LiveTimings,
} from "../src/domain/live";
import { credentialProblem, type LiveCredential } from "../src/services/sessions";
import { FRAME_MAX_BYTES, analyseFrame, type FrameAnalysis } from "../src/verify/pipeline-frame";
import { isVerifyError } from "../src/verify/types";
import { logError } from "../src/util/log";

/**
 * Live capture guidance (spec 4.4, 8). One object per tenant holds that tenant's live WebSockets with the
 * hibernation API, so an idle connection costs nothing, and counts them for the 20-per-tenant limit
 * exactly (one object, one count). One more object of this class, named INSTANCE, only keeps the
 * connection counts each tenant object reports, for the limit across the instance (200).
 *
 * Each client message gets exactly one JSON reply, in order: each connection's messages are handled one
 * after another on that connection's promise chain, so a later frame's reply can never overtake an
 * earlier one. The analysis itself runs in a third role of this class, one object per connection
 * (`live:analyse:<connection id>`): the tenant's object only routes frames and replies, so twenty busy
 * connections spread their CPU over twenty objects instead of queueing behind each other in one.
 * Frames are analysed in memory and dropped; nothing of them is stored.
 */

/** What the Worker sends with a connection request (the route has authenticated the caller). */
export interface LiveConnect {
  orgId: string;
  /** The upgrade request's id, so what is logged about the connection can be tied to it. */
  requestId?: string;
  credential: LiveCredential;
  inputType: string;
  qualityFloor: number;
  timings: LiveTimings;
  limits: { tenant: number; instance: number };
  /** The subprotocol to select (`service.session`), when the browser offered it. */
  protocol: string | null;
}

/** Kept with each socket (survives hibernation). */
interface Attachment {
  /** Names the connection's analysis object and its promise chain. */
  id: string;
  /** The upgrade request's id (absent on sockets opened before it was kept). */
  requestId?: string;
  credential: LiveCredential;
  inputType: string;
  qualityFloor: number;
  timings: LiveTimings;
  openedAt: number;
  lastDataAt: number;
  checkedAt: number;
  seq: number;
  /** Arrival times of the frames taken in the last second. */
  taken: number[];
}

export const LIVE_CONNECT_HEADER = "X-Live-Connect";
export const INSTANCE_NAME = "live:instance";
/** Close codes a peer may report but never send (RFC 6455 7.4.1): no status, abnormal closure, TLS failure. */
const RESERVED_CLOSE_CODES = new Set([1005, 1006, 1015]);

type FrameOutcome = { ok: true; analysis: FrameAnalysis } | { ok: false; code: string; message: string };

/** A refusal before the upgrade, turned into a problem document by the route. */
function refuse(status: 429 | 503, code: string, detail: string): Response {
  return Response.json({ code, detail }, { status });
}

export class LiveCapture extends DurableObject<Env> {
  /** Connections accepted but not yet counted among the open sockets (an await is in between). */
  #pending = 0;
  /** The tail of each connection's chain of messages being answered. */
  #chains = new Map<string, Promise<void>>();

  #open(): WebSocket[] {
    return this.ctx.getWebSockets().filter((ws) => ws.readyState === WebSocket.OPEN);
  }

  async fetch(request: Request): Promise<Response> {
    const spec = JSON.parse(request.headers.get(LIVE_CONNECT_HEADER) ?? "null") as LiveConnect | null;
    if (!spec || request.headers.get("Upgrade")?.toLowerCase() !== "websocket")
      return new Response("expected a live connection", { status: 400 });
    const count = this.#open().length + this.#pending;
    if (count >= spec.limits.tenant) {
      return refuse(429, "rate_limited", `The organisation has ${count} live connections open; at most ${spec.limits.tenant} are allowed.`);
    }
    this.#pending++;
    try {
      const registry = this.env.LIVE_CAPTURE.get(this.env.LIVE_CAPTURE.idFromName(INSTANCE_NAME));
      if (!(await registry.admit(spec.orgId, count + 1, spec.limits.instance))) {
        return refuse(503, "unavailable", `The service has ${spec.limits.instance} live connections open; retry shortly.`);
      }
      // Remembered for reporting counts after the last socket has gone (when no attachment is left to ask).
      await this.ctx.storage.put("orgId", spec.orgId);
      const { 0: client, 1: server } = new WebSocketPair();
      this.ctx.acceptWebSocket(server);
      const now = Date.now();
      const att: Attachment = {
        id: crypto.randomUUID(),
        requestId: spec.requestId,
        credential: spec.credential,
        inputType: spec.inputType,
        qualityFloor: spec.qualityFloor,
        timings: spec.timings,
        openedAt: now,
        lastDataAt: now,
        checkedAt: now,
        seq: 0,
        taken: [],
      };
      server.serializeAttachment(att);
      await this.ctx.storage.setAlarm(Math.min((await this.ctx.storage.getAlarm()) ?? Infinity, nextDeadline(att, att.timings)));
      const headers = spec.protocol ? { "Sec-WebSocket-Protocol": spec.protocol } : undefined;
      return new Response(null, { status: 101, webSocket: client, headers });
    } finally {
      this.#pending--;
    }
  }

  webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const arrived = Date.now();
    const { id } = ws.deserializeAttachment() as Attachment;
    const run = (this.#chains.get(id) ?? Promise.resolve())
      .then(() => this.#answer(ws, message, arrived))
      .catch((err) => logError("live frame not answered", err, { connection_id: id }));
    this.#chains.set(id, run);
    void run.then(() => {
      if (this.#chains.get(id) === run) this.#chains.delete(id);
    });
    return run;
  }

  async #answer(ws: WebSocket, message: string | ArrayBuffer, arrived: number): Promise<void> {
    const att = ws.deserializeAttachment() as Attachment;
    att.seq += 1;
    att.lastDataAt = arrived;
    const seq = att.seq;
    const error = (code: LiveErrorCode, detail: string, extra: { retry_after_ms?: number } = {}): LiveMessage => ({
      type: "error",
      seq,
      code,
      detail,
      ...extra,
    });
    let reply: LiveMessage;
    if (typeof message === "string") {
      reply = error("unsupported_frame", "Send each preview frame as one binary message (PNG or JPEG).");
    } else if (message.byteLength > FRAME_MAX_BYTES) {
      reply = error("frame_too_large", `A preview frame is at most ${FRAME_MAX_BYTES >> 10} KB (got ${message.byteLength} bytes).`);
    } else {
      const rate = admitFrame(att.taken, arrived);
      if (!rate.ok) {
        reply = error("too_fast", "At most 5 frames per second are analysed; this one was not.", { retry_after_ms: rate.retryAfterMs });
      } else {
        att.taken = rate.taken;
        try {
          reply = await this.#analyse(new Uint8Array(message), att, error);
        } catch (err) {
          // A fault of ours (a decoder bug, a failed call to the analysis object), not one the client can fix: the
          // frame still gets its one reply, so the replies keep their count and order and the state moves on.
          logError("live frame could not be analysed", err, {
            request_id: att.requestId,
            org_id: att.credential.orgId,
            credential: att.credential.kind,
            connection_id: att.id,
            seq,
            bytes: message.byteLength,
          });
          reply = error("analysis_failed", "The frame could not be analysed (an error on our side, not in the frame); send the next one.");
        }
      }
    }
    ws.serializeAttachment(att);
    // The socket may have closed while the frame was analysed; the reply then has nowhere to go.
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(reply));
  }

  async #analyse(bytes: Uint8Array, att: Attachment, error: (code: LiveErrorCode, detail: string) => LiveMessage): Promise<LiveMessage> {
    const analyser = this.env.LIVE_CAPTURE.get(this.env.LIVE_CAPTURE.idFromName(`live:analyse:${att.id}`));
    const outcome = await analyser.analyse(bytes, { qualityFloor: att.qualityFloor, inputType: att.inputType });
    if (outcome.ok) return guidance(att.seq, outcome.analysis);
    if (outcome.code === "too_large" || outcome.code === "too_many_pixels") return error("frame_too_large", outcome.message);
    if (outcome.code === "unsupported_format") return error("unsupported_frame", outcome.message);
    return error("unreadable_frame", `The frame cannot be read (${outcome.code}: ${outcome.message}).`);
  }

  // --- An analysis object (one per connection): analyses one frame in memory; keeps nothing. ---

  async analyse(bytes: Uint8Array, opts: { qualityFloor: number; inputType: string }): Promise<FrameOutcome> {
    try {
      return { ok: true, analysis: await analyseFrame(bytes, opts) };
    } catch (err) {
      // Errors cross the RPC boundary as plain values: the class of a thrown error would not.
      if (!isVerifyError(err)) throw err;
      return { ok: false, code: err.code, message: err.message };
    }
  }

  async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    try {
      // The close frame must be answered (RFC 6455 5.5.1), but 1005 (a close frame without a code, what
      // close() with no arguments sends), 1006 and 1015 are reserved and may not be sent: echoing them threw,
      // no frame went back, and the client timed out and reported 1006. Answer those with a normal close.
      ws.close(RESERVED_CLOSE_CODES.has(code) ? 1000 : code, reason);
    } catch {
      // Already closed from this side.
    }
    await this.#settle();
  }

  async webSocketError(): Promise<void> {
    await this.#settle();
  }

  /**
   * After a socket has gone: with none left open, the pending alarm has nothing to sweep, so it is dropped
   * rather than waking the object for nothing; then the count is reported.
   */
  async #settle(): Promise<void> {
    if (this.#open().length === 0) await this.ctx.storage.deleteAlarm();
    await this.#report();
  }

  /** Closes what must close (idle, too old, credential gone) and sets the next alarm. */
  async alarm(): Promise<void> {
    await this.#sweep(false);
  }

  /** Re-checks every connection's credential now (a session was revoked). */
  async recheckNow(): Promise<void> {
    await this.#sweep(true);
  }

  async #sweep(forceCheck: boolean): Promise<void> {
    const now = Date.now();
    const verdicts = new Map<string, Promise<string | null>>();
    let next = Infinity;
    for (const ws of this.#open()) {
      const att = ws.deserializeAttachment() as Attachment;
      const reason = closeReason(att, att.timings, now);
      if (reason) {
        ws.close(reason === "idle" ? CLOSE_IDLE : CLOSE_MAX_DURATION, reason);
        continue;
      }
      if (forceCheck || now - att.checkedAt >= att.timings.recheckMs) {
        // Connections sharing a credential share one look-up.
        const key = JSON.stringify(att.credential);
        let verdict = verdicts.get(key);
        if (!verdict) {
          verdict = credentialProblem(this.env, att.credential, now);
          verdicts.set(key, verdict);
        }
        const problem = await verdict;
        if (problem) {
          ws.close(CLOSE_CREDENTIAL, problem);
          continue;
        }
        att.checkedAt = now;
        ws.serializeAttachment(att);
      }
      next = Math.min(next, nextDeadline(att, att.timings));
    }
    if (next !== Infinity) await this.ctx.storage.setAlarm(Math.max(next, Date.now() + 1));
    else await this.ctx.storage.deleteAlarm();
    await this.#report();
  }

  async #report(): Promise<void> {
    const orgId = await this.ctx.storage.get<string>("orgId");
    if (!orgId) return;
    const registry = this.env.LIVE_CAPTURE.get(this.env.LIVE_CAPTURE.idFromName(INSTANCE_NAME));
    await registry.report(orgId, this.#open().length);
  }

  // --- The INSTANCE object: connection counts reported by each tenant's object. ---

  /**
   * Admits one more connection of `orgId` (which then holds `count`) unless that would take the instance
   * past `max`. Counts are set, not incremented, so a lost report is corrected by the next one.
   */
  async admit(orgId: string, count: number, max: number): Promise<boolean> {
    const counts = (await this.ctx.storage.get<Record<string, number>>("counts")) ?? {};
    const others = Object.entries(counts).reduce((sum, [id, n]) => (id === orgId ? sum : sum + n), 0);
    if (others + count > max) return false;
    counts[orgId] = count;
    await this.ctx.storage.put("counts", counts);
    return true;
  }

  async report(orgId: string, count: number): Promise<void> {
    const counts = (await this.ctx.storage.get<Record<string, number>>("counts")) ?? {};
    if (count > 0) counts[orgId] = count;
    else delete counts[orgId];
    await this.ctx.storage.put("counts", counts);
  }
}
