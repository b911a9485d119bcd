/** The history of an organisation's version pin (regional table version_pin_changes). */
import type { PinChange } from "../domain/version-pins";

export interface PinChangeRecord extends PinChange {
  orgId: string;
  changeId: string;
  actor: string;
}

export async function lastPinChange(db: D1Database, orgId: string): Promise<PinChange | null> {
  const row = await db
    .prepare("SELECT from_version, to_version, kind, changed_at FROM version_pin_changes WHERE org_id = ? ORDER BY change_id DESC LIMIT 1")
    .bind(orgId)
    .first<{ from_version: string; to_version: string; kind: "upgrade" | "rollback"; changed_at: string }>();
  return row ? { from: row.from_version, to: row.to_version, kind: row.kind, at: row.changed_at } : null;
}

export function pinChangeStatement(db: D1Database, r: PinChangeRecord): D1PreparedStatement {
  return db
    .prepare(
      "INSERT INTO version_pin_changes (org_id, change_id, from_version, to_version, kind, actor, changed_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(r.orgId, r.changeId, r.from, r.to, r.kind, r.actor, r.at);
}
