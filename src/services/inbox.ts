/**
 * The job inbox in R2: a check's inputs, its per-item references and the crops of located signatures,
 * under `orgs/<org_id>/inbox/<job_id>/`. Everything in it expires after the tenant's inbox_ttl; the
 * scheduled sweep deletes expired inboxes, and readers treat an expired inbox as gone even before the
 * sweep has run.
 */
import type { Env } from "../env";
import type { RegionName, RegionStore } from "../domain/tenancy";
import { deletePrefix } from "../storage/files";
import { orgFilePrefix, regionStore } from "../storage/regions";
import { checksRepo } from "../storage/checks";

export function inboxPrefix(orgId: string, jobId: string): string {
  return `${orgFilePrefix(orgId)}inbox/${jobId}/`;
}

export function inputKey(orgId: string, jobId: string, index: number): string {
  return `${inboxPrefix(orgId, jobId)}items/${index}/input`;
}

export function itemReferenceKey(orgId: string, jobId: string, index: number, n: number): string {
  return `${inboxPrefix(orgId, jobId)}items/${index}/references/${n}`;
}

export function cropKey(orgId: string, jobId: string, index: number, signature: number): string {
  return `${inboxPrefix(orgId, jobId)}items/${index}/crops/${signature}.png`;
}

/** When a job's inbox expires. */
export function inboxExpiry(createdAt: Date, inboxTtlSeconds: number): string {
  return new Date(createdAt.getTime() + inboxTtlSeconds * 1000).toISOString();
}

export function inboxExpired(job: { inboxExpiresAt: string; inboxSweptAt: string | null }, now = Date.now()): boolean {
  return job.inboxSweptAt !== null || Date.parse(job.inboxExpiresAt) <= now;
}

const REGIONS: RegionName[] = ["us", "eu"];
const SWEEP_BATCH = 200;

/** Deletes the expired inboxes of one region; returns how many were swept. */
export async function sweepRegion(store: RegionStore, now: Date): Promise<number> {
  const repo = checksRepo(store.db);
  let swept = 0;
  for (;;) {
    const due = await repo.expiredInboxes(now.toISOString(), SWEEP_BATCH);
    if (due.length === 0) return swept;
    for (const job of due) {
      await deletePrefix(store.files, inboxPrefix(job.orgId, job.jobId));
      await repo.markInboxSwept(job.orgId, job.jobId, now.toISOString());
      swept++;
    }
    if (due.length < SWEEP_BATCH) return swept;
  }
}

/** The scheduled sweep over every region. */
export async function sweepInboxes(env: Env, now: Date): Promise<number> {
  let swept = 0;
  for (const region of REGIONS) swept += await sweepRegion(regionStore(env, region), now);
  return swept;
}
