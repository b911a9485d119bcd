// The reviewer page in real headless Chromium against the local service (wrangler dev with migrated local
// D1 and the real learning queue): sign in, work a queue of two flagged items with the keyboard (one
// confirmed genuine, one marked forged), and see the learned reference appear on the subject page. Then a
// queue longer than a batch, whose newest items were reviewed elsewhere, worked batch by batch.
import { execFileSync } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";
import { unstable_startWorker } from "wrangler";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { blankPage, encodePng, makeWriter, renderSignature } from "../fixtures/generator.ts";

const OPERATOR = `op_${crypto.randomUUID()}`;
const WRITER = 23;
const OTHER_WRITER = 41;
const FORGER = 71;
const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];

let state;
let worker;
let base;
let browser;
let apiKey;
let reviewerKey;

const png = (writer, variant) => encodePng(renderSignature(makeWriter(writer), { variant, height: 200 }));

async function call(p, { method = "GET", key = apiKey, json, body, headers = {} } = {}) {
  const h = { Authorization: `Bearer ${key}`, ...headers };
  if (json !== undefined) h["Content-Type"] = "application/json";
  const res = await fetch(new URL(p, base), { method, headers: h, body: json !== undefined ? JSON.stringify(json) : body });
  if (!res.ok) throw new Error(`${method} ${p} -> ${res.status}: ${await res.text()}`);
  return res;
}

async function checkOne(jobId, bytes, process, inputType) {
  const form = new FormData();
  const item = { file: "doc", subject_reference: "ann", process, ...(inputType ? { input_type: inputType } : {}) };
  form.append("request", JSON.stringify({ job_id: jobId, policy: "review", items: [item] }));
  form.append("doc", new Blob([bytes], { type: "image/png" }), "doc.png");
  const res = await call("/sig/checks", { method: "POST", body: form, headers: { "Idempotency-Key": jobId } });
  const result = await res.json();
  expect(result.decision).toBe("FLAG");
  return result;
}

beforeAll(async () => {
  state = await mkdtemp(path.join(tmpdir(), "countersign-review-test-"));
  for (const db of ["countersign-directory", "countersign-us", "countersign-eu"]) {
    execFileSync("node_modules/.bin/wrangler", ["d1", "migrations", "apply", db, "--local", "--persist-to", state], {
      stdio: ["ignore", "ignore", "inherit"],
      env: { ...process.env, CI: "true" },
    });
  }
  worker = await unstable_startWorker({
    config: "wrangler.toml",
    bindings: { OPERATOR_TOKEN: { type: "plain_text", value: OPERATOR } },
    dev: { server: { hostname: "127.0.0.1", port: 0 }, inspector: false, watch: false, logLevel: "error", persist: state },
  });
  base = (await worker.url).href;

  const org = await (await call("/platform/orgs", { method: "POST", key: OPERATOR, json: { name: "Review desk", region: "us" } })).json();
  const mint = async (permissions) =>
    (await (await call(`/platform/orgs/${org.org_id}/keys`, { method: "POST", key: OPERATOR, json: { permissions } })).json()).key;
  // The integration's key sets things up; the reviewer signs in with a key of a reviewer's permissions only.
  apiKey = await mint(["sig:checks:create", "sig:checks:read", "sig:subjects:read", "sig:references:write", "sig:settings:manage"]);
  reviewerKey = await mint(["sig:checks:read", "sig:subjects:read", "sig:references:write", "sig:references:delete"]);
  // Every compared item is FLAG under this policy; learning takes scores from 0.3.
  await call("/sig/policies/review", {
    method: "PUT",
    json: { thresholds: { auto_approve: 1, approve: 1, flag: 0 }, learning: { enabled: true, min_score: 0.3 } },
  });
  const refs = new FormData();
  for (const v of [0, 1, 2]) refs.append(`r${v}`, new Blob([png(WRITER, v)], { type: "image/png" }), `r${v}.png`);
  await call("/sig/subjects/ann/references", { method: "PUT", body: refs });
  // Newest first in the queue: the genuine item (checked last) comes first, then the forgery.
  await checkOne("forgery", png(FORGER, 1));
  await checkOne("genuine", png(WRITER, 5));

  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: CHROMIUM_ARGS });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await worker?.dispose();
  if (state) await rm(state, { recursive: true, force: true });
});

/** A new tab whose script errors are collected in `errors`. */
async function newTab() {
  const page = await browser.newPage();
  const errors = [];
  page.on("pageerror", (err) => errors.push(err.message));
  return { page, errors };
}

/** Open the reviewer page at `path` and sign in with the reviewer's key. */
async function signIn(page, path = "/review/") {
  await page.goto(new URL(path, base).href);
  await page.fill("#credential", reviewerKey);
  await page.press("#credential", "Enter");
}

describe("the reviewer page in Chromium", () => {
  it("signs in, confirms one flagged item and marks one forged with the keyboard, and shows the learned reference", async () => {
    const { page, errors } = await newTab();
    await signIn(page);
    await page.waitForSelector("#queue-list li:nth-child(2)");
    expect(await page.$$eval("#queue-list li", (lis) => lis.map((li) => li.dataset.checkId))).toEqual(["genuine/0", "forgery/0"]);
    await page.waitForFunction(() => document.querySelector("#item")?.dataset.checkId === "genuine/0");
    // The crop is shown with the deviating regions drawn over it, beside the reference thumbnails.
    await page.waitForFunction(() => document.querySelector("#crop")?.complete && document.querySelector("#crop").naturalWidth > 0);
    expect(await page.$$eval("#regions rect", (r) => r.length)).toBeGreaterThan(0);
    await page.waitForSelector("#ref-thumbs figure:nth-child(3)");

    // The credential never reaches storage.
    expect(await page.evaluate(() => localStorage.length + sessionStorage.length + document.cookie.length)).toBe(0);

    await page.keyboard.press("c");
    await page.waitForFunction(() => document.querySelector("#item")?.dataset.checkId === "forgery/0");
    await page.keyboard.press("f");
    await page.waitForFunction(() => document.querySelector("#queue-status")?.dataset.remaining === "0");

    const genuine = (await (await call("/sig/checks/genuine")).json()).results[0].review;
    const forgery = (await (await call("/sig/checks/forgery")).json()).results[0].review;
    expect(genuine.verdict).toBe("genuine");
    expect(forgery).toMatchObject({ verdict: "forged", learning: { status: "not_applicable" } });

    // The subject page refreshes while learning is queued, until the learned reference appears.
    await page.click("#subject-link");
    const row = await page.waitForSelector('#refs tr[data-ref-id="learned-genuine.0"]', { timeout: 30_000 });
    expect(await row.getAttribute("data-kind")).toBe("learned");
    expect(await row.textContent()).toContain("from check genuine/0");
    expect(await page.textContent("#subject-counts")).toContain("1 learned");
    expect(errors).toEqual([]);
    await page.close();
  }, 90_000);

  it("pages past items reviewed elsewhere to the older ones still waiting, a batch at a time, through a 429", async () => {
    // Seven flagged items of one process, oldest first; the two newest are reviewed before the page opens.
    // Another writer's signatures: the reviewer marks them all forged, and none can reach the review
    // policy's auto_approve of 1, as a near-perfect genuine one can (scores are kept to 4 decimals).
    for (let n = 1; n <= 7; n++) await checkOne(`late-${n}`, png(OTHER_WRITER, n), "late");
    for (const n of [7, 6])
      await call(`/sig/checks/late-${n}/items/0/reject`, { method: "POST", headers: { "Idempotency-Key": `rej-${n}` } });

    const { page, errors } = await newTab();
    const reads = [];
    page.on("request", (req) => reads.push(new URL(req.url()).pathname));
    // The tenant's rate limit answers the queue's first list request with 429; the page waits and asks again.
    let lists = 0;
    await page.route(
      (url) => url.pathname === "/sig/checks" && url.searchParams.get("process") === "late",
      (route) =>
        ++lists === 1
          ? route.fulfill({
              status: 429,
              headers: { "Retry-After": "1", "Content-Type": "application/problem+json" },
              body: JSON.stringify({
                type: "about:blank",
                title: "Rate limited",
                status: 429,
                code: "rate_limited",
                detail: "Too many requests",
              }),
            })
          : route.continue(),
    );
    // Batches of two: the newest batch holds only reviewed items, which used to leave "Nothing to review.".
    await signIn(page, "/review/?page_size=2");
    await page.waitForSelector("#filters", { state: "visible" });
    await page.fill("#f-process", "late");
    const answered = page.waitForResponse((r) => new URL(r.url()).searchParams.get("process") === "late" && r.status() === 200);
    await page.click("#filters button[type=submit]");
    await answered;
    expect(lists).toBe(2);

    const shown = () => page.$$eval("#queue-list li", (lis) => lis.map((li) => li.dataset.checkId));
    await page.waitForFunction(() => {
      const item = document.querySelector("#item");
      return !item.hidden && item.dataset.checkId === "late-5/0" && document.querySelector("#queue-status").textContent !== "Loading…";
    });
    expect(await shown()).toEqual(["late-5/0", "late-4/0"]);
    expect(await page.getAttribute("#queue-status", "data-more")).toBe("true");
    expect(await page.isVisible("#load-more")).toBe(true);

    // Working through the batch brings the next one.
    await page.keyboard.press("f");
    await page.waitForFunction(() => document.querySelector("#item")?.dataset.checkId === "late-4/0");
    await page.keyboard.press("f");
    await page.waitForFunction(() => document.querySelector("#item")?.dataset.checkId === "late-3/0");
    expect(await shown()).toEqual(["late-5/0", "late-4/0", "late-3/0", "late-2/0"]);
    // And the button brings the last.
    await page.click("#load-more");
    await page.waitForFunction(() => document.querySelector("#queue-status")?.dataset.more === "false");
    expect(await shown()).toEqual(["late-5/0", "late-4/0", "late-3/0", "late-2/0", "late-1/0"]);
    expect(await page.isVisible("#load-more")).toBe(false);
    for (const next of ["late-2/0", "late-1/0"]) {
      await page.keyboard.press("f");
      await page.waitForFunction((id) => document.querySelector("#item")?.dataset.checkId === id, next);
    }
    await page.keyboard.press("f");
    await page.waitForFunction(() => document.querySelector("#queue-status")?.dataset.remaining === "0");
    expect(await page.textContent("#queue-status")).toBe("Queue done.");

    for (let n = 1; n <= 7; n++) {
      const review = (await (await call(`/sig/checks/late-${n}`)).json()).results[0].review;
      expect(review?.verdict, `late-${n}`).toBe("forged");
    }
    // Review states came with the list: no job was read item by item.
    expect(reads.filter((p) => /^\/sig\/checks\/[^/]+$/.test(p))).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 120_000);

  it("tells the reviewer when the signature shown runs off the page's edge", async () => {
    // A scan whose signature's last 120 px lie past the right edge: a low score may mean only that.
    const sig = renderSignature(makeWriter(WRITER), { variant: 6, width: 480, height: 200 });
    const page = blankPage(1000, 700);
    for (let y = 0; y < sig.height; y++)
      for (let x = 0; x < sig.width && x + 640 < page.width; x++) page.data[(y + 250) * page.width + x + 640] = sig.data[y * sig.width + x];
    const cut = await checkOne("cut", encodePng(page), "cut", "scan");
    expect(cut.signatures[0].cut_off).toBe(true);
    await checkOne("whole", png(WRITER, 7), "whole", "scan");

    const { page: tab, errors } = await newTab();
    await signIn(tab);
    const meta = async (process, id) => {
      await tab.waitForSelector("#filters", { state: "visible" });
      await tab.fill("#f-process", process);
      await tab.click("#filters button[type=submit]");
      await tab.waitForFunction((want) => document.querySelector("#item")?.dataset.checkId === want, id);
      return tab.textContent("#item-meta");
    };
    expect(await meta("cut", "cut/0")).toContain("runs off the page's edge");
    expect(await meta("whole", "whole/0")).not.toContain("runs off");
    expect(errors).toEqual([]);
    await tab.close();
  }, 60_000);
});
