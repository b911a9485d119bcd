/**
 * `npm run fuzz -- [--cases N] [--seed S] [--formats png,jpeg,tiff,pdf,multipart] [--no-worker]
 *                  [--time-budget MS] [--http-time-budget MS] [--memory-budget MB] [--hang MS] [--out DIR]
 *                  [--replay FILE [--replay FILE2 ...] [--through-worker]] [--suite]`
 *
 * Two lanes run side by side: documents go through the decoders in a watched worker thread; multipart
 * bodies go through the real Worker (workerd via wrangler). Findings are written under --out (fuzz/out,
 * gitignored) with a JSON sidecar each, and the run ends with a summary (also in --out/report.json).
 * Exit status 1 when there are findings.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { caseFormat, makeCase } from "../core/cases";
import { httpFinding } from "../core/oracle";
import { FUZZ_FORMATS, type FuzzCase, type FuzzFormat, type HttpRequestCase } from "../core/types";
import { buildSeeds, describeSeeds } from "../seeds/index";
import { SUITE_CASE_BOUND_MS, SUITE_SEED, pendingDefect, suiteCases } from "../core/suite";
import { multipartCase } from "../mutators/multipart";
import { rng } from "../../test/fixtures/random";
import { sniffFormat } from "../../src/verify/decode";
import { DecodeLane, type LaneResult } from "./decode-lane";
import { RssSampler } from "./memory";
import { Report } from "./report";
import { Service } from "./service";

interface Options {
  cases: number;
  seed: number;
  formats: FuzzFormat[];
  worker: boolean;
  timeBudgetMs: number;
  httpTimeBudgetMs: number;
  memoryBudgetMB: number;
  hangMs: number;
  httpHangMs: number;
  out: string;
  /** Files to replay, in order (Worker cases share one Worker, so an after-effect shows). */
  replay: string[];
  throughWorker: boolean;
  suite: boolean;
}

function parseArgs(argv: string[]): Options {
  const o: Options = {
    cases: 10_000,
    seed: 1,
    formats: [...FUZZ_FORMATS],
    worker: true,
    timeBudgetMs: 1000,
    httpTimeBudgetMs: 5000,
    memoryBudgetMB: 128,
    hangMs: 5_000,
    httpHangMs: 20_000,
    out: path.resolve(import.meta.dirname, "../out"),
    replay: [],
    throughWorker: false,
    suite: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === "--cases") o.cases = Number(val());
    else if (a === "--seed") o.seed = Number(val());
    else if (a === "--formats") o.formats = val().split(",") as FuzzFormat[];
    else if (a === "--no-worker") o.worker = false;
    else if (a === "--time-budget") o.timeBudgetMs = Number(val());
    else if (a === "--http-time-budget") o.httpTimeBudgetMs = Number(val());
    else if (a === "--memory-budget") o.memoryBudgetMB = Number(val());
    else if (a === "--hang") o.hangMs = Number(val());
    else if (a === "--http-hang") o.httpHangMs = Number(val());
    else if (a === "--out") o.out = path.resolve(val());
    else if (a === "--replay") o.replay.push(path.resolve(val()));
    else if (a === "--through-worker") o.throughWorker = true;
    else if (a === "--suite") o.suite = true;
    else throw new Error(`unknown option ${a} (see fuzz/node/main.ts or docs/fuzzing.md)`);
  }
  for (const f of o.formats) if (!FUZZ_FORMATS.includes(f)) throw new Error(`unknown format ${f}`);
  if (!Number.isInteger(o.cases) || o.cases < 1 || !Number.isFinite(o.seed)) throw new Error("--cases and --seed take numbers");
  return o;
}

const MB = 2 ** 20;

function laneOptions(o: Options) {
  // The thread's heap may reach a few times the memory budget before it is stopped; RSS growth past
  // 8x the budget is a blow-up and the thread is killed before it takes the machine with it.
  return { hangMs: o.hangMs, heapLimitMb: Math.max(256, o.memoryBudgetMB * 4), rssCeilingBytes: o.memoryBudgetMB * 8 * MB };
}

/** Judges one decoder result against the budgets; files a finding when it breaks one. */
function judgeDecode(report: Report, o: Options, c: FuzzCase, r: LaneResult): string {
  const out = r.outcome;
  report.record(
    c,
    "decode",
    r.ms,
    {
      ok: out.kind === "ok",
      typed: out.kind === "typed" ? out.code : undefined,
      status: out.kind === "ok" || out.kind === "typed" ? undefined : out.kind,
    },
    r.memBytes,
  );
  if (out.kind === "untyped") report.find(c, "decode", "untyped_error", out.error, r.ms, r.memBytes);
  else if (out.kind === "hang") report.find(c, "decode", "hang", `no result within ${o.hangMs} ms; the thread was terminated`, r.ms);
  else if (out.kind === "memory_blowup")
    report.find(c, "decode", "memory_blowup", "the thread ran out of heap or grew past the RSS ceiling; terminated", r.ms, r.memBytes);
  else if (out.kind === "thread_crash") report.find(c, "decode", "thread_crash", out.error, r.ms);
  else {
    if (r.ms > o.timeBudgetMs)
      report.find(
        c,
        "decode",
        "over_time_budget",
        `${Math.round(r.ms)} ms > ${o.timeBudgetMs} ms (${out.kind === "typed" ? out.code : "ok"})`,
        r.ms,
        r.memBytes,
      );
    if (r.memBytes > o.memoryBudgetMB * MB)
      report.find(c, "decode", "over_memory_budget", `${(r.memBytes / MB).toFixed(1)} MB > ${o.memoryBudgetMB} MB`, r.ms, r.memBytes);
  }
  return out.kind === "typed" ? out.code : out.kind;
}

/** The Worker lane's previous case: a 5xx can be the after-effect of it (a body left unread, a restart). */
let previousHttp: { index: number; mutations: string[]; status: string } | null = null;

async function judgeHttp(report: Report, o: Options, svc: Service, c: FuzzCase): Promise<string> {
  const status = await judgeHttpCase(report, o, svc, c);
  previousHttp = { index: c.index, mutations: c.mutations, status };
  return status;
}

async function judgeHttpCase(report: Report, o: Options, svc: Service, c: FuzzCase): Promise<string> {
  const http = c.http!;
  const res = await svc.send(http, `${o.seed}-${c.index}-${Date.now()}`, o.httpHangMs);
  report.record(c, "worker", res.ms, { status: res.status });
  if (res.status === "hang") {
    const alive = await svc.healthy();
    report.find(
      c,
      "worker",
      alive ? "hang" : "service_stalled",
      `${res.detail}${alive ? "" : "; /health did not answer either, the service was restarted"}`,
      res.ms,
    );
    if (!alive) await svc.restart();
    return "hang";
  }
  if (res.status === 0) {
    report.find(c, "worker", "connection_failed", res.detail, res.ms);
    if (!(await svc.healthy())) await svc.restart();
    return "connection_failed";
  }
  const kind = httpFinding(http, res.status, res.contentType);
  const after = previousHttp ? ` [previous case #${previousHttp.index} ${previousHttp.mutations.join(" ")} -> ${previousHttp.status}]` : "";
  if (kind) report.find(c, "worker", kind, `${res.status} ${res.detail}${kind === "5xx" ? after : ""}`, res.ms);
  else if (res.ms > o.httpTimeBudgetMs)
    report.find(c, "worker", "over_time_budget", `${Math.round(res.ms)} ms > ${o.httpTimeBudgetMs} ms (status ${res.status})`, res.ms);
  return String(res.status);
}

async function run(o: Options): Promise<number> {
  const t0 = Date.now();
  const corpus = await buildSeeds();
  console.log(`seeds: ${describeSeeds(corpus)}`);
  const report = new Report(o.out, o.seed);
  const lane = new DecodeLane(laneOptions(o));
  const wantHttp = o.formats.includes("multipart") && o.worker;
  const svc = wantHttp ? new Service() : null;
  let workerdSampler: RssSampler | null = null;
  let workerdStart = 0;
  if (svc) {
    process.stdout.write("starting the Worker (wrangler unstable_startWorker)... ");
    await svc.start();
    workerdSampler = new RssSampler(() => svc.pids(), 200);
    workerdStart = workerdSampler.open();
    console.log(`${svc.base}, workerd RSS ${(workerdStart / MB).toFixed(0)} MB`);
  }
  let done = 0;
  const progress = () => {
    if (++done % 500 === 0)
      console.log(`${done}/${o.cases} cases, ${report.findings.length} findings, ${Math.round((Date.now() - t0) / 1000)} s`);
  };
  let skipped = 0;
  const decodeLane = (async () => {
    for (let i = 0; i < o.cases; i++) {
      if (caseFormat(o.seed, i, o.formats) === "multipart") continue;
      const c = makeCase(corpus, o.seed, i, o.formats);
      judgeDecode(report, o, c, await lane.run(c.bytes));
      progress();
    }
  })();
  const httpLane = (async () => {
    for (let i = 0; i < o.cases; i++) {
      if (caseFormat(o.seed, i, o.formats) !== "multipart") continue;
      if (!svc) {
        skipped++;
        continue;
      }
      await judgeHttp(report, o, svc, makeCase(corpus, o.seed, i, o.formats));
      progress();
    }
  })();
  try {
    await Promise.all([decodeLane, httpLane]);
  } catch (err) {
    // A bug in the harness itself: stop the thread and workerd before failing.
    await lane.close();
    await svc?.stop();
    throw err;
  }
  const workerdEnd = workerdSampler?.sample() ?? 0;
  const summary = report.summary({
    command: `npm run fuzz -- ${process.argv.slice(2).join(" ")}`.trim(),
    skippedMultipart: skipped,
    budgets: {
      decodeMs: o.timeBudgetMs,
      httpMs: o.httpTimeBudgetMs,
      memoryMB: o.memoryBudgetMB,
      hangMs: o.hangMs,
      httpHangMs: o.httpHangMs,
    },
    peakMemoryMB: {
      fuzzerProcessRss: Math.round(lane.peakRss / MB),
      workerdRss: workerdSampler ? Math.round(workerdSampler.runPeak / MB) : null,
      workerdRssStartEnd: workerdSampler ? [Math.round(workerdStart / MB), Math.round(workerdEnd / MB)] : null,
    },
    threadRestarts: lane.restarts,
    serviceRestarts: svc?.restarts ?? 0,
  });
  workerdSampler?.stop();
  await lane.close();
  await svc?.stop();
  mkdirSync(o.out, { recursive: true });
  writeFileSync(path.join(o.out, "report.json"), JSON.stringify({ ...summary, findingsList: report.findings }, null, 2));
  print(summary);
  return report.findings.length ? 1 : 0;
}

function print(s: Record<string, any>): void {
  console.log("\n== fuzz summary ==");
  console.log(`command: ${s.command}`);
  console.log(`cases: ${s.cases} in ${s.seconds} s (seed ${s.runSeed}); findings: ${s.findings} ${JSON.stringify(s.findingsByKind)}`);
  for (const [f, v] of Object.entries(s.byFormat as Record<string, any>)) {
    console.log(
      `  ${f}: ${v.cases} cases, ${v.ok} decoded, typed ${JSON.stringify(v.typed)}${Object.keys(v.statuses).length ? `, statuses ${JSON.stringify(v.statuses)}` : ""}, ${v.findings} findings`,
    );
  }
  for (const [lane, v] of Object.entries(s.slowest as Record<string, any>)) {
    if (v) console.log(`slowest ${lane} case: ${v.ms.toFixed(1)} ms, #${v.index} ${v.seed} ${v.mutations.join(" ")} -> ${v.detail}`);
  }
  if (s.largestCaseMemory)
    console.log(
      `largest case memory: ${s.largestCaseMemory.detail}, #${s.largestCaseMemory.index} ${s.largestCaseMemory.seed} ${s.largestCaseMemory.mutations.join(" ")}`,
    );
  console.log(
    `peak memory (MB): ${JSON.stringify(s.peakMemoryMB)}; thread restarts ${s.threadRestarts}, service restarts ${s.serviceRestarts}`,
  );
  if (s.groups.length) console.log("findings by kind / format / seed and mutation family (count, example):");
  for (const g of s.groups)
    console.log(
      `  ${g.kind} ${g.format} ${g.family} x${g.count}: ${g.example.detail.slice(0, 160)}\n      ${g.example.mutations.join(" ")} -> ${g.example.file}`,
    );
}

/** Re-runs saved cases (a finding's file, its .json sidecar, or any document), in order. */
async function replay(o: Options): Promise<number> {
  let failed = false;
  let svc: Service | null = null;
  for (const given of o.replay) {
    const file = given.endsWith(".json") ? given.slice(0, -5) : given;
    const meta = existsSync(`${file}.json`)
      ? (JSON.parse(readFileSync(`${file}.json`, "utf8")) as {
          http?: Omit<HttpRequestCase, "body">;
          mutations?: string[];
          format?: string;
        })
      : null;
    const bytes = new Uint8Array(readFileSync(file));
    console.log(`${path.relative(process.cwd(), file)}${meta?.mutations ? `: ${meta.format} ${meta.mutations.join(" ")}` : ""}`);
    if (!meta?.http) {
      const lane = new DecodeLane(laneOptions(o));
      const r = await lane.run(bytes);
      await lane.close();
      console.log(
        `  decoders (${sniffFormat(bytes) ?? "unknown format"}): ${JSON.stringify(r.outcome)} in ${r.ms.toFixed(1)} ms, ${(r.memBytes / MB).toFixed(1)} MB`,
      );
      failed ||= !(r.outcome.kind === "ok" || r.outcome.kind === "typed") || r.ms > o.timeBudgetMs || r.memBytes > o.memoryBudgetMB * MB;
    }
    if (meta?.http || o.throughWorker) {
      const http: HttpRequestCase = meta?.http
        ? { ...meta.http, body: bytes }
        : { ...multipartCase("checks", bytes, rng(o.seed), true), expect: "well-formed" };
      if (!svc) {
        svc = new Service(1);
        await svc.start();
      }
      const res = await svc.send(http, `replay-${Date.now()}`, o.httpHangMs);
      // /health between two cases would be the next request itself: probe only after a hang or the last.
      const alive = res.status === "hang" || given === o.replay[o.replay.length - 1] ? await svc.healthy() : true;
      const kind = res.status === "hang" ? "hang" : res.status === 0 ? "connection_failed" : httpFinding(http, res.status, res.contentType);
      console.log(
        `  Worker (${http.route}): ${res.status} in ${res.ms.toFixed(0)} ms${kind ? ` -> finding ${kind}` : ""}${alive ? "" : "; /health afterwards: silent"}\n  ${res.detail.slice(0, 300)}`,
      );
      failed ||= kind !== null || !alive || res.ms > o.httpTimeBudgetMs;
    }
  }
  await svc?.stop();
  return failed ? 1 : 0;
}

/**
 * The in-suite subset, pending cases included, under the watchdog: which cases fail, and whether each
 * failing case is one a pending defect covers (the lead's check before enabling a defect's cases).
 */
async function suite(o: Options): Promise<number> {
  const corpus = await buildSeeds();
  const lane = new DecodeLane(laneOptions(o));
  const svc = o.worker && o.formats.includes("multipart") ? new Service() : null;
  if (svc) await svc.start();
  const report = new Report(path.join(o.out, "suite"), SUITE_SEED);
  let unexpected = 0;
  const byDefect: Record<string, { cases: number; failing: number }> = {};
  for (const f of o.formats) {
    if (f === "multipart" && !svc) continue;
    const { cases } = suiteCases(corpus, f, true);
    for (const c of cases) {
      const before = report.findings.length;
      if (f === "multipart") await judgeHttp(report, { ...o, httpTimeBudgetMs: SUITE_CASE_BOUND_MS.worker }, svc!, c);
      else judgeDecode(report, { ...o, timeBudgetMs: SUITE_CASE_BOUND_MS.decode }, c, await lane.run(c.bytes));
      const failed = report.findings.length > before;
      const defect = pendingDefect(c);
      if (defect) {
        const d = (byDefect[defect.id] ??= { cases: 0, failing: 0 });
        d.cases++;
        if (failed) d.failing++;
      } else if (failed) {
        unexpected++;
        const fnd = report.findings[report.findings.length - 1];
        console.log(`FAILS IN THE SUBSET: ${fnd.kind} #${c.index} ${c.seed} ${c.mutations.join(" ")}: ${fnd.detail.slice(0, 200)}`);
      }
    }
    console.log(`${f}: ${cases.length} cases run`);
  }
  await lane.close();
  await svc?.stop();
  for (const [id, d] of Object.entries(byDefect))
    console.log(`pending ${id}: ${d.failing} of ${d.cases} of its cases still fail${d.failing === 0 ? " (ready to enable)" : ""}`);
  console.log(`enabled cases failing: ${unexpected}`);
  return unexpected ? 1 : 0;
}

const opts = parseArgs(process.argv.slice(2));
const code = await (opts.replay.length ? replay(opts) : opts.suite ? suite(opts) : run(opts));
process.exit(code);
