import { newId } from "../domain/ids";

export interface AuditEntry {
  orgId: string;
  /** key:<id>, user:<id>, session:<id> or operator */
  actor: string;
  action: string;
  target: string;
  detail?: Record<string, unknown>;
  requestId?: string;
}

/** The insert of one audited action, for batching it with the change it records. */
export function auditStatement(db: D1Database, entry: AuditEntry): D1PreparedStatement {
  return db
    .prepare("INSERT INTO audit_log (id, org_id, actor, action, target, detail, request_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
    .bind(
      newId("aud"),
      entry.orgId,
      entry.actor,
      entry.action,
      entry.target,
      entry.detail ? JSON.stringify(entry.detail) : null,
      entry.requestId ?? null,
      new Date().toISOString(),
    );
}

/** Appends an audited action to the organisation's audit log (in its home region's D1). */
export async function recordAudit(db: D1Database, entry: AuditEntry): Promise<void> {
  await auditStatement(db, entry).run();
}
