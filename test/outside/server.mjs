// The outside world for tests: a real HTTP server on 127.0.0.1 that vitest.config.ts starts once per run.
// It stands in for what lies beyond the machine (an identity provider's JWKS, a customer's document
// host, a webhook receiver). Tests script it through a small control API under /__:
//
//   POST /__register   {path, method?, status?, headers?, body? | body_base64? | json?, redirect?,
//                       delay_ms?, chunks?: [{data? | data_base64? | size?, delay_ms?}], stall?, times?}
//                      sets the response for `path` (exact path, query ignored; any method unless given).
//                      `chunks` stream the body piece by piece (each after its delay); `stall` keeps the
//                      connection open after the last chunk without ending it; `times` serves it that
//                      many times, then 404. Re-registering a path replaces it.
//   POST /__unregister {path}
//   GET  /__requests?path=P   the requests received for P (method, path, query, headers, body_bytes, at)
//   POST /__jwks       {jwk} adds a public key to the key set served at GET /jwks.json
//   POST /__webhooks/register {path, secrets: ["whsec_..."], statuses?: [500, 500, 200], delay_ms?, body?}
//                      makes `path` a webhook receiver: each POST answers the next status of `statuses`
//                      (the last one repeats; default 200) with `body`, and is verified against each secret
//                      with the `standardwebhooks` library (our Service-* headers mapped onto its
//                      webhook-* names), never with the service's own code.
//   GET  /__webhooks/received?path=P   what the receiver got: {id, timestamp, signature, version, body,
//                      verified: [one boolean per secret], status, at}
//
// Test files run in parallel against the same server, so each test registers paths under a prefix of
// its own (test/helpers/outside.ts: uniquePath()).
import http from "node:http";
import { Webhook } from "standardwebhooks";

export async function startOutsideServer() {
  const routes = new Map();
  const log = [];
  const jwks = { keys: [] };
  const sockets = new Set();
  const receivers = new Map();

  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://outside");
    const body = await readBody(req);
    try {
      if (url.pathname.startsWith("/__")) return control(url, req.method, body, res);
      log.push({
        method: req.method,
        path: url.pathname,
        query: url.search,
        headers: req.headers,
        body_bytes: body.length,
        at: Date.now(),
      });
      const receiver = receivers.get(url.pathname);
      if (receiver && req.method === "POST") return receive(receiver, req, body, res);
      if (url.pathname === "/jwks.json") return send(res, 200, { "content-type": "application/json" }, JSON.stringify(jwks));
      const route = routes.get(url.pathname);
      if (!route || (route.method && route.method !== req.method) || route.times === 0) {
        return send(res, 404, { "content-type": "text/plain" }, "not registered");
      }
      if (route.times !== undefined) route.times--;
      await serve(route, res);
    } catch (err) {
      if (!res.headersSent) send(res, 500, { "content-type": "text/plain" }, String(err));
      else res.destroy();
    }
  });

  function control(url, method, body, res) {
    const input = body.length ? JSON.parse(body.toString("utf8")) : {};
    if (url.pathname === "/__register" && method === "POST") {
      if (typeof input.path !== "string" || !input.path.startsWith("/")) return send(res, 400, {}, "path required");
      routes.set(input.path, input);
      return send(res, 204, {}, "");
    }
    if (url.pathname === "/__unregister" && method === "POST") {
      routes.delete(input.path);
      return send(res, 204, {}, "");
    }
    if (url.pathname === "/__requests" && method === "GET") {
      const path = url.searchParams.get("path");
      return send(res, 200, { "content-type": "application/json" }, JSON.stringify(log.filter((r) => !path || r.path === path)));
    }
    if (url.pathname === "/__webhooks/register" && method === "POST") {
      if (typeof input.path !== "string" || !input.path.startsWith("/")) return send(res, 400, {}, "path required");
      receivers.set(input.path, { ...input, secrets: input.secrets ?? [], statuses: input.statuses ?? [200], received: [] });
      return send(res, 204, {}, "");
    }
    if (url.pathname === "/__webhooks/received" && method === "GET") {
      const receiver = receivers.get(url.searchParams.get("path"));
      if (!receiver) return send(res, 404, {}, "no such receiver");
      return send(res, 200, { "content-type": "application/json" }, JSON.stringify(receiver.received));
    }
    if (url.pathname === "/__jwks" && method === "POST") {
      if (!input.jwk || typeof input.jwk !== "object") return send(res, 400, {}, "jwk required");
      jwks.keys = jwks.keys.filter((k) => k.kid !== input.jwk.kid).concat([input.jwk]);
      return send(res, 204, {}, "");
    }
    return send(res, 404, {}, "unknown control route");
  }

  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  // Never keep the test process alive on its own account.
  server.unref();
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A webhook receiver: verifies with the standardwebhooks library, records, answers the scripted status. */
async function receive(receiver, req, body, res) {
  const text = body.toString("utf8");
  const headers = {
    "webhook-id": req.headers["service-webhook-id"] ?? "",
    "webhook-timestamp": req.headers["service-webhook-timestamp"] ?? "",
    "webhook-signature": req.headers["service-signature"] ?? "",
  };
  const verified = receiver.secrets.map((secret) => {
    try {
      new Webhook(secret).verify(text, headers);
      return true;
    } catch {
      return false;
    }
  });
  const n = receiver.received.length;
  const status = receiver.statuses[Math.min(n, receiver.statuses.length - 1)];
  let parsed = null;
  try {
    parsed = JSON.parse(text);
  } catch {}
  receiver.received.push({
    id: headers["webhook-id"],
    timestamp: headers["webhook-timestamp"],
    signature: headers["webhook-signature"],
    version: req.headers["service-version"] ?? null,
    body: parsed,
    verified,
    status,
    at: Date.now(),
  });
  if (receiver.delay_ms) await sleep(receiver.delay_ms);
  send(res, status, { "content-type": "text/plain" }, receiver.body ?? (status < 300 ? "ok" : `failing with ${status}`));
}

async function serve(route, res) {
  if (route.delay_ms) await sleep(route.delay_ms);
  const headers = { ...(route.headers ?? {}) };
  if (route.redirect) {
    headers.location = route.redirect;
    return send(res, route.status ?? 302, headers, "");
  }
  if (route.chunks) {
    res.writeHead(route.status ?? 200, headers);
    res.flushHeaders();
    for (const chunk of route.chunks) {
      if (chunk.delay_ms) await sleep(chunk.delay_ms);
      if (res.destroyed) return;
      res.write(chunkBytes(chunk));
    }
    if (route.stall) {
      // Hold the connection open without ending the body; the client gives up (or the socket is closed).
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, route.stall_ms ?? 180_000);
        timer.unref();
        res.on("close", () => {
          clearTimeout(timer);
          resolve();
        });
      });
      return res.destroy();
    }
    return res.end();
  }
  let payload;
  if (route.json !== undefined) {
    payload = Buffer.from(JSON.stringify(route.json));
    headers["content-type"] ??= "application/json";
  } else if (route.body_base64 !== undefined) {
    payload = Buffer.from(route.body_base64, "base64");
  } else {
    payload = Buffer.from(route.body ?? "");
  }
  send(res, route.status ?? 200, headers, payload);
}

function chunkBytes(chunk) {
  if (chunk.data_base64 !== undefined) return Buffer.from(chunk.data_base64, "base64");
  if (chunk.data !== undefined) return Buffer.from(chunk.data);
  return Buffer.alloc(chunk.size ?? 0, 0x61);
}

function send(res, status, headers, body) {
  res.writeHead(status, { ...headers, "content-length": Buffer.byteLength(body) });
  res.end(body);
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const parts = [];
    req.on("data", (d) => parts.push(d));
    req.on("end", () => resolve(Buffer.concat(parts)));
    req.on("error", reject);
  });
}

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms).unref?.());
}
