/**
 * The decoder lane's worker thread: decodes one case at a time and reports its outcome, time and the
 * memory it left allocated in this isolate. It runs under resourceLimits and the parent's watchdog,
 * so a hang or a heap blow-up kills this thread, not the run.
 */
import { parentPort } from "node:worker_threads";
import { decodeOutcome } from "../core/oracle";

// pdf-lib and utif2 print to the console on damaged input; the report says what matters.
console.log = console.warn = console.info = () => undefined;

function heapNow(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

parentPort!.on("message", async (msg: { id: number; bytes: Uint8Array }) => {
  const before = heapNow();
  const t0 = performance.now();
  const outcome = await decodeOutcome(msg.bytes);
  const ms = performance.now() - t0;
  const heldBytes = Math.max(0, heapNow() - before);
  parentPort!.postMessage({ id: msg.id, outcome, ms, heldBytes });
});
parentPort!.postMessage({ ready: true });
