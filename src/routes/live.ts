import { configOf } from "../config";
import { z } from "@hono/zod-openapi";
import { decodeJwt } from "jose";
import type { App } from "../app";
import type { Caller } from "../domain/tenancy";
import { AUTH_PROBLEMS, defineRoute, problems } from "../http/route";
import { ProblemError, invalidField, type ProblemCode } from "../http/problem";
import { SESSION_SUBPROTOCOL, bearerToken } from "../http/auth";
import { DEFAULT_POLICY_NAME } from "../domain/policy";
import { getLatestPolicy } from "../storage/policies";
import { sessionsRepo } from "../storage/sessions";
import type { LiveCredential } from "../services/sessions";
import { liveCapture } from "../../durable-objects/live-capture-client";
import { LIVE_CONNECT_HEADER, type LiveConnect } from "../../durable-objects/live-capture";

const LiveGuidanceDoc = z
  .object({
    type: z.literal("guidance"),
    seq: z.number().int().min(1).openapi({ description: "1-based number of the client message this answers" }),
    cue: z
      .enum(["ready", "no_signature_in_view", "too_dark", "too_bright", "low_contrast", "hold_steady", "move_closer", "signature_cut_off"])
      .openapi({
        description: "The one thing to tell the person now (an open enum: ignore unknown values, show `message`)",
      }),
    cues: z.array(z.string()).openapi({ description: "Every cue that applies, most pressing first" }),
    message: z.string().openapi({ description: "The cue in plain words" }),
    ready: z.boolean().openapi({ description: "True when this frame is good to capture" }),
    quality: z.object({ score: z.number().min(0).max(1), figures: z.record(z.string(), z.number()) }),
    signature: z
      .object({ box: z.object({ x: z.number(), y: z.number(), w: z.number(), h: z.number() }), confidence: z.number() })
      .nullable()
      .openapi({ description: "The located signature in frame pixels, or null" }),
  })
  .openapi("LiveGuidance");

const LiveErrorDoc = z
  .object({
    type: z.literal("error"),
    seq: z.number().int().min(1),
    code: z.enum(["too_fast", "frame_too_large", "unsupported_frame", "unreadable_frame", "analysis_failed"]).openapi({
      description:
        "too_fast: a 6th frame within one second; frame_too_large: over 512 KB or 640 px; unsupported_frame: a text message or not " +
        "PNG/JPEG; unreadable_frame: a PNG or JPEG that cannot be decoded; analysis_failed: the frame could not be analysed through a " +
        "fault of the service (send the next frame)",
    }),
    detail: z.string(),
    retry_after_ms: z.number().int().optional().openapi({ description: "too_fast: wait this long before the next frame" }),
  })
  .openapi("LiveError");

export const LiveMessageDoc = z.discriminatedUnion("type", [LiveGuidanceDoc, LiveErrorDoc]).openapi("LiveMessage", {
  description:
    "Designed here. The one JSON text reply to each client message, in order. A frame over the limits, sent too fast or that could " +
    "not be analysed gets an `error` reply and the connection stays open. Close codes: 1000 `idle` (60 s without a message) or `max_duration` (10 minutes); 1008 when the " +
    "credential becomes invalid (session revoked or expired, subject deleted, key revoked, organisation suspended), checked at least every 30 s.",
});

const live = defineRoute(
  { permission: "sig:checks:create", credentials: ["api_key", "user", "session"], billing: true },
  {
    method: "get",
    path: "/sig/live",
    tags: ["sessions"],
    summary: "Live capture guidance over a WebSocket: one LiveMessage per preview frame",
    description:
      "Upgrade with `Upgrade: websocket`. Authenticate with `Authorization: Bearer` (API key, dashboard token or session token) or, from " +
      "browsers, `Sec-WebSocket-Protocol: service.session, <session token>` (the server selects `service.session`). Send each preview frame " +
      "as one binary message: PNG or JPEG, at most 640 px on the long side and 512 KB, at most 5 per second. Each message gets exactly one " +
      "LiveMessage (JSON text), in order. Frames are analysed in memory and never stored. At most 20 live connections per organisation " +
      "(429 before the upgrade) and 200 on the instance (503). See docs/live-capture.md.",
    responses: {
      101: {
        description: "Switching protocols; the server then sends one LiveMessage per client message",
        content: { "application/json": { schema: LiveMessageDoc } },
      },
      ...problems(...AUTH_PROBLEMS, 402),
    },
  },
);

/** What the live object re-checks of the caller's credential while the connection is open. */
function liveCredential(caller: Caller, orgId: string, bearer: string | null): LiveCredential {
  if (caller.kind === "session" && caller.sessionId) return { kind: "session", orgId, sessionId: caller.sessionId };
  if (caller.kind === "api_key" && caller.keyId) return { kind: "api_key", orgId, keyId: caller.keyId };
  if (caller.kind === "user" && caller.userId && bearer) {
    // Verified by authentication already; only its expiry is read here.
    const exp = decodeJwt(bearer).exp;
    return { kind: "user", orgId, userId: caller.userId, expiresAt: typeof exp === "number" ? exp * 1000 : null };
  }
  throw new Error(`caller of kind ${caller.kind} without its id`);
}

export function registerLiveRoutes(app: App): void {
  app.openapi(live, async (c) => {
    if (c.req.header("Upgrade")?.toLowerCase() !== "websocket")
      throw invalidField("Upgrade", "must be websocket: GET /sig/live is a WebSocket");
    // The handshake itself (RFC 6455 4.1, 4.2.2): left to the runtime, a bad one got its plain-text 400 after
    // the 101 was made, not a problem document.
    if (c.req.header("Sec-WebSocket-Version")?.trim() !== "13") {
      const message = "must be 13 (RFC 6455)";
      throw new ProblemError("invalid_request", `Sec-WebSocket-Version: ${message}`, {
        extensions: { errors: [{ field: "Sec-WebSocket-Version", message }] },
        // The version this server speaks, as RFC 6455 4.4 asks of a refusal.
        headers: { "Sec-WebSocket-Version": "13" },
      });
    }
    if (!/^[A-Za-z0-9+/]{22}==$/.test(c.req.header("Sec-WebSocket-Key")?.trim() ?? ""))
      throw invalidField("Sec-WebSocket-Key", "must be a random 16-byte value in base64 (RFC 6455)");
    const tenant = c.get("tenant");
    const caller = c.get("caller");
    const offered = (c.req.header("Sec-WebSocket-Protocol") ?? "").split(",").map((p) => p.trim());

    const credential = liveCredential(caller, tenant.org.id, bearerToken(c.req.header("Authorization")));
    let inputType = "photo";
    let policyName = DEFAULT_POLICY_NAME;
    if (credential.kind === "session") {
      // The session's own settings guide its capture.
      const session = await sessionsRepo(tenant.store.db).get(tenant.org.id, credential.sessionId);
      inputType = session?.inputType ?? inputType;
      policyName = session?.policy ?? policyName;
    }
    const policy = await getLatestPolicy(tenant.store.db, { id: tenant.org.id, createdAt: tenant.org.createdAt }, policyName);
    const settings = configOf(c.env).live;
    const connect: LiveConnect = {
      orgId: tenant.org.id,
      requestId: c.get("requestId"),
      credential,
      inputType,
      qualityFloor: policy?.spec.quality_floor ?? 0,
      timings: settings.timings,
      limits: settings.limits,
      // A browser that offered the session subprotocol must see it selected, or it drops the connection.
      protocol: offered.includes(SESSION_SUBPROTOCOL) ? SESSION_SUBPROTOCOL : null,
    };
    const res = await liveCapture(c.env, tenant.org.id).fetch(
      new Request("https://live.internal/connect", {
        headers: { Upgrade: "websocket", [LIVE_CONNECT_HEADER]: JSON.stringify(connect) },
      }),
    );
    if (res.status !== 101 || !res.webSocket) {
      const problem = (await res.json().catch(() => null)) as { code: ProblemCode; detail: string } | null;
      throw new ProblemError(
        problem?.code ?? "unavailable",
        problem?.detail ?? "The live service is unavailable.",
        res.status === 429 || res.status === 503 ? { headers: { "Retry-After": "5" } } : {},
      );
    }
    // A response of our own: its headers stay writable for the middleware that stamps every response.
    return new Response(null, { status: 101, webSocket: res.webSocket, headers: res.headers }) as never;
  });
}
