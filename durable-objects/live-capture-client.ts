import type { Env } from "../src/env";
import type { LiveCapture } from "./live-capture";

/** The LiveCapture object holding an organisation's live connections. */
export function liveCapture(env: Pick<Env, "LIVE_CAPTURE">, orgId: string): DurableObjectStub<LiveCapture> {
  return env.LIVE_CAPTURE.get(env.LIVE_CAPTURE.idFromName(`live:org:${orgId}`));
}
