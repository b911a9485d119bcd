/**
 * Simulates a subject stored under the previous feature version (docs/feature-upgrades.md): each live
 * reference's features in D1 and the stored model in R2 are rewritten to FEATURE_VERSION - 1, with a
 * vector of another length, as an older core would have left them. Used by the feature-upgrade tests and
 * the feature-upgrade section of `npm run bench:speed`.
 */
import { env } from "cloudflare:workers";
import { FEATURE_VERSION, encodeVector } from "../../src/verify/features";

export const OLD_VERSION = FEATURE_VERSION - 1;
/** What an older core's vector could look like: another length, so it cannot pass for a current one. */
export const OLD_VECTOR = encodeVector(new Float32Array(16).fill(0.5));

interface StoredFeatures {
  signature: { version: number; vector: string };
  variantRow: number[] | null;
}

/** Rewrites the subject's live references and stored model as the previous version; returns each reference's features as stored before. */
export async function makeStale(
  orgId: string,
  subject: string,
  db: D1Database = env.DB_US,
  files: R2Bucket = env.FILES_US,
): Promise<Map<string, string>> {
  const before = new Map<string, string>();
  const rows = await db
    .prepare("SELECT ref_id, features FROM subject_references WHERE org_id = ? AND subject_reference = ? AND status = 'enrolled'")
    .bind(orgId, subject)
    .all<{ ref_id: string; features: string | null }>();
  const updates: D1PreparedStatement[] = [];
  for (const r of rows.results) {
    if (!r.features) continue;
    before.set(r.ref_id, r.features);
    const f = JSON.parse(r.features) as StoredFeatures;
    f.signature.version = OLD_VERSION;
    f.signature.vector = OLD_VECTOR;
    updates.push(
      db
        .prepare("UPDATE subject_references SET features = ? WHERE org_id = ? AND subject_reference = ? AND ref_id = ?")
        .bind(JSON.stringify(f), orgId, subject, r.ref_id),
    );
  }
  if (updates.length > 0) await db.batch(updates);
  const row = await db
    .prepare("SELECT model_key FROM subjects WHERE org_id = ? AND subject_reference = ?")
    .bind(orgId, subject)
    .first<{ model_key: string | null }>();
  if (row?.model_key) {
    const obj = await files.get(row.model_key);
    const stored = (await obj!.json()) as { model: { featureVersion: number; refs: { features: StoredFeatures["signature"] }[] } };
    stored.model.featureVersion = OLD_VERSION;
    for (const r of stored.model.refs) {
      r.features.version = OLD_VERSION;
      r.features.vector = OLD_VECTOR;
    }
    await files.put(row.model_key, JSON.stringify(stored));
  }
  return before;
}
