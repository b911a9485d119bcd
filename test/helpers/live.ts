/** Test helper: live WebSocket connections through the Worker's fetch, with their replies in a queue. */
import { env } from "cloudflare:workers";
import { BASE, api } from "./tenant";
import type { LiveMessage } from "../../src/domain/live";

export interface LiveSocket {
  ws: WebSocket;
  response: Response;
  /** The next reply (in arrival order). */
  next(): Promise<LiveMessage>;
  /** Resolves with the close event. */
  closed: Promise<{ code: number; reason: string }>;
  send(frame: Uint8Array | string): void;
}

/** Sets live settings (LIVE_IDLE_MS etc.) for connections opened until `reset` runs. */
export function liveSettings(values: Record<string, string>): () => void {
  const e = env as unknown as Record<string, string | undefined>;
  for (const [k, v] of Object.entries(values)) e[k] = v;
  return () => {
    for (const k of Object.keys(values)) delete e[k];
  };
}

/** Every socket opened by `openLive`, so a file can close them all before it ends. */
const opened: { ws: WebSocket; closed: Promise<unknown> }[] = [];

/**
 * Closes every socket `openLive` opened that is still open, and waits for each close to complete (the
 * server's close frame), so no socket handler of the live objects is still running when the file ends.
 */
export async function closeAllLive(): Promise<void> {
  for (const { ws } of opened) {
    if (ws.readyState === WebSocket.OPEN) ws.close(1000, "done");
  }
  await Promise.all(opened.map((o) => o.closed));
  opened.length = 0;
}

/** GET /sig/live; the response as is (for refusals) and, on 101, the accepted socket. */
export async function openLive(
  opts: { key?: string; protocols?: string; base?: string; upgrade?: boolean; handshake?: Record<string, string> } = {},
): Promise<LiveSocket> {
  const headers: Record<string, string> = {};
  if (opts.upgrade !== false) {
    // What a browser sends (RFC 6455 4.1); `handshake` replaces them.
    const nonce = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(16))));
    Object.assign(headers, { Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": nonce }, opts.handshake);
  }
  if (opts.protocols) headers["Sec-WebSocket-Protocol"] = opts.protocols;
  const response = await api("/sig/live", { key: opts.key, headers, base: opts.base ?? BASE });
  const ws = response.webSocket;
  if (!ws)
    return {
      ws: null as never,
      response,
      next: () => Promise.reject(new Error(`no socket: ${response.status}`)),
      closed: new Promise(() => {}),
      send() {},
    };
  ws.accept();
  const inbox: LiveMessage[] = [];
  const waiting: ((m: LiveMessage) => void)[] = [];
  ws.addEventListener("message", (e) => {
    const m = JSON.parse(e.data as string) as LiveMessage;
    const w = waiting.shift();
    if (w) w(m);
    else inbox.push(m);
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => {
    ws.addEventListener("close", (e) => resolve({ code: e.code, reason: e.reason }));
  });
  opened.push({ ws, closed });
  return {
    ws,
    response,
    closed,
    next: () => (inbox.length ? Promise.resolve(inbox.shift()!) : new Promise((r) => waiting.push(r))),
    send: (frame) => ws.send(frame),
  };
}
