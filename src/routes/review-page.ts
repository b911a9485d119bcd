/**
 * The reviewer page (public/review/, docs/learning.md): static files served from the ASSETS binding.
 * The Worker runs first for every request (wrangler.toml), so only /review/ reaches the assets and no
 * file can shadow an API route. The page talks to the public API with the reviewer's own credential.
 */
import type { App } from "../app";
import { notFound } from "../http/problem";

export function registerReviewPage(app: App): void {
  app.get("/review", (c) => c.redirect("/review/", 301));
  app.get("/review/*", async (c) => {
    if (!c.env.ASSETS) throw notFound("page");
    const res = await c.env.ASSETS.fetch(c.req.raw);
    if (res.status === 404) throw notFound("page");
    const headers = new Headers(res.headers);
    // The page handles a credential: no framing, no referrer, scripts only from this origin.
    headers.set(
      "Content-Security-Policy",
      "default-src 'self'; img-src 'self' blob:; style-src 'self'; script-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    );
    headers.set("X-Content-Type-Options", "nosniff");
    headers.set("Referrer-Policy", "no-referrer");
    headers.set("Cache-Control", "no-cache");
    return new Response(res.body, { status: res.status, headers });
  });
}
