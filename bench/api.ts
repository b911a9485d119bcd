/**
 * `npm run bench:api`: latency of the API's hot path on the local runtime (issue 15).
 *
 * Starts the real service with `wrangler dev` (fresh local state in a temporary directory, its own ports,
 * the bench-only bare route mounted by BENCH_BARE_ROUTE=1), seeds several organisations through the
 * platform routes, then drives each route at a fixed request rate (open loop: a request is sent on
 * schedule whether or not the previous one has answered) and records each request's latency:
 *
 *   phase "reads":  GET /sig/policies, GET /sig/checks/{job_id} and the bare Hono route, interleaved;
 *   phase "checks": a synchronous POST /sig/checks with a small signature, beside the bare route again.
 *
 * Tenants are taken in turn so that no tenant passes its 20/s bucket. Prints p50/p99 per route and the
 * ratio of each to the bare route of the same phase, and writes bench/results/api.json.
 *
 * With API_BENCH_BASELINE=<another tree of this repository> both services run side by side on one schedule
 * (rows "before" and "after"), the fair way to compare a change on a busy machine.
 *
 * Options (environment): API_BENCH_RATE (requests/s per read route, default 10), API_BENCH_CHECK_RATE
 * (default 2), API_BENCH_SECONDS (per phase, default 20), API_BENCH_TENANTS (default 6),
 * API_BENCH_OUT (result file, default bench/results/api.json).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { PERMISSIONS } from "../src/domain/tenancy";
import { startLocalWorker, type LocalWorker } from "../test/browser/local-worker";
import { signaturePng } from "../test/helpers/signatures";

const root = path.join(import.meta.dirname, "..");
const RATE = Number(process.env.API_BENCH_RATE ?? 10);
const CHECK_RATE = Number(process.env.API_BENCH_CHECK_RATE ?? 2);
const SECONDS = Number(process.env.API_BENCH_SECONDS ?? 20);
const TENANTS = Number(process.env.API_BENCH_TENANTS ?? 6);
const OUT = process.env.API_BENCH_OUT ?? path.join(root, "bench/results/api.json");
const OPERATOR = "bench-operator-token";
const WARMUP_SECONDS = 3;
const WRITER = 11;

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

interface Tenant {
  orgId: string;
  key: string;
  jobId: string;
}

/** One request of a route: its URL and init, given the tenant whose turn it is and a sequence number. */
type Request = (t: Tenant, n: number) => { url: string; init: RequestInit; expect: number };

interface Route {
  /** Which service: "after" (this tree) or "before" (API_BENCH_BASELINE). */
  target: string;
  base: string;
  tenants: Tenant[];
  name: string;
  rate: number;
  request: Request;
}

const keyOf = (r: Pick<Route, "target" | "name">) => `${r.target}|${r.name}`;

async function call(
  base: string,
  method: string,
  p: string,
  init: { auth: string; json?: unknown; body?: BodyInit; headers?: Record<string, string> },
) {
  const headers: Record<string, string> = { Authorization: `Bearer ${init.auth}`, ...(init.headers ?? {}) };
  let body = init.body;
  if (init.json !== undefined) {
    headers["Content-Type"] = "application/json";
    body = JSON.stringify(init.json);
  }
  const res = await fetch(base + p, { method, headers, body });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${p} -> ${res.status}: ${text}`);
  return JSON.parse(text);
}

function checkForm(variant: number): FormData {
  const form = new FormData();
  form.append("request", JSON.stringify({ items: [{ file: "doc", subject_reference: "alice", input_type: "signature_image" }] }));
  form.append("doc", new Blob([signaturePng(WRITER, variant)], { type: "image/png" }), "doc.png");
  return form;
}

async function seed(base: string): Promise<Tenant[]> {
  const tenants: Tenant[] = [];
  for (let i = 0; i < TENANTS; i++) {
    const org = await call(base, "POST", "/platform/orgs", {
      auth: OPERATOR,
      json: { name: `Bench ${i}`, region: "us", billing: "active" },
    });
    const minted = await call(base, "POST", `/platform/orgs/${org.org_id}/keys`, {
      auth: OPERATOR,
      json: { permissions: PERMISSIONS },
    });
    const refs = new FormData();
    for (let v = 0; v < 3; v++) refs.append(`r${v}`, new Blob([signaturePng(WRITER, v)], { type: "image/png" }), `r${v}.png`);
    await call(base, "PUT", "/sig/subjects/alice/references", { auth: minted.key, body: refs });
    const result = await call(base, "POST", "/sig/checks", {
      auth: minted.key,
      body: checkForm(5),
      headers: { "Idempotency-Key": `seed-${i}` },
    });
    tenants.push({ orgId: org.org_id, key: minted.key, jobId: result.job_id });
  }
  return tenants;
}

/** Drives the routes at their fixed rates at once for `seconds`; latencies (ms) per route, warm-up dropped. */
async function drive(routes: Route[], seconds: number): Promise<Map<string, { ms: number[]; errors: string[] }>> {
  const out = new Map(routes.map((r) => [keyOf(r), { ms: [] as number[], errors: [] as string[] }]));
  const pending: Promise<void>[] = [];
  const t0 = performance.now() + 50;
  const total = WARMUP_SECONDS + seconds;
  // One schedule of send times over all routes, in time order.
  const sends: { at: number; route: Route; n: number }[] = [];
  for (const route of routes) {
    const interval = 1000 / route.rate;
    // Routes start out of phase, so their requests do not all coincide.
    const offset = (interval * routes.indexOf(route)) / routes.length;
    for (let n = 0; n * interval < total * 1000; n++) sends.push({ at: t0 + offset + n * interval, route, n });
  }
  sends.sort((a, b) => a.at - b.at);
  for (const s of sends) {
    const wait = s.at - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const tenant = s.route.tenants[s.n % s.route.tenants.length];
    const { url, init, expect } = s.route.request(tenant, s.n);
    const started = performance.now();
    const measured = s.at - t0 >= WARMUP_SECONDS * 1000;
    pending.push(
      fetch(s.route.base + url, init).then(
        async (res) => {
          await res.arrayBuffer();
          const ms = performance.now() - started;
          const slot = out.get(keyOf(s.route))!;
          if (res.status !== expect) slot.errors.push(`${res.status}`);
          else if (measured) slot.ms.push(ms);
        },
        (err) => {
          out.get(keyOf(s.route))!.errors.push(String(err));
        },
      ),
    );
  }
  await Promise.all(pending);
  return out;
}

interface Row {
  target: string;
  phase: string;
  route: string;
  rate_per_s: number;
  n: number;
  errors: number;
  p50_ms: number;
  p99_ms: number;
  ratio_p50: number | null;
  ratio_p99: number | null;
}

/** Rows of one phase, each route's ratio taken to the bare route of the same service. */
function rowsOf(phase: string, routes: Route[], res: Map<string, { ms: number[]; errors: string[] }>): Row[] {
  return routes.map((r) => {
    const bare = res.get(keyOf({ target: r.target, name: "bare" }))!.ms;
    const bare50 = percentile(bare, 50);
    const bare99 = percentile(bare, 99);
    const { ms, errors } = res.get(keyOf(r))!;
    if (errors.length)
      console.error(`${r.target} ${phase} ${r.name}: ${errors.length} unexpected answers, e.g. ${errors.slice(0, 5).join(", ")}`);
    const p50 = percentile(ms, 50);
    const p99 = percentile(ms, 99);
    return {
      target: r.target,
      phase,
      route: r.name,
      rate_per_s: r.rate,
      n: ms.length,
      errors: errors.length,
      p50_ms: round(p50),
      p99_ms: round(p99),
      ratio_p50: r.name === "bare" ? null : round(p50 / bare50),
      ratio_p99: r.name === "bare" ? null : round(p99 / bare99),
    };
  });
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}

interface Service {
  target: string;
  base: string;
  tenants: Tenant[];
}

/** The routes of each phase for one service. */
async function routesOf(svc: Service): Promise<{ reads: Route[]; checks: Route[] }> {
  const auth = (t: Tenant) => ({ Authorization: `Bearer ${t.key}` });
  const at = { target: svc.target, base: svc.base, tenants: svc.tenants };
  const bare: Route = { ...at, name: "bare", rate: RATE, request: () => ({ url: "/__bench/bare", init: {}, expect: 200 }) };
  const reads: Route[] = [
    bare,
    { ...at, name: "GET /sig/policies", rate: RATE, request: (t) => ({ url: "/sig/policies", init: { headers: auth(t) }, expect: 200 }) },
    {
      ...at,
      name: "GET /sig/checks/{job_id}",
      rate: RATE,
      request: (t) => ({ url: `/sig/checks/${t.jobId}`, init: { headers: auth(t) }, expect: 200 }),
    },
    // The pipeline alone (src/http/bench-bare.ts): the middleware of the GETs above, no storage read of its own.
    {
      ...at,
      name: "GET pipeline only",
      rate: RATE,
      request: (t) => ({ url: "/sig/__bench/pipeline", init: { headers: auth(t) }, expect: 200 }),
    },
  ];
  const checks: Route[] = [
    bare,
    {
      ...at,
      name: "POST /sig/checks (sync)",
      rate: CHECK_RATE,
      request: (t, n) => ({
        url: "/sig/checks",
        init: { method: "POST", headers: { ...auth(t), "Idempotency-Key": `bench-${process.pid}-${n}` }, body: checkForm(6 + (n % 4)) },
        expect: 200,
      }),
    },
  ];
  return { reads, checks };
}

async function main() {
  // API_BENCH_BASELINE: another tree of this repository (say, the code before a change), run beside this
  // one in the same benchmark: both get the same schedule at the same time, so machine load hits both alike.
  const trees: [string, string][] = [["after", root]];
  if (process.env.API_BENCH_BASELINE) trees.unshift(["before", path.resolve(process.env.API_BENCH_BASELINE)]);
  const started: LocalWorker[] = [];
  // A run keeps wrangler's output (the access log, one line per request) for a look afterwards.
  const logs = mkdtempSync(path.join(os.tmpdir(), "countersign-bench-api-"));
  const stopAll = () => Promise.all(started.map((s) => s.stop()));
  for (const sig of ["SIGINT", "SIGTERM"] as const) process.on(sig, () => void stopAll().then(() => process.exit(130)));
  try {
    const services: Service[] = [];
    for (const [target, tree] of trees) {
      const logFile = path.join(logs, `${target}.log`);
      const svc = await startLocalWorker(
        { OPERATOR_TOKEN: OPERATOR, BUCKET_SECRET_KEY: "bench-bucket-secret-key", BENCH_BARE_ROUTE: "1" },
        { root: tree, logFile },
      );
      started.push(svc);
      console.log(`${target}: service at ${svc.base} from ${tree} (log ${logFile}); seeding ${TENANTS} organisations`);
      services.push({ target, base: svc.base, tenants: await seed(svc.base) });
    }
    const routes = await Promise.all(services.map(routesOf));
    const reads = routes.flatMap((r) => r.reads);
    const checks = routes.flatMap((r) => r.checks);
    console.log(`phase reads: ${RATE} req/s per route and service for ${SECONDS} s (after ${WARMUP_SECONDS} s warm-up)`);
    const rows = rowsOf("reads", reads, await drive(reads, SECONDS));
    console.log(`phase checks: sync check at ${CHECK_RATE} req/s beside the bare route at ${RATE} req/s for ${SECONDS} s`);
    rows.push(...rowsOf("checks", checks, await drive(checks, SECONDS)));

    console.log("");
    console.log(
      `${"service".padEnd(7)} ${"phase".padEnd(7)} ${"route".padEnd(26)} ${"req/s".padStart(5)} ${"n".padStart(5)} ${"err".padStart(4)} ${"p50 ms".padStart(8)} ${"p99 ms".padStart(8)} ${"p50/bare".padStart(9)} ${"p99/bare".padStart(9)}`,
    );
    for (const r of [...rows].sort((a, b) => (a.phase === b.phase ? 0 : a.phase === "reads" ? -1 : 1))) {
      console.log(
        `${r.target.padEnd(7)} ${r.phase.padEnd(7)} ${r.route.padEnd(26)} ${String(r.rate_per_s).padStart(5)} ${String(r.n).padStart(5)} ${String(r.errors).padStart(4)} ${r.p50_ms.toFixed(2).padStart(8)} ${r.p99_ms.toFixed(2).padStart(8)} ${(r.ratio_p50?.toFixed(2) ?? "-").padStart(9)} ${(r.ratio_p99?.toFixed(2) ?? "-").padStart(9)}`,
      );
    }
    for (const svc of services) {
      const policies = rows.find((r) => r.target === svc.target && r.route === "GET /sig/policies")!;
      console.log(`${svc.target}: GET /sig/policies p50 is ${policies.ratio_p50?.toFixed(2)} x the bare route (target <= 1.5)`);
    }
    const result = {
      machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, node: process.version, platform: `${os.platform()} ${os.release()}` },
      date: new Date().toISOString(),
      runtime: "wrangler dev (local workerd)",
      trees: Object.fromEntries(trees),
      tenants: TENANTS,
      seconds_per_phase: SECONDS,
      warmup_seconds: WARMUP_SECONDS,
      rows,
    };
    mkdirSync(path.dirname(OUT), { recursive: true });
    writeFileSync(OUT, `${JSON.stringify(result, null, 2)}\n`);
    console.log(`wrote ${path.relative(process.cwd(), OUT)}`);
    if (rows.some((r) => r.errors > 0)) process.exitCode = 1;
  } finally {
    await stopAll();
  }
}

await main();
