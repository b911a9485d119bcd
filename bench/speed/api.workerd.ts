/**
 * The API's hot path in-process (the "api" section of `npm run bench:speed`): the same routes as
 * `npm run bench:api` (bench/api.ts), called through the Worker's own fetch in workerd, without the HTTP
 * hop of wrangler dev. Requests of the routes are interleaved round by round, paced at ROUNDS_PER_S, with
 * the organisations taken in turn so that no tenant passes its 20/s bucket.
 *
 * workerd's clock advances only across I/O, so one request's time is what it waited on (D1, Durable
 * Objects, the service's own fetch). Under the test pool every call also pays the pool's own overhead
 * (tens of ms on a busy machine, the bare route included), which flattens the ratios: bench:api (real
 * HTTP to wrangler dev) is the figure of record; this section only tracks it beside the pipeline stages.
 */
import { exports } from "cloudflare:workers";
import { it } from "vitest";
import { checkForm, enrolWriter, postCheck } from "../../test/helpers/checks";
import { signaturePng } from "../../test/helpers/signatures";
import { BASE, createOrg, type CreatedOrg } from "../../test/helpers/tenant";

const TENANTS = 6;
const ROUNDS = 100;
const ROUNDS_PER_S = 20;
/** Every CHECK_EVERY-th round also posts a synchronous check (it costs tens of ms of CPU). */
const CHECK_EVERY = 5;
const WARMUP_ROUNDS = 20;
const WRITER = 11;

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

async function timed(fn: () => Promise<Response>, expect: number): Promise<number> {
  const t = performance.now();
  const res = await fn();
  await res.arrayBuffer();
  const ms = performance.now() - t;
  if (res.status !== expect) throw new Error(`expected ${expect}, got ${res.status}`);
  return ms;
}

it("api", async () => {
  const tenants: (CreatedOrg & { jobId: string })[] = [];
  for (let i = 0; i < TENANTS; i++) {
    const org = await createOrg({ name: `Bench ${i}` });
    await enrolWriter(org.apiKey, "alice", WRITER, 3);
    const res = await postCheck(
      org.apiKey,
      checkForm({ items: [{ file: "doc", subject_reference: "alice", input_type: "signature_image" }] }, { doc: signaturePng(WRITER, 5) }),
    );
    tenants.push({ ...org, jobId: ((await res.json()) as { job_id: string }).job_id });
  }
  const get = (path: string, key?: string) => () =>
    exports.default.fetch(BASE + path, { headers: key ? { Authorization: `Bearer ${key}` } : {} });
  const samples: Record<string, number[]> = {
    bare: [],
    "GET /sig/policies": [],
    "GET /sig/checks/{job_id}": [],
    "GET pipeline only": [],
    "POST /sig/checks (sync)": [],
  };
  // The access log's line per request would go through vitest's console capture (a round trip to Node
  // each); in production it goes to Workers Logs. Silenced while measuring, restored for the report.
  const log = { info: console.info, log: console.log, warn: console.warn };
  console.log = console.info = console.warn = () => {};
  const started = performance.now();
  for (let round = 0; round < ROUNDS + WARMUP_ROUNDS; round++) {
    const t = tenants[round % TENANTS];
    const keep = round >= WARMUP_ROUNDS;
    const bare = await timed(get("/__bench/bare"), 200);
    const policies = await timed(get("/sig/policies", t.apiKey), 200);
    const job = await timed(get(`/sig/checks/${t.jobId}`, t.apiKey), 200);
    const pipeline = await timed(get("/sig/__bench/pipeline", t.apiKey), 200);
    if (keep) {
      samples.bare.push(bare);
      samples["GET /sig/policies"].push(policies);
      samples["GET /sig/checks/{job_id}"].push(job);
      samples["GET pipeline only"].push(pipeline);
    }
    if (round % CHECK_EVERY === 0) {
      const form = checkForm(
        { items: [{ file: "doc", subject_reference: "alice", input_type: "signature_image" }] },
        { doc: signaturePng(WRITER, 6 + (round % 4)) },
      );
      const ms = await timed(() => postCheck(t.apiKey, form), 200);
      if (keep) samples["POST /sig/checks (sync)"].push(ms);
    }
    const due = started + ((round + 1) * 1000) / ROUNDS_PER_S;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }

  Object.assign(console, log);
  const bare50 = percentile(samples.bare, 50);
  const bare99 = percentile(samples.bare, 99);
  const ratio = (x: number, b: number) => (b > 0 ? Math.round((x / b) * 100) / 100 : null);
  const rows = Object.entries(samples).map(([route, ms]) => {
    const p50 = percentile(ms, 50);
    const p99 = percentile(ms, 99);
    return {
      route,
      n: ms.length,
      p50_ms: Math.round(p50 * 100) / 100,
      p99_ms: Math.round(p99 * 100) / 100,
      ratio_p50: route === "bare" ? null : ratio(p50, bare50),
      ratio_p99: route === "bare" ? null : ratio(p99, bare99),
    };
  });
  console.log("\nAPI hot path in-process (workerd, exports.default.fetch; ratios to the bare Hono route)");
  console.log(
    `${"route".padEnd(26)} ${"n".padStart(4)} ${"p50 ms".padStart(8)} ${"p99 ms".padStart(8)} ${"p50/bare".padStart(9)} ${"p99/bare".padStart(9)}`,
  );
  for (const r of rows) {
    console.log(
      `${r.route.padEnd(26)} ${String(r.n).padStart(4)} ${r.p50_ms.toFixed(2).padStart(8)} ${r.p99_ms.toFixed(2).padStart(8)} ${(r.ratio_p50?.toFixed(2) ?? "-").padStart(9)} ${(r.ratio_p99?.toFixed(2) ?? "-").padStart(9)}`,
    );
  }
  console.log(`BENCH_JSON ${JSON.stringify({ section: "api", rows })}`);
});
