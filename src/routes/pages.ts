/**
 * The Worker's web pages, static files in public/ served through the ASSETS binding: the capture page
 * (/capture, docs/live-capture.md) and the reviewer page (/review/, docs/learning.md). The Worker runs
 * first for every request (wrangler.toml `run_worker_first`), so only these paths reach the assets and no
 * file can shadow an API route. Each page gets its security headers here, in one place: both pages handle
 * a credential (a session token, a reviewer's key), so no framing, no referrer, scripts only from this origin.
 */
import type { Context } from "hono";
import type { App } from "../app";
import type { AppEnv } from "../http/context";
import { notFound } from "../http/problem";

const BASE_POLICY = "base-uri 'none'; frame-ancestors 'none'";

/** The capture page needs the camera and its own WebSocket and API origin; nothing else. */
const CAPTURE_HEADERS = {
  "Content-Security-Policy": `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; media-src 'self' blob: mediastream:; connect-src 'self'; form-action 'none'; ${BASE_POLICY}`,
  "Permissions-Policy": "camera=(self)",
};

const REVIEW_HEADERS = {
  "Content-Security-Policy": `default-src 'self'; img-src 'self' blob:; style-src 'self'; script-src 'self'; form-action 'self'; ${BASE_POLICY}`,
};

/** The asset at the request's own path (the assets' HTML handling maps /capture to capture.html, /review/ to its index). */
async function servePage(c: Context<AppEnv>, headers: Record<string, string>): Promise<Response> {
  if (!c.env.ASSETS) throw notFound("page");
  const res = await c.env.ASSETS.fetch(c.req.raw);
  if (res.status === 404) throw notFound("page");
  const out = new Headers(res.headers);
  for (const [k, v] of Object.entries(headers)) out.set(k, v);
  out.set("X-Content-Type-Options", "nosniff");
  out.set("Referrer-Policy", "no-referrer");
  out.set("Cache-Control", "no-cache");
  return new Response(res.body, { status: res.status, headers: out });
}

export function registerPages(app: App): void {
  for (const path of ["/capture", "/capture.js", "/capture.css"]) app.get(path, (c) => servePage(c, CAPTURE_HEADERS));
  app.get("/review", (c) => c.redirect("/review/", 301));
  app.get("/review/*", (c) => servePage(c, REVIEW_HEADERS));
}
