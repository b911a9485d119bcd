/**
 * The Node side of the workerd benchmarks, reached from inside workerd through a service binding
 * (BENCH_HOST, a function binding in bench/speed/vitest.config.ts). workerd has neither a file system nor
 * a CPU clock of its own process, so this host answers:
 *   GET /cpu             CPU time used so far (user + system, ms) by the workerd processes this vitest
 *                        run started (every descendant of this Node process named workerd), and by
 *                        this Node process itself. Read from /proc (Linux); `available: false` elsewhere.
 *   GET /dataset/<path>  a file of the development data sets (COUNTERSIGN_DATASETS, default
 *                        /work/shared/datasets), read at bench time and never copied into the repository.
 */
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";

const DATASETS = process.env.COUNTERSIGN_DATASETS ?? "/work/shared/datasets";
const TICKS_PER_SECOND = 100; // USER_HZ: the unit of utime/stime in /proc/<pid>/stat on Linux.

interface ProcStat {
  pid: number;
  ppid: number;
  comm: string;
  cpuMs: number;
}

function readStat(pid: number): ProcStat | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // comm is in parentheses and may hold spaces; the fields after the last ")" are space separated.
    const close = text.lastIndexOf(")");
    const comm = text.slice(text.indexOf("(") + 1, close);
    const f = text
      .slice(close + 2)
      .trim()
      .split(" ");
    // After comm: state(0) ppid(1) ... utime(11) stime(12)
    return { pid, ppid: Number(f[1]), comm, cpuMs: ((Number(f[11]) + Number(f[12])) * 1000) / TICKS_PER_SECOND };
  } catch {
    return null;
  }
}

/** CPU ms of every workerd process below this one (the runtime the benchmark runs in). */
export function workerdCpuMs(): { ms: number; processes: number } | null {
  let pids: number[];
  try {
    pids = readdirSync("/proc")
      .filter((d) => /^\d+$/.test(d))
      .map(Number);
  } catch {
    return null;
  }
  const stats = pids.map(readStat).filter((s): s is ProcStat => s !== null);
  const children = new Map<number, ProcStat[]>();
  for (const s of stats) children.set(s.ppid, [...(children.get(s.ppid) ?? []), s]);
  let ms = 0;
  let processes = 0;
  const queue = [...(children.get(process.pid) ?? [])];
  while (queue.length > 0) {
    const s = queue.shift()!;
    if (s.comm.startsWith("workerd")) {
      ms += s.cpuMs;
      processes++;
    }
    queue.push(...(children.get(s.pid) ?? []));
  }
  return { ms, processes };
}

function nodeCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

export async function benchHost(request: Request): Promise<Response> {
  const url = new URL(request.url);
  if (url.pathname === "/cpu") {
    const w = workerdCpuMs();
    return Response.json({
      available: w !== null && w.processes > 0,
      workerd_ms: w?.ms ?? 0,
      workerd_processes: w?.processes ?? 0,
      node_ms: nodeCpuMs(),
      cores: (await import("node:os")).cpus().length,
    });
  }
  if (url.pathname.startsWith("/dataset/")) {
    const rel = decodeURIComponent(url.pathname.slice("/dataset/".length));
    const file = path.resolve(DATASETS, rel);
    if (!file.startsWith(path.resolve(DATASETS) + path.sep)) return new Response("outside the data sets", { status: 400 });
    try {
      return new Response(readFileSync(file));
    } catch {
      return new Response("not found", { status: 404 });
    }
  }
  return new Response("no such route", { status: 404 });
}
