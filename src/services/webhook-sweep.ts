import type { Env } from "../env";
import type { RegionName } from "../domain/tenancy";
import { regionStore } from "../storage/regions";
import { webhooksRepo } from "../storage/webhooks";
import { requeueOverdue } from "./webhooks";

/** The delivery log, finished deliveries and their events are kept this long. */
export const WEBHOOK_LOG_RETENTION_MS = 30 * 24 * 3600 * 1000;
const REGIONS: RegionName[] = ["us", "eu"];

/**
 * The scheduled webhook sweep of every region: drops what is older than 30 days, and re-sends the
 * queue message of a delivery whose message was lost (a consumer died between storing the next
 * attempt's time and sending its message).
 */
export async function sweepWebhooks(env: Env, now: Date): Promise<{ dropped: number; requeued: number }> {
  let dropped = 0;
  let requeued = 0;
  for (const region of REGIONS) {
    const { db } = regionStore(env, region);
    dropped += await webhooksRepo(db).sweep(new Date(now.getTime() - WEBHOOK_LOG_RETENTION_MS).toISOString());
    requeued += await requeueOverdue(env, db, now);
  }
  return { dropped, requeued };
}
