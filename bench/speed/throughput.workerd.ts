/**
 * Queued job throughput (issue 15: >= 30 items/s on 2 cores), in workerd with the whole service: an
 * organisation with two enrolled subjects, then ONE queued check job of 100 signature scans through
 * POST /sig/checks, timed from the 202 until the Job DO reports the job completed. Everything in between
 * is the real path: the check queue (local Queues, batches as wrangler.toml configures them), the
 * consumer, D1, R2, the Job and TenantGate DOs, crop encoding and webhook emission.
 *
 * Inputs: scans of the development sets (/work/shared/datasets, read at bench time through the
 * BENCH_HOST binding, never copied): 50 of a Dutch writer (SigComp2011, about 700 x 360 grey) and 50 of a
 * Bengali writer (BHSig260, about 1000 x 290 binarised), genuine and skilled forgeries, each compared
 * with its writer's 4 enrolled references. Without the data sets, generated signatures stand in (said
 * in the output).
 *
 * CPU: the CPU time (user + system) of the workerd process(es) from just before the POST until the job
 * completed (the job's whole life: the request, the inbox writes, the queue), read from /proc by
 * the Node host (bench/speed/bench-host.ts), divided by the items. It covers everything local workerd
 * does for the job: our Worker, the DOs, and the D1/R2/Queues simulators (which in production are other
 * machines' work). The Node process's CPU (vitest, the Miniflare loopback) is reported beside it.
 *
 * `npm run bench:speed -- throughput`; not part of `npm test`.
 */
import { env } from "cloudflare:workers";
import { it } from "vitest";
import { jobObject } from "../../durable-objects/job-client";
import { api, createOrg } from "../../test/helpers/tenant";
import { checkForm, postCheck } from "../../test/helpers/checks";
import { referencesForm, signaturePng } from "../../test/helpers/signatures";

const ITEMS = 100;
const RUNS = 3;
const TARGET_ITEMS_PER_S = 30;

interface BenchHost {
  fetch(input: string): Promise<Response>;
}
const host = (env as unknown as { BENCH_HOST: BenchHost }).BENCH_HOST;

interface Cpu {
  available: boolean;
  workerd_ms: number;
  node_ms: number;
  cores: number;
}
async function cpu(): Promise<Cpu> {
  return (await host.fetch("http://bench-host/cpu")).json();
}

async function datasetFile(rel: string): Promise<Uint8Array | null> {
  const res = await host.fetch(`http://bench-host/dataset/${rel}`);
  return res.ok ? new Uint8Array(await res.arrayBuffer()) : null;
}

interface Writer {
  subject: string;
  references: Uint8Array[];
  /** Questioned scans: the writer's other genuine ones and forgeries of it. */
  questioned: Uint8Array[];
}

/** One writer of a data set: 4 genuine references, then everything else of the writer as questioned scans. */
async function datasetWriter(set: string, writer: string, subject: string): Promise<Writer | null> {
  const index = await datasetFile(`${set}/index.csv`);
  if (!index) return null;
  const rows = new TextDecoder()
    .decode(index)
    .split("\n")
    .slice(1)
    .map((l) => l.split(","))
    .filter((f) => f[1] === writer);
  const genuine = rows.filter((f) => f[2] === "genuine").map((f) => f[0]);
  const forged = rows.filter((f) => f[2] === "forgery").map((f) => f[0]);
  const load = async (paths: string[]) => (await Promise.all(paths.map((p) => datasetFile(`${set}/${p}`)))).filter((b) => b !== null);
  const references = await load(genuine.slice(0, 4));
  const questioned = await load([...genuine.slice(4), ...forged]);
  return references.length === 4 && questioned.length > 0 ? { subject, references, questioned } : null;
}

function generatedWriter(writer: number, subject: string): Writer {
  return {
    subject,
    references: [0, 1, 2, 3].map((v) => signaturePng(writer, v)),
    questioned: Array.from({ length: 20 }, (_, v) => signaturePng(v % 2 === 0 ? writer : writer + 1, 10 + v)),
  };
}

async function enrol(key: string, w: Writer): Promise<void> {
  // At most 3 references per request are enrolled within it.
  for (let from = 0; from < w.references.length; from += 3) {
    const files: Record<string, Uint8Array> = {};
    w.references.slice(from, from + 3).forEach((b, n) => {
      files[`r${from + n}`] = b;
    });
    const res = await api(`/sig/subjects/${w.subject}/references`, { method: "PUT", key, body: referencesForm(files) });
    if (res.status !== 200) throw new Error(`enrolment of ${w.subject}: ${res.status} ${await res.text()}`);
  }
}

/** `count` items alternating between the writers, each writer's questioned scans in turn. */
function jobForm(jobId: string, writers: Writer[], count: number): FormData {
  const items = [];
  const files: Record<string, Uint8Array> = {};
  for (let i = 0; i < count; i++) {
    const w = writers[i % writers.length];
    const file = `s${i}`;
    files[file] = w.questioned[Math.floor(i / writers.length) % w.questioned.length];
    items.push({ file, subject_reference: w.subject, input_type: "signature_image", reference: `bench-${i}` });
  }
  return checkForm({ job_id: jobId, items }, files);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

interface Run {
  submitMs: number;
  queueMs: number;
  itemsPerS: number;
  endToEndItemsPerS: number;
  workerdCpuMsPerItem: number;
  nodeCpuMsPerItem: number;
  coresBusy: number;
}

async function runJob(key: string, orgId: string, jobId: string, writers: Writer[], count = ITEMS): Promise<Run> {
  const form = jobForm(jobId, writers, count);
  // CPU is read before the POST, so CPU per item covers the job's whole life (taking the request in,
  // the inbox writes, the queue); the clock for items per second starts when the 202 arrives, because
  // the consumer starts on the first messages while the response is still on its way.
  const cpu0 = await cpu();
  const t0 = performance.now();
  const res = await postCheck(key, form, { idem: jobId });
  if (res.status !== 202) throw new Error(`job ${jobId}: ${res.status} ${await res.text()}`);
  const t1 = performance.now();
  await res.arrayBuffer();
  // The Job DO is the job's state of record; reading it is cheaper than GET /sig/checks (which would add
  // its own work to the measured window).
  const job = jobObject(env, orgId, jobId);
  for (;;) {
    const state = await job.state();
    if (state && ["completed", "failed", "rejected"].includes(state.status)) {
      if (state.status !== "completed") throw new Error(`job ${jobId} ended ${state.status}`);
      break;
    }
    if (performance.now() - t1 > 540_000) throw new Error(`job ${jobId} did not finish within 9 minutes`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const t2 = performance.now();
  const cpu1 = await cpu();
  // Every item has its stored outcome: a decision (none of these scans is an item error).
  const body = (await (await api(`/sig/checks/${jobId}?limit=500`, { key })).json()) as {
    completed_items: number;
    results: { decision: string | null; errors: { code: string }[] }[];
  };
  const undecided = body.results.filter((r) => r.decision === null);
  if (body.results.length !== count || undecided.length > 0) {
    throw new Error(`job ${jobId}: ${body.results.length} results, undecided: ${JSON.stringify(undecided.slice(0, 3))}`);
  }
  const queueMs = t2 - t1;
  return {
    submitMs: t1 - t0,
    queueMs,
    itemsPerS: count / (queueMs / 1000),
    endToEndItemsPerS: count / ((t2 - t0) / 1000),
    workerdCpuMsPerItem: (cpu1.workerd_ms - cpu0.workerd_ms) / count,
    nodeCpuMsPerItem: (cpu1.node_ms - cpu0.node_ms) / count,
    coresBusy: (cpu1.workerd_ms - cpu0.workerd_ms + cpu1.node_ms - cpu0.node_ms) / (t2 - t0),
  };
}

it("queued job throughput: 100 signature scans, 202 -> job completed", async () => {
  const org = await createOrg();
  const dutch = await datasetWriter("sigcomp2011-dutch", "001", "dutch-001");
  const bengali = await datasetWriter("bhsig260-bengali", "001", "bengali-001");
  const fromDatasets = dutch !== null && bengali !== null;
  const writers = fromDatasets ? [dutch, bengali] : [generatedWriter(41, "gen-41"), generatedWriter(61, "gen-61")];
  for (const w of writers) await enrol(org.apiKey, w);

  const probe = await cpu();
  // A first, small job warms the isolate (WASM compile, module caches) so the timed jobs compare alike.
  await runJob(org.apiKey, org.orgId, "warm-up", writers, 8).catch((err) => {
    throw new Error(`warm-up job failed: ${err}`);
  });
  const runs: Run[] = [];
  for (let r = 0; r < RUNS; r++) runs.push(await runJob(org.apiKey, org.orgId, `throughput-${r}`, writers));

  const m = {
    items_per_s: median(runs.map((r) => r.itemsPerS)),
    end_to_end_items_per_s: median(runs.map((r) => r.endToEndItemsPerS)),
    queue_s: median(runs.map((r) => r.queueMs)) / 1000,
    submit_ms: median(runs.map((r) => r.submitMs)),
    workerd_cpu_ms_per_item: median(runs.map((r) => r.workerdCpuMsPerItem)),
    node_cpu_ms_per_item: median(runs.map((r) => r.nodeCpuMsPerItem)),
    cores_busy: median(runs.map((r) => r.coresBusy)),
  };
  const inputs = fromDatasets ? "data sets: 50 SigComp2011 Dutch + 50 BHSig260 Bengali scans" : "generated signatures (data sets absent)";
  const lines = [
    `queued job throughput, ${ITEMS} items (${inputs}), ${RUNS} jobs after a warm-up, medians; machine: ${probe.cores} cores`,
    `  items per second (202 -> job completed) ${m.items_per_s.toFixed(1)}  (target >= ${TARGET_ITEMS_PER_S})  per job: ${runs.map((r) => r.itemsPerS.toFixed(1)).join(", ")}`,
    `  items per second (POST -> completed)   ${m.end_to_end_items_per_s.toFixed(1)}`,
    `  time in queue                          ${m.queue_s.toFixed(2)} s`,
    `  submit (POST -> 202)                   ${m.submit_ms.toFixed(0)} ms`,
    probe.available
      ? `  CPU per item, workerd                  ${m.workerd_cpu_ms_per_item.toFixed(1)} ms  (+ Node host ${m.node_cpu_ms_per_item.toFixed(1)} ms; ${m.cores_busy.toFixed(2)} cores busy)` +
        `\n  items per second per workerd core       ${(1000 / m.workerd_cpu_ms_per_item).toFixed(1)}  (1000 / CPU ms per item: what one core running only workerd would give; load-independent)`
      : "  CPU per item                           not measured (no /proc: not Linux)",
  ];
  console.log(`\n${lines.join("\n")}\n`);
  const row = (name: string, value: number, unit: string, target?: string) => ({
    name,
    value: Number(value.toFixed(2)),
    unit,
    ...(target ? { target } : {}),
  });
  console.log(
    "BENCH_JSON " +
      JSON.stringify({
        section: "throughput",
        rows: [
          row("queued job items per second", m.items_per_s, "items/s", `>= ${TARGET_ITEMS_PER_S}`),
          row("queued job items per second, POST to completed", m.end_to_end_items_per_s, "items/s"),
          row("queued job time, 202 to completed", m.queue_s, "s"),
          row("queued job submit, POST to 202", m.submit_ms, "ms"),
          ...(probe.available
            ? [
                row("CPU per item, workerd", m.workerd_cpu_ms_per_item, "ms"),
                row("CPU per item, Node host", m.node_cpu_ms_per_item, "ms"),
                row("cores busy while the job runs", m.cores_busy, "cores"),
                row("items per second per workerd core (1000 / CPU ms per item)", 1000 / m.workerd_cpu_ms_per_item, "items/s"),
              ]
            : []),
        ],
        items: ITEMS,
        jobs: RUNS,
        inputs: fromDatasets ? "datasets" : "generated",
        per_job_items_per_s: runs.map((r) => Number(r.itemsPerS.toFixed(2))),
      }),
  );
});
