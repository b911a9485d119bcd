/**
 * The capture page in real headless Chromium against the Worker run locally by wrangler: a fake camera
 * plays a generated signature on paper; the page must show the cue change to ready, capture, run the
 * streamed check with the session token and show the decision. And with the camera refused, it must
 * say what to do.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodePng, makeWriter, renderSignature } from "../fixtures/generator";
import { startLocalWorker, type LocalWorker } from "./local-worker";
import { writeSigningMjpeg } from "./mjpeg";

const CHROMIUM = "/usr/bin/chromium";
const WRITER = 8;
const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
  "--use-fake-device-for-media-stream",
];
const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true };

let worker: LocalWorker;
let scratch: string;
let apiKey: string;
const browsers: Browser[] = [];

async function call(method: string, urlPath: string, init: { key: string; json?: unknown; body?: FormData }): Promise<Response> {
  const headers: Record<string, string> = { Authorization: `Bearer ${init.key}` };
  if (init.json !== undefined) headers["Content-Type"] = "application/json";
  return fetch(worker.base + urlPath, { method, headers, body: init.json !== undefined ? JSON.stringify(init.json) : init.body });
}

async function json<T>(res: Response, status: number): Promise<T> {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  return JSON.parse(text) as T;
}

async function mintSessionLink(subject: string): Promise<string> {
  const s = await json<{ capture_url: string }>(
    await call("POST", "/sig/sessions", { key: apiKey, json: { subject_reference: subject } }),
    201,
  );
  return s.capture_url;
}

async function launch(extra: string[]): Promise<Browser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: [...FLAGS, ...extra] });
  browsers.push(browser);
  return browser;
}

beforeAll(async () => {
  scratch = mkdtempSync(path.join(tmpdir(), "countersign-camera-"));
  worker = await startLocalWorker();
  const op = worker.operatorToken;
  const org = await json<{ org_id: string }>(
    await call("POST", "/platform/orgs", { key: op, json: { name: "Browser test", region: "us", billing: "active" } }),
    201,
  );
  const minted = await json<{ key: string }>(
    await call("POST", `/platform/orgs/${org.org_id}/keys`, {
      key: op,
      json: { permissions: ["sig:checks:create", "sig:checks:read", "sig:references:write"] },
    }),
    201,
  );
  apiKey = minted.key;
  const refs = new FormData();
  for (let i = 0; i < 3; i++)
    refs.append(
      `r${i}`,
      new Blob([encodePng(renderSignature(makeWriter(WRITER), { variant: i, height: 200 })) as Uint8Array<ArrayBuffer>], {
        type: "image/png",
      }),
      `r${i}.png`,
    );
  await json(await call("PUT", "/sig/subjects/alice/references", { key: apiKey, body: refs }), 200);
});

afterAll(async () => {
  for (const b of browsers) await b.close().catch(() => undefined);
  await worker?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe("the capture page", () => {
  it("is served at /capture with a strict content security policy", async () => {
    const res = await fetch(`${worker.base}/capture`);
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toContain("text/html");
    expect(res.headers.get("Content-Security-Policy")).toContain("default-src 'none'");
    expect(await res.text()).toContain('src="/capture.js"');
    const script = await fetch(`${worker.base}/capture.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get("Content-Type")).toContain("javascript");
  });

  it("guides to ready, captures, runs the streamed check and shows the decision (phone viewport, fake camera)", async () => {
    const video = path.join(scratch, "signing.mjpeg");
    writeSigningMjpeg(video, WRITER);
    const browser = await launch(["--use-fake-ui-for-media-stream", `--use-file-for-fake-video-capture=${video}`]);
    const page = await browser.newPage(PHONE);
    // The replies as the page receives them, read off the socket.
    const cues: string[] = [];
    page.on("websocket", (ws) => {
      ws.on("framereceived", (f) => {
        const m = JSON.parse(String(f.payload)) as { type: string; cue?: string };
        if (m.type === "guidance" && m.cue) cues.push(m.cue);
      });
    });
    const link = await mintSessionLink("alice");
    await page.goto(link);
    // The token leaves the address bar at once.
    expect(page.url()).not.toContain("svc_ses_");

    await page.waitForSelector('#decision[data-decision]:not([data-decision=""])', { timeout: 90_000 });
    const decision = await page.getAttribute("#decision", "data-decision");
    expect(["AUTO_APPROVE", "APPROVE"]).toContain(decision);
    expect(await page.textContent("#decision")).toMatch(/Approved/);
    const events = await page.$$eval("#events li", (lis) => lis.map((li) => li.textContent ?? ""));
    expect(events[0]).toBe("Received");
    expect(events.at(-1)).toMatch(/^Decision: /);
    expect(events.some((e) => e.startsWith("Comparing with 3 reference"))).toBe(true);
    // The cue changed from something else (the empty sheet comes first) to ready before the capture.
    expect(cues[0]).not.toBe("ready");
    // (The browser sent the token as the subprotocol: it drops a connection whose answer does not select
    // service.session, so replies arriving at all show the server selected it.)
    expect(cues).toContain("ready");
    await page.close();
  });

  it("says clearly what to do when the camera is refused", async () => {
    const browser = await launch(["--use-fake-ui-for-media-stream=deny"]);
    const page = await browser.newPage(PHONE);
    await page.goto(await mintSessionLink("alice"));
    await page.waitForSelector('body[data-state="error"]');
    expect(await page.textContent("#status")).toMatch(/Camera access was refused.*allow this page to use the camera/);
    await page.close();
  });

  it("says what to do when opened without a session link", async () => {
    const browser = browsers[0] ?? (await launch([]));
    const page = await browser.newPage(PHONE);
    await page.goto(`${worker.base}/capture`);
    await page.waitForSelector('body[data-state="error"]');
    expect(await page.textContent("#status")).toMatch(/needs a capture link/);
    await page.close();
  });
});
