import { describe, expect, it } from "vitest";
import { hashSecret, parseApiKey } from "../../src/domain/api-key";
import { mintSessionToken, parseSessionToken, publicSessionId, sessionIdOf, sessionJobId, sessionState } from "../../src/domain/session";

describe("session tokens", () => {
  it("carry a version, the region hint, the session id and a secret whose hash alone is kept", async () => {
    const m = await mintSessionToken("eu");
    expect(m.token).toMatch(/^svc_ses_1e[0-9A-Za-z]{48}$/);
    const p = parseSessionToken(m.token)!;
    expect(p).toEqual({ regionHint: "eu", id: m.id, secret: m.token.slice(-32) });
    expect(m.secretHash).toBe(await hashSecret(p.secret));
    expect(m.secretHash).not.toContain(p.secret);
    // Never mistaken for an API key.
    expect(parseApiKey(m.token)).toBeNull();
  });

  it("parse to null when malformed or of an unknown version", () => {
    expect(parseSessionToken("svc_ses_abc")).toBeNull();
    expect(parseSessionToken(`svc_ses_2u${"A".repeat(48)}`)).toBeNull();
    expect(parseSessionToken(`svc_test_1u${"A".repeat(48)}`)).toBeNull();
  });

  it("name their session, and the session's one job", () => {
    expect(publicSessionId("AbCdEfGh12345678")).toBe("ses_AbCdEfGh12345678");
    expect(sessionIdOf("ses_AbCdEfGh12345678")).toBe("AbCdEfGh12345678");
    expect(sessionIdOf("ses_short")).toBeNull();
    expect(sessionJobId("AbCdEfGh12345678")).toBe("chk_ses_AbCdEfGh12345678");
  });

  it("are expired at their expiry instant and revoked once revoked", () => {
    const at = Date.parse("2026-01-01T00:15:00Z");
    expect(sessionState({ expiresAt: "2026-01-01T00:15:00Z", revokedAt: null }, at - 1)).toBe("active");
    expect(sessionState({ expiresAt: "2026-01-01T00:15:00Z", revokedAt: null }, at)).toBe("expired");
    expect(sessionState({ expiresAt: "2026-01-01T00:15:00Z", revokedAt: "2026-01-01T00:01:00Z" }, at - 1)).toBe("revoked");
  });
});
