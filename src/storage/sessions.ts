/** Client sessions in one region's D1, always scoped by organisation except the lookup by token id. */

export interface SessionRow {
  orgId: string;
  sessionId: string;
  tokenHash: string;
  subjectReference: string;
  policy: string | null;
  inputType: string;
  reference: string | null;
  process: string | null;
  metadata: string | null;
  createdBy: string;
  createdAt: string;
  expiresAt: string;
  revokedAt: string | null;
  checkStartedAt: string | null;
}

const COLUMNS =
  "org_id AS orgId, session_id AS sessionId, token_hash AS tokenHash, subject_reference AS subjectReference, policy, " +
  "input_type AS inputType, reference, process, metadata, created_by AS createdBy, created_at AS createdAt, " +
  "expires_at AS expiresAt, revoked_at AS revokedAt, check_started_at AS checkStartedAt";

export function sessionsRepo(db: D1Database) {
  return {
    async insert(row: SessionRow): Promise<void> {
      await db
        .prepare(
          "INSERT INTO sessions (org_id, session_id, token_hash, subject_reference, policy, input_type, reference, process, metadata, " +
            "created_by, created_at, expires_at, revoked_at, check_started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL)",
        )
        .bind(
          row.orgId,
          row.sessionId,
          row.tokenHash,
          row.subjectReference,
          row.policy,
          row.inputType,
          row.reference,
          row.process,
          row.metadata,
          row.createdBy,
          row.createdAt,
          row.expiresAt,
        )
        .run();
    },

    /** By the id inside a token: the token names no organisation, the row does. */
    async byTokenId(sessionId: string): Promise<SessionRow | null> {
      return db.prepare(`SELECT ${COLUMNS} FROM sessions WHERE session_id = ?`).bind(sessionId).first<SessionRow>();
    },

    async get(orgId: string, sessionId: string): Promise<SessionRow | null> {
      return db.prepare(`SELECT ${COLUMNS} FROM sessions WHERE org_id = ? AND session_id = ?`).bind(orgId, sessionId).first<SessionRow>();
    },

    /** Revokes one session; a revoked one keeps its first revocation time. */
    async revoke(orgId: string, sessionId: string, now: string): Promise<void> {
      await db
        .prepare("UPDATE sessions SET revoked_at = COALESCE(revoked_at, ?) WHERE org_id = ? AND session_id = ?")
        .bind(now, orgId, sessionId)
        .run();
    },

    /** Revokes every live session of a subject (the subject was deleted). */
    async revokeSubject(orgId: string, subjectReference: string, now: string): Promise<number> {
      const res = await db
        .prepare("UPDATE sessions SET revoked_at = ? WHERE org_id = ? AND subject_reference = ? AND revoked_at IS NULL")
        .bind(now, orgId, subjectReference)
        .run();
      return res.meta.changes ?? 0;
    },

    /**
     * Claims the session's one check: true for the first caller only, so two racing requests with the
     * same token cannot both make it.
     */
    async claimCheck(orgId: string, sessionId: string, now: string): Promise<boolean> {
      const res = await db
        .prepare("UPDATE sessions SET check_started_at = ? WHERE org_id = ? AND session_id = ? AND check_started_at IS NULL")
        .bind(now, orgId, sessionId)
        .run();
      return (res.meta.changes ?? 0) > 0;
    },

    /** Gives the claim back when the check could not be started (nothing was kept). */
    async releaseCheck(orgId: string, sessionId: string): Promise<void> {
      await db.prepare("UPDATE sessions SET check_started_at = NULL WHERE org_id = ? AND session_id = ?").bind(orgId, sessionId).run();
    },
  };
}
