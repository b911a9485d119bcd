/**
 * Client sessions: minting, finding the session of a token, and deciding whether a credential held by a
 * live connection is still good (the LiveCapture object asks this at least every 30 s).
 */
import { logError } from "../util/log";
import type { Env } from "../env";
import type { Org, RegionName, RegionStore } from "../domain/tenancy";
import { REGIONS } from "../http/region";
import { secretMatches } from "../domain/api-key";
import { SESSION_DEFAULT_TTL_S, mintSessionToken, parseSessionToken, sessionState } from "../domain/session";
import { directory } from "../storage/directory";
import { regionStore } from "../storage/regions";
import { liveCapture } from "../../durable-objects/live-capture-client";
import { sessionsRepo, type SessionRow } from "../storage/sessions";

/** Compared against when the session id is unknown, so timing does not tell which ids exist. */
const UNKNOWN_HASH = "0".repeat(64);

export interface SessionInput {
  subjectReference: string;
  expiresIn?: number;
  policy?: string;
  inputType?: string;
  reference?: string;
  process?: string;
  metadata?: Record<string, unknown>;
}

export async function createSession(
  store: RegionStore,
  org: Pick<Org, "id">,
  actor: string,
  input: SessionInput,
  now = new Date(),
): Promise<{ token: string; row: SessionRow }> {
  const minted = await mintSessionToken(store.name);
  const row: SessionRow = {
    orgId: org.id,
    sessionId: minted.id,
    tokenHash: minted.secretHash,
    subjectReference: input.subjectReference,
    policy: input.policy ?? null,
    inputType: input.inputType ?? "photo",
    reference: input.reference ?? null,
    process: input.process ?? null,
    metadata: input.metadata ? JSON.stringify(input.metadata) : null,
    createdBy: actor,
    createdAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + (input.expiresIn ?? SESSION_DEFAULT_TTL_S) * 1000).toISOString(),
    revokedAt: null,
    checkStartedAt: null,
  };
  await sessionsRepo(store.db).insert(row);
  return { token: minted.token, row };
}

export type FoundSession = { ok: true; row: SessionRow; region: RegionName } | { ok: false; detail: string };

/**
 * The session a token names, if the token is genuine and the session usable now. Every refusal reads as
 * the spec's 401: malformed, unknown, wrong secret, expired or revoked (the organisation's suspension is
 * the tenancy step's to refuse).
 */
export async function findSession(env: Env, token: string, now = Date.now()): Promise<FoundSession> {
  const parsed = parseSessionToken(token);
  if (!parsed) return { ok: false, detail: "The session token is malformed." };
  // The hinted region first; the others only when it misses (the organisation moved since minting).
  const order = [...REGIONS].sort((a, b) => (a === parsed.regionHint ? -1 : b === parsed.regionHint ? 1 : 0));
  let found: { row: SessionRow; region: RegionName } | null = null;
  for (const region of order) {
    const row = await sessionsRepo(regionStore(env, region).db).byTokenId(parsed.id);
    if (row) {
      found = { row, region };
      break;
    }
  }
  const matches = await secretMatches(parsed.secret, found?.row.tokenHash ?? UNKNOWN_HASH);
  if (!found || !matches) return { ok: false, detail: "The session token is not valid." };
  const state = sessionState(found.row, now);
  if (state === "revoked") return { ok: false, detail: "The session has been revoked." };
  if (state === "expired") return { ok: false, detail: "The session has expired." };
  return { ok: true, ...found };
}

/** What a live connection remembers of the credential that opened it. */
export type LiveCredential =
  | { kind: "session"; orgId: string; sessionId: string }
  | { kind: "api_key"; orgId: string; keyId: string }
  | { kind: "user"; orgId: string; userId: string; expiresAt: number | null };

/**
 * Null while the credential still holds, else why it no longer does: revoked or expired session or key,
 * an expired dashboard token, a deleted organisation, or the organisation (or one above it) suspended.
 */
export async function credentialProblem(env: Env, cred: LiveCredential, now = Date.now()): Promise<string | null> {
  const chain = await directory(env.DIRECTORY).orgWithAncestors(cred.orgId);
  if (chain.length === 0) return "organisation_deleted";
  if (chain.some((o) => o.suspended)) return "organisation_suspended";
  if (cred.kind === "session") {
    const row = await sessionsRepo(regionStore(env, chain[0].region).db).get(cred.orgId, cred.sessionId);
    if (!row) return "session_revoked";
    const state = sessionState(row, now);
    if (state !== "active") return `session_${state}`;
  } else if (cred.kind === "api_key") {
    const key = await directory(env.DIRECTORY).getApiKey(cred.keyId);
    if (!key || key.revokedAt) return "key_revoked";
    if (key.expiresAt && Date.parse(key.expiresAt) <= now) return "key_expired";
  } else if (cred.expiresAt !== null && cred.expiresAt <= now) {
    return "token_expired";
  }
  return null;
}

/** Revokes every session of a subject (it was deleted) and has its live connections re-checked now. */
export async function revokeSubjectSessions(env: Env, store: RegionStore, orgId: string, subjectReference: string): Promise<void> {
  const revoked = await sessionsRepo(store.db).revokeSubject(orgId, subjectReference, new Date().toISOString());
  // The re-check that runs at least every 30 s would cut them anyway; failing to hurry it is no error.
  if (revoked > 0)
    await liveCapture(env, orgId)
      .recheckNow()
      .catch((err) => logError("live re-check failed", err, { org_id: orgId }));
}
