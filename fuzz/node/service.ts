/**
 * The real Worker for the multipart lane: wrangler's unstable_startWorker on wrangler.toml (workerd with
 * local D1, R2, Durable Objects and Queues), on fresh state migrated with the same SQL as `npm start`.
 * A few organisations share the load so the per-tenant rate limit (20/s) is not what the run measures.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { unstable_startWorker } from "wrangler";
import { encodePng, makeWriter, renderSignature } from "../../test/fixtures/generator";
import { PERMISSIONS } from "../../src/domain/tenancy";
import { FUZZ_SUBJECT } from "../mutators/multipart";
import type { HttpRequestCase } from "../core/types";
import { descendantsNamed } from "./memory";

const ROOT = path.resolve(import.meta.dirname, "../..");
const WRANGLER = path.join(ROOT, "node_modules/.bin/wrangler");
// At least 16 characters, as the configuration requires of the operator secret.
const OPERATOR = `op_fuzz_operator_${process.pid}`;
/** Per organisation, at most one request per this many ms (under the 20/s bucket). */
const PACE_MS = 60;

export interface HttpResult {
  status: number | "hang";
  contentType: string | null;
  ms: number;
  detail: string;
}

type Started = Awaited<ReturnType<typeof unstable_startWorker>>;

export class Service {
  #worker: Started | null = null;
  #state = "";
  base = "";
  #keys: { key: string; nextAt: number }[] = [];
  #turn = 0;
  restarts = 0;

  constructor(private orgs = 4) {}

  /** workerd processes of this run, for memory sampling. */
  pids(): number[] {
    return descendantsNamed(process.pid, "workerd");
  }

  async start(): Promise<void> {
    this.#state = mkdtempSync(path.join(tmpdir(), "countersign-fuzz-"));
    const env = { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" };
    for (const db of ["countersign-directory", "countersign-us", "countersign-eu"]) {
      execFileSync(WRANGLER, ["d1", "migrations", "apply", db, "--local", "--persist-to", this.#state], {
        cwd: ROOT,
        env,
        stdio: "ignore",
      });
    }
    this.#worker = await unstable_startWorker({
      config: path.join(ROOT, "wrangler.toml"),
      bindings: { OPERATOR_TOKEN: { type: "plain_text", value: OPERATOR } },
      dev: { server: { hostname: "127.0.0.1", port: 0 }, inspector: false, persist: this.#state, logLevel: "none" },
    } as Parameters<typeof unstable_startWorker>[0]);
    await this.#worker.ready;
    this.base = (await this.#worker.url).origin;
    this.#keys = [];
    for (let i = 0; i < this.orgs; i++) {
      const org = await this.#operator("POST", "/platform/orgs", { name: `fuzz ${i}`, region: "us", billing: "active" });
      const minted = await this.#operator("POST", `/platform/orgs/${org.org_id}/keys`, { permissions: PERMISSIONS, name: "fuzz" });
      this.#keys.push({ key: minted.key, nextAt: 0 });
      await this.#enrol(minted.key);
    }
  }

  async #operator(method: string, p: string, json: unknown): Promise<Record<string, string>> {
    const res = await fetch(this.base + p, {
      method,
      headers: { Authorization: `Bearer ${OPERATOR}`, "Content-Type": "application/json" },
      body: JSON.stringify(json),
    });
    if (!res.ok) throw new Error(`${method} ${p} -> ${res.status}: ${await res.text()}`);
    return (await res.json()) as Record<string, string>;
  }

  /** The subject every check case compares with: three synthetic signatures of one writer. */
  async #enrol(key: string): Promise<void> {
    const form = new FormData();
    const w = makeWriter(5);
    for (let v = 0; v < 3; v++)
      form.append(`r${v}`, new Blob([encodePng(renderSignature(w, { variant: v, height: 120 }))], { type: "image/png" }), `r${v}.png`);
    const res = await fetch(`${this.base}/sig/subjects/${FUZZ_SUBJECT}/references`, {
      method: "PUT",
      headers: { Authorization: `Bearer ${key}` },
      body: form,
    });
    if (res.status !== 200) throw new Error(`enrolment -> ${res.status}: ${await res.text()}`);
  }

  async #nextKey(): Promise<string> {
    const k = this.#keys[this.#turn++ % this.#keys.length];
    const wait = k.nextAt - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    k.nextAt = Date.now() + PACE_MS;
    return k.key;
  }

  async send(c: HttpRequestCase, id: string, hangMs: number): Promise<HttpResult> {
    const key = await this.#nextKey();
    const headers: Record<string, string> = { Authorization: `Bearer ${key}`, "Content-Type": c.contentType };
    const url = c.route === "checks" ? `${this.base}/sig/checks` : `${this.base}/sig/subjects/fuzz-enrol/references`;
    if (c.route === "checks") headers["Idempotency-Key"] = `fuzz-${id}`;
    const t0 = performance.now();
    try {
      const res = await fetch(url, {
        method: c.route === "checks" ? "POST" : "PUT",
        headers,
        body: c.body,
        signal: AbortSignal.timeout(hangMs),
      });
      const text = await res.text();
      return { status: res.status, contentType: res.headers.get("Content-Type"), ms: performance.now() - t0, detail: text.slice(0, 400) };
    } catch (err) {
      const e = err as Error;
      if (e.name === "TimeoutError" || e.name === "AbortError")
        return { status: "hang", contentType: null, ms: performance.now() - t0, detail: `no answer within ${hangMs} ms` };
      return { status: 0, contentType: null, ms: performance.now() - t0, detail: `connection failed: ${e.message}` };
    }
  }

  /** Whether /health answers within `ms` (after a hang: is the whole isolate stuck?). */
  async healthy(ms = 5000): Promise<boolean> {
    try {
      return (await fetch(`${this.base}/health`, { signal: AbortSignal.timeout(ms) })).ok;
    } catch {
      return false;
    }
  }

  async restart(): Promise<void> {
    this.restarts++;
    await this.stop();
    await this.start();
  }

  async stop(): Promise<void> {
    await this.#worker?.dispose().catch(() => undefined);
    this.#worker = null;
    if (this.#state) rmSync(this.#state, { recursive: true, force: true });
  }
}
