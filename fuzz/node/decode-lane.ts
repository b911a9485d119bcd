/**
 * Runs document cases in a worker thread, one at a time, under a watchdog: a case that has not
 * answered within `hangMs` (or pushes the process past `rssCeilingBytes`) gets the thread terminated
 * and reported, and a fresh thread takes the next case. The thread's heap is capped by resourceLimits,
 * so a heap blow-up ends the thread (ERR_WORKER_OUT_OF_MEMORY) instead of the machine.
 */
import { Worker } from "node:worker_threads";
import type { DecodeOutcome } from "../core/types";
import { RssSampler } from "./memory";

export type LaneOutcome = DecodeOutcome | { kind: "hang" } | { kind: "memory_blowup" } | { kind: "thread_crash"; error: string };

export interface LaneResult {
  outcome: LaneOutcome;
  ms: number;
  /** The larger of: process RSS growth during the case, and what the case left allocated in the thread. */
  memBytes: number;
}

export interface DecodeLaneOptions {
  hangMs: number;
  heapLimitMb: number;
  rssCeilingBytes: number;
}

export class DecodeLane {
  #worker: Worker | null = null;
  #sampler = new RssSampler(() => [process.pid]);
  #nextId = 1;
  restarts = 0;
  constructor(private opts: DecodeLaneOptions) {}

  get peakRss(): number {
    return this.#sampler.runPeak;
  }

  async #spawn(): Promise<Worker> {
    const w = new Worker(new URL("./boot.mjs", import.meta.url), {
      resourceLimits: { maxOldGenerationSizeMb: this.opts.heapLimitMb, maxYoungGenerationSizeMb: 64 },
      stdout: true,
      stderr: true,
    });
    // Third-party decoders write to stdout/stderr on damaged input; drain and drop it.
    w.stdout.resume();
    w.stderr.resume();
    await new Promise<void>((resolve, reject) => {
      const onMsg = (m: { ready?: boolean }) => {
        if (m.ready) {
          w.off("message", onMsg);
          resolve();
        }
      };
      w.on("message", onMsg);
      w.once("error", reject);
    });
    return w;
  }

  async run(bytes: Uint8Array): Promise<LaneResult> {
    this.#worker ??= await this.#spawn();
    const w = this.#worker;
    const id = this.#nextId++;
    const rss0 = this.#sampler.open();
    const t0 = performance.now();
    const result = await new Promise<{ outcome: LaneOutcome; heldBytes: number }>((resolve) => {
      let done = false;
      const finish = (outcome: LaneOutcome, heldBytes = 0, kill = false) => {
        if (done) return;
        done = true;
        clearTimeout(watchdog);
        clearInterval(ceiling);
        w.off("message", onMsg);
        w.off("error", onError);
        w.off("exit", onExit);
        if (kill) {
          this.#worker = null;
          this.restarts++;
          void w.terminate();
        }
        resolve({ outcome, heldBytes });
      };
      const onMsg = (m: { id: number; outcome: DecodeOutcome; heldBytes: number }) => m.id === id && finish(m.outcome, m.heldBytes);
      const onError = (err: Error) => {
        const oom = (err as { code?: string }).code === "ERR_WORKER_OUT_OF_MEMORY";
        finish(oom ? { kind: "memory_blowup" } : { kind: "thread_crash", error: String(err).slice(0, 300) }, 0, true);
      };
      const onExit = () => finish({ kind: "thread_crash", error: "the thread exited" }, 0, true);
      const watchdog = setTimeout(() => finish({ kind: "hang" }, 0, true), this.opts.hangMs);
      const ceiling = setInterval(() => {
        if (this.#sampler.sample() - rss0 > this.opts.rssCeilingBytes) finish({ kind: "memory_blowup" }, 0, true);
      }, 25);
      w.on("message", onMsg);
      w.once("error", onError);
      w.once("exit", onExit);
      w.postMessage({ id, bytes });
    });
    const ms = performance.now() - t0;
    const memBytes = Math.max(result.heldBytes, this.#sampler.windowPeak() - rss0);
    return { outcome: result.outcome, ms, memBytes };
  }

  async close(): Promise<void> {
    this.#sampler.stop();
    await this.#worker?.terminate();
    this.#worker = null;
  }
}
