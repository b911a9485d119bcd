import { describe, expect, it } from "vitest";
import {
  constantTimeEqual,
  displayPrefix,
  hashSecret,
  mintApiKey,
  parseApiKey,
  randomBase62,
  secretMatches,
} from "../../src/domain/api-key";

describe("API key format", () => {
  it("mints svc_<env>_<50 base62> carrying version, region hint, key id and secret", async () => {
    const minted = await mintApiKey("test", "eu");
    expect(minted.key).toMatch(/^svc_test_[0-9A-Za-z]{50}$/);
    const parsed = parseApiKey(minted.key)!;
    expect(parsed).toMatchObject({ env: "test", version: "1", regionHint: "eu", keyId: minted.keyId });
    expect(parsed.secret).toHaveLength(32);
    expect(minted.secretHash).toBe(await hashSecret(parsed.secret));
    // The stored hash is not the secret, and the display prefix reveals neither the whole id nor the secret.
    expect(minted.secretHash).not.toContain(parsed.secret);
    expect(minted.prefix).toBe(minted.key.slice(0, "svc_test_".length + 6));
    expect(displayPrefix(minted.key)).toBe(minted.prefix);
  });

  it("keeps the region hint of us keys", async () => {
    expect(parseApiKey((await mintApiKey("live", "us")).key)).toMatchObject({ env: "live", regionHint: "us" });
  });

  it("refuses malformed keys", async () => {
    const good = (await mintApiKey("test", "us")).key;
    for (const bad of [
      "",
      "svc_test_",
      good.slice(0, -1), // too short
      good + "x", // too long
      good.replace(/.$/, "!"), // not base62
      good.replace("svc_test_1", "svc_test_2"), // unknown version
      good.replace("svc_test_", "svc_ses_"), // a session token is not an API key
      good.replace("svc_", "sv_"),
      good.replace("svc_test_", "svc_TEST_"),
    ]) {
      expect(parseApiKey(bad), bad).toBeNull();
    }
  });

  it("draws uniformly from all 62 characters", () => {
    const s = randomBase62(20_000);
    const seen = new Set(s);
    expect(seen.size).toBe(62);
    expect(s).toMatch(/^[0-9A-Za-z]+$/);
  });

  it("compares secrets exactly", async () => {
    const h = await hashSecret("abc");
    expect(await secretMatches("abc", h)).toBe(true);
    expect(await secretMatches("abd", h)).toBe(false);
    expect(constantTimeEqual("abc", "abc")).toBe(true);
    expect(constantTimeEqual("abc", "abcd")).toBe(false);
    expect(constantTimeEqual("", "")).toBe(true);
    expect(constantTimeEqual("abc", "")).toBe(false);
  });
});
