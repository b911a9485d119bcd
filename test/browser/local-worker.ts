/**
 * Starts the Worker locally (browser tests, bench:api): a fresh temporary state directory with every D1
 * migration applied, `wrangler dev` on a free port (and a free inspector port), and a way to stop it
 * that ends the whole process group and removes the state.
 */
import { spawn, execFile, type ChildProcess } from "node:child_process";
import { closeSync, mkdtempSync, openSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);
const ROOT = path.join(import.meta.dirname, "..", "..");
const WRANGLER = path.join(ROOT, "node_modules", ".bin", "wrangler");
const DATABASES = ["countersign-directory", "countersign-us", "countersign-eu"];

export interface LocalWorker {
  base: string;
  operatorToken: string;
  stop(): Promise<void>;
}

export interface LocalWorkerOptions {
  /** The tree of this repository to run (default: this one), e.g. the code before a change. */
  root?: string;
  /** Where wrangler's output goes (it outlives the state); default: kept in memory for the error message. */
  logFile?: string;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

const quietEnv = { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" };

export async function startLocalWorker(vars: Record<string, string> = {}, opts: LocalWorkerOptions = {}): Promise<LocalWorker> {
  const root = opts.root ?? ROOT;
  const state = mkdtempSync(path.join(tmpdir(), "countersign-browser-"));
  try {
    for (const db of DATABASES) {
      await run(WRANGLER, ["d1", "migrations", "apply", db, "--local", "--persist-to", state], { cwd: root, env: quietEnv });
    }
  } catch (err) {
    rmSync(state, { recursive: true, force: true });
    throw err;
  }
  const port = await freePort();
  const inspector = await freePort();
  const operatorToken = vars.OPERATOR_TOKEN ?? `op_browser_${Math.random().toString(36).slice(2)}`;
  const args = [
    "dev",
    "--port",
    String(port),
    "--ip",
    "127.0.0.1",
    "--inspector-port",
    String(inspector),
    "--persist-to",
    state,
    "--show-interactive-dev-session=false",
  ];
  for (const [k, v] of Object.entries({ OPERATOR_TOKEN: operatorToken, ...vars })) args.push("--var", `${k}:${v}`);
  // Its own process group, so stopping it ends workerd too.
  const out = opts.logFile ? openSync(opts.logFile, "w") : "pipe";
  const child: ChildProcess = spawn(WRANGLER, args, { cwd: root, env: quietEnv, detached: true, stdio: ["ignore", out, out] });
  if (typeof out === "number") closeSync(out);
  let log = opts.logFile ? `(see ${opts.logFile})` : "";
  child.stdout?.on("data", (d) => (log += d));
  child.stderr?.on("data", (d) => (log += d));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  const stop = async () => {
    if (child.exitCode === null && child.pid) {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        // Already gone.
      }
      const killer = setTimeout(() => {
        try {
          process.kill(-child.pid!, "SIGKILL");
        } catch {
          // Already gone.
        }
      }, 5000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(state, { recursive: true, force: true });
  };

  const base = `http://127.0.0.1:${port}`;
  const until = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`wrangler dev exited early:\n${log}`);
    }
    try {
      const res = await fetch(`${base}/health`);
      if (res.ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > until) {
      await stop();
      throw new Error(`wrangler dev did not answer within 120 s:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return { base, operatorToken, stop };
}
