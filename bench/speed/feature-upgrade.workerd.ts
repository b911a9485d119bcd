/**
 * What the first check of a subject after a change of the core's features costs (the "feature-upgrade"
 * section of `npm run bench:speed`; docs/feature-upgrades.md). For subjects of 3 and 10 references, a
 * synchronous check (POST /sig/checks through the Worker's fetch) is timed on the subject as enrolment
 * left it ("current") and right after its stored features were rewritten to the previous version
 * (test/helpers/stale-features.ts), so that the check extracts every reference again and rebuilds the
 * model ("first after upgrade"). The two are interleaved sample by sample, so machine noise hits both alike.
 *
 * Reported per arm: the median CPU time of the workerd processes per check (from /proc through BENCH_HOST,
 * in 10 ms ticks; the local D1 and R2 run in workerd too, for both arms alike) and the median wall time,
 * then the ratio of the medians and the extra CPU per reference.
 */
import { env, exports } from "cloudflare:workers";
import { it } from "vitest";
import { checkForm } from "../../test/helpers/checks";
import { referencesForm, signaturePng } from "../../test/helpers/signatures";
import { makeStale } from "../../test/helpers/stale-features";
import { BASE, createOrg } from "../../test/helpers/tenant";
import { liveEngine } from "../../src/services/engine-live";
import { staleReferences } from "../../src/services/feature-upgrade";
import { subjectsRepo } from "../../src/storage/subjects";

const RUNS = 9;
const WRITER = 11;

interface BenchHost {
  fetch(url: string): Promise<Response>;
}
const host = (env as unknown as { BENCH_HOST: BenchHost }).BENCH_HOST;

async function workerdCpuMs(): Promise<number> {
  const cpu = (await (await host.fetch("http://bench-host/cpu")).json()) as { workerd_ms: number };
  return cpu.workerd_ms;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function enrol(key: string, subject: string, count: number): Promise<void> {
  // At most 3 references per request are enrolled within it.
  for (let from = 0; from < count; from += 3) {
    const files: Record<string, Uint8Array> = {};
    for (let i = from; i < Math.min(count, from + 3); i++) files[`r${i}`] = signaturePng(WRITER, i);
    const res = await exports.default.fetch(`${BASE}/sig/subjects/${subject}/references`, {
      method: "PUT",
      headers: { Authorization: `Bearer ${key}` },
      body: referencesForm(files),
    });
    if (res.status !== 200) throw new Error(`enrolment: ${res.status} ${await res.text()}`);
  }
}

/** One synchronous check of the subject: workerd CPU ms and wall ms; throws unless it decided. */
async function timedCheck(key: string, subject: string, n: number): Promise<{ cpu: number; wall: number }> {
  const form = checkForm({ items: [{ file: "doc", subject_reference: subject }] }, { doc: signaturePng(WRITER, 20 + (n % 5)) });
  const cpu0 = await workerdCpuMs();
  const t = performance.now();
  const res = await exports.default.fetch(`${BASE}/sig/checks`, {
    method: "POST",
    headers: { Authorization: `Bearer ${key}`, "Idempotency-Key": `k-${crypto.randomUUID()}` },
    body: form,
  });
  const body = (await res.json()) as { decision: string | null; errors: unknown[] };
  const wall = performance.now() - t;
  const cpu = (await workerdCpuMs()) - cpu0;
  if (res.status !== 200 || body.decision === null) throw new Error(`check: ${res.status} ${JSON.stringify(body)}`);
  return { cpu, wall };
}

it("feature-upgrade", async () => {
  const org = await createOrg({ name: "Bench feature upgrade" });
  const rows: Record<string, unknown>[] = [];
  const log = { info: console.info, log: console.log, warn: console.warn };
  console.log = console.info = console.warn = () => {};
  for (const refs of [3, 10]) {
    const subject = `fu-${refs}`;
    await enrol(org.apiKey, subject, refs);
    await timedCheck(org.apiKey, subject, 0); // warm up
    const current: { cpu: number; wall: number }[] = [];
    const first: { cpu: number; wall: number }[] = [];
    for (let i = 0; i < RUNS; i++) {
      current.push(await timedCheck(org.apiKey, subject, i));
      await makeStale(org.orgId, subject);
      first.push(await timedCheck(org.apiKey, subject, i));
    }
    const c = { cpu: median(current.map((x) => x.cpu)), wall: median(current.map((x) => x.wall)) };
    const f = { cpu: median(first.map((x) => x.cpu)), wall: median(first.map((x) => x.wall)) };
    rows.push({
      references: refs,
      runs: RUNS,
      current_cpu_ms: c.cpu,
      first_cpu_ms: f.cpu,
      cpu_ratio: Math.round((f.cpu / c.cpu) * 100) / 100,
      extra_cpu_ms_per_reference: Math.round(((f.cpu - c.cpu) / refs) * 10) / 10,
      current_wall_ms: Math.round(c.wall),
      first_wall_ms: Math.round(f.wall),
      wall_ratio: Math.round((f.wall / c.wall) * 100) / 100,
    });
  }
  // What every check of a current subject now adds: reading each live reference's feature version.
  const refRows = await subjectsRepo(env.DB_US).references(org.orgId, "fu-10");
  const engine = liveEngine();
  const perCheck: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    let n = 0;
    const t = performance.now();
    do {
      if (staleReferences(engine, refRows).length !== 0) throw new Error("the subject should be current");
      n++;
      // workerd's clock advances across I/O only: a cheap call to the host lets it tick.
      if (n % 200 === 0) await workerdCpuMs();
    } while (performance.now() - t < 200);
    perCheck.push((performance.now() - t) / n);
  }
  const staleCheckUs = Math.round((median(perCheck) / refRows.length) * 1000 * 10) / 10;
  Object.assign(console, log);
  console.log(
    `\nReading the feature version of each live reference (every check): ${staleCheckUs} us per reference (${refRows.length} references, median of ${RUNS})`,
  );
  console.log("\nFirst check of a subject after a feature change vs a check of a current subject (medians, interleaved)");
  console.log("refs  cpu current  cpu first  ratio  extra cpu/ref  wall current  wall first  ratio");
  for (const r of rows as Record<string, number>[]) {
    console.log(
      `${String(r.references).padStart(4)}  ${r.current_cpu_ms.toFixed(0).padStart(8)} ms ${r.first_cpu_ms.toFixed(0).padStart(7)} ms ${r.cpu_ratio.toFixed(2).padStart(6)} ${r.extra_cpu_ms_per_reference.toFixed(1).padStart(11)} ms ${String(r.current_wall_ms).padStart(9)} ms ${String(r.first_wall_ms).padStart(8)} ms ${r.wall_ratio.toFixed(2).padStart(6)}`,
    );
  }
  rows.push({ staleness_check_us_per_reference: staleCheckUs, references: refRows.length, runs: RUNS });
  console.log(`BENCH_JSON ${JSON.stringify({ section: "feature-upgrade", rows })}`);
});
