/** Resident memory of this process and of the Worker runtime (workerd), sampled from /proc. */
import { readFileSync, readdirSync } from "node:fs";

export function rssOf(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Descendants of `root` whose command name contains `name` (workerd runs as a child of wrangler's Miniflare). */
export function descendantsNamed(root: number, name: string): number[] {
  const parent = new Map<number, number>();
  const comm = new Map<number, string>();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const close = stat.lastIndexOf(")");
      comm.set(Number(d), stat.slice(stat.indexOf("(") + 1, close));
      parent.set(Number(d), Number(stat.slice(close + 2).split(" ")[1]));
    } catch {
      // the process ended while we looked
    }
  }
  const isUnder = (p: number): boolean => {
    for (let q = parent.get(p), n = 0; q !== undefined && n < 64; q = parent.get(q), n++) if (q === root) return true;
    return false;
  };
  return [...comm.entries()].filter(([p, c]) => c.includes(name) && isUnder(p)).map(([p]) => p);
}

/**
 * Samples a set of processes every `everyMs`: the peak over a window (one case) and over the run.
 */
export class RssSampler {
  #timer: NodeJS.Timeout;
  #windowPeak = 0;
  runPeak = 0;
  constructor(
    private pids: () => number[],
    everyMs = 20,
  ) {
    this.#timer = setInterval(() => this.sample(), everyMs);
    this.#timer.unref();
  }
  sample(): number {
    const v = this.pids().reduce((n, p) => n + rssOf(p), 0);
    this.#windowPeak = Math.max(this.#windowPeak, v);
    this.runPeak = Math.max(this.runPeak, v);
    return v;
  }
  /** Starts a window; returns the current value. */
  open(): number {
    const v = this.sample();
    this.#windowPeak = v;
    return v;
  }
  windowPeak(): number {
    this.sample();
    return this.#windowPeak;
  }
  stop(): void {
    clearInterval(this.#timer);
  }
}
