// `npm run bench:speed [-- <vitest args, e.g. a file filter>]`: runs the workerd speed benchmarks
// (bench/speed/vitest.config.ts, its `include` list) through vitest, echoes their output as it comes, and
// collects every `BENCH_JSON {"section": ..., "rows": [...]}` line the bench files print into
// bench/results/speed.json: { machine, date, args, sections: { <section>: rows } }.
//
// A run limited to some files writes only the sections those files printed (`args` says which run it was).
// BENCH_SPEED_JSON=<file> writes elsewhere. The exit code is vitest's; the JSON is written either way, with
// whatever sections were printed before a failure.
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

const root = path.join(import.meta.dirname, "..");
const out = process.env.BENCH_SPEED_JSON ?? path.join(root, "bench", "results", "speed.json");
const args = process.argv.slice(2);
const MARK = "BENCH_JSON ";

const loadBefore = os.loadavg();
const startedAt = new Date();
const vitest = path.join(root, "node_modules", ".bin", "vitest");
const child = spawn(vitest, ["run", "--config", "bench/speed/vitest.config.ts", ...args], {
  cwd: root,
  stdio: ["ignore", "pipe", "pipe"],
  env: { ...process.env, ...(process.stdout.isTTY ? { FORCE_COLOR: "1" } : {}) },
});

/** section -> rows, in the order the sections were printed. */
const sections = {};
const problems = [];

/** Echo a stream line by line and pick out the machine lines (they may follow ANSI codes or a prefix). */
function follow(stream, sink) {
  let pending = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk) => {
    sink.write(chunk);
    pending += chunk;
    let nl = pending.indexOf("\n");
    while (nl >= 0) {
      take(pending.slice(0, nl));
      pending = pending.slice(nl + 1);
      nl = pending.indexOf("\n");
    }
  });
  stream.on("end", () => {
    if (pending) take(pending);
  });
}

function take(line) {
  const at = line.indexOf(MARK);
  if (at < 0) return;
  try {
    const parsed = JSON.parse(line.slice(at + MARK.length).trim());
    if (typeof parsed?.section !== "string" || !Array.isArray(parsed.rows)) throw new Error("no section name or rows array");
    if (sections[parsed.section]) problems.push(`section "${parsed.section}" was printed more than once; the last one is kept`);
    sections[parsed.section] = parsed.rows;
  } catch (err) {
    problems.push(`unreadable BENCH_JSON line (${err instanceof Error ? err.message : String(err)}): ${line.slice(at, at + 120)}`);
  }
}

follow(child.stdout, process.stdout);
follow(child.stderr, process.stderr);

const code = await new Promise((resolve) => child.on("close", (c, signal) => resolve(c ?? (signal ? 1 : 0))));

const cpus = os.cpus();
const result = {
  machine: {
    host: os.hostname(),
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    cpu: cpus[0]?.model ?? "unknown",
    cores: cpus.length,
    memory_gb: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    // Other work on the machine skews every figure: the load before and after the run says how much.
    load_average_before: loadBefore.map((v) => Math.round(v * 100) / 100),
    load_average_after: os.loadavg().map((v) => Math.round(v * 100) / 100),
  },
  date: startedAt.toISOString(),
  seconds: Math.round((Date.now() - startedAt.getTime()) / 100) / 10,
  args,
  exit_code: code,
  sections,
  ...(problems.length > 0 ? { problems } : {}),
};
mkdirSync(path.dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
for (const p of problems) console.error(`bench:speed: ${p}`);
console.log(
  `\nbench:speed: ${Object.keys(sections).length} section(s) (${Object.keys(sections).join(", ") || "none"}) written to ${path.relative(root, out)}`,
);
process.exit(code);
