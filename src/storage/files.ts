/**
 * The R2 layout. Every key starts with the organisation's prefix (so a region move copies them all) and
 * contains only validated identifiers (spec 2.1) and ids we mint, never raw caller input.
 */
import { orgFilePrefix } from "./regions";

export function subjectPrefix(orgId: string, subjectReference: string): string {
  return `${orgFilePrefix(orgId)}subjects/${subjectReference}/`;
}

/** The stored original of one upload of a reference; a replaced upload gets a new key. */
export function referenceFileKey(orgId: string, subjectReference: string, refId: string, uploadId: string): string {
  return `${subjectPrefix(orgId, subjectReference)}refs/${refId}/${uploadId}`;
}

/** The subject's reference model, built from one revision of its live references. */
export function modelKey(orgId: string, subjectReference: string, revision: number): string {
  return `${subjectPrefix(orgId, subjectReference)}model/${revision}.json`;
}

/** Deletes every object under a prefix (R2 lists at most 1000 keys a page). */
export async function deletePrefix(bucket: R2Bucket, prefix: string): Promise<number> {
  let deleted = 0;
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix, cursor, limit: 1000 });
    if (page.objects.length > 0) {
      await bucket.delete(page.objects.map((o) => o.key));
      deleted += page.objects.length;
    }
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return deleted;
}
