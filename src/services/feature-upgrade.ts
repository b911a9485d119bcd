/**
 * Stored references survive a change of the core's features (docs/feature-upgrades.md). Features of one
 * FEATURE_VERSION cannot be compared with another's, so when the core changes, every live reference whose
 * stored features are of another version (enrolled anchors and learned references alike) is extracted
 * again from its stored file, through the engine exactly as enrolment does, and its row updated. The
 * caller (rebuildModel) then rebuilds the model from the updated rows.
 *
 *   staleReferences(engine, refs)             live references whose features another version extracted
 *   upgradeReferences(deps, org, subject, rows)  re-extracts them and writes the outcome in one transaction
 *
 * Cost: one extraction per stale live reference of the subject, once per subject and feature version
 * (anchors, plus at most the learning cap of learned references).
 */
import { upgradeFailureDetail } from "../domain/enrolment";
import type { RegionStore } from "../domain/tenancy";
import type { ReferenceRow } from "../storage/schema/subjects";
import { isVerifyError } from "../verify/types";
import type { VerificationEngine } from "./engine";

/** Live references (enrolled, with features) whose stored features were not extracted by the engine's current version. */
export function staleReferences(engine: Pick<VerificationEngine, "featuresCurrent">, refs: readonly ReferenceRow[]): ReferenceRow[] {
  return refs.filter((r) => r.status === "enrolled" && r.features !== null && !engine.featuresCurrent(parseFeatures(r.features)));
}

function parseFeatures(json: string): unknown {
  try {
    return JSON.parse(json);
  } catch {
    // Unreadable stored features are as unusable as outdated ones: extracting them again repairs them.
    return null;
  }
}

export interface UpgradeOutcome {
  /** ref_ids whose features were extracted again and stored. */
  upgraded: string[];
  /** ref_ids taken out of the model (status `rejected`, reason `upgrade_failed`): file gone or no usable signature. */
  failed: string[];
}

/**
 * Extracts the features of the given stale references again from their stored files and stores them, with
 * what enrolment stores beside them (variant row inside the features, page, box, quality). A reference
 * whose file is gone, or that no longer yields a usable signature, is marked rejected with reason
 * `upgrade_failed` and a detail saying why (its file, if any, is kept); the others are upgraded regardless.
 *
 * Every row write is guarded on the row being unchanged since it was read (same upload, still enrolled,
 * same stored features), so a concurrent replacement, deletion or upgrade is never overwritten; the
 * subject's references revision is bumped in the same transaction, so a model built from the rows as
 * they were before can no longer be recorded (setModel's guard) and the caller's rebuild stores the
 * model of the upgraded rows. Transient failures (R2 or D1 unavailable) throw and change nothing.
 */
export async function upgradeReferences(
  deps: { store: RegionStore; engine: VerificationEngine },
  orgId: string,
  subjectReference: string,
  stale: readonly ReferenceRow[],
): Promise<UpgradeOutcome> {
  const outcome: UpgradeOutcome = { upgraded: [], failed: [] };
  if (stale.length === 0) return outcome;
  const db = deps.store.db;
  const statements: D1PreparedStatement[] = [];
  const guard = "WHERE org_id = ? AND subject_reference = ? AND ref_id = ? AND upload_id = ? AND status = 'enrolled' AND features = ?";
  const fail = (row: ReferenceRow, detail: string) => {
    outcome.failed.push(row.refId);
    statements.push(
      db
        .prepare(`UPDATE subject_references SET status = 'rejected', rejected_reason = 'upgrade_failed', rejected_detail = ? ${guard}`)
        .bind(detail, orgId, subjectReference, row.refId, row.uploadId, row.features),
    );
  };
  // One at a time: extraction is CPU-bound, and the isolate has one core.
  for (const row of stale) {
    const object = await deps.store.files.get(row.fileKey);
    if (!object) {
      fail(row, upgradeFailureDetail({ kind: "file_missing" }, deps.engine.featureVersion));
      continue;
    }
    let result;
    try {
      result = await deps.engine.enrolReference(new Uint8Array(await object.arrayBuffer()));
    } catch (err) {
      if (!isVerifyError(err)) throw err;
      result = { ok: false as const, reason: err.code, detail: err.message };
    }
    if (!result.ok) {
      fail(row, upgradeFailureDetail({ kind: "rejected", reason: result.reason, detail: result.detail }, deps.engine.featureVersion));
      continue;
    }
    outcome.upgraded.push(row.refId);
    // enrolled_at is left as it was: the reference is the same upload (learning reads a newer enrolled_at as a replacement).
    statements.push(
      db
        .prepare(`UPDATE subject_references SET features = ?, page = ?, box = ?, quality = ? ${guard}`)
        .bind(
          JSON.stringify(result.features),
          result.page,
          JSON.stringify(result.box),
          JSON.stringify(result.quality),
          orgId,
          subjectReference,
          row.refId,
          row.uploadId,
          row.features,
        ),
    );
  }
  statements.push(
    db
      .prepare("UPDATE subjects SET refs_revision = refs_revision + 1 WHERE org_id = ? AND subject_reference = ?")
      .bind(orgId, subjectReference),
  );
  await db.batch(statements);
  return outcome;
}
