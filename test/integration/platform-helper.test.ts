import { describe, expect, it } from "vitest";
import { api, createOrg, mintKey } from "../helpers/tenant";

describe("test helper", () => {
  it("creates an org whose key authenticates", async () => {
    const { orgId, apiKey, keyId } = await createOrg({ permissions: ["org:read"] });
    expect(orgId).toMatch(/^org_[0-9A-Z]{26}$/);
    expect(apiKey).toMatch(/^svc_test_1u[0-9A-Za-z]{48}$/);
    const res = await api("/platform/me", { key: apiKey });
    expect(res.status).toBe(200);
    const me = (await res.json()) as { actor: string; org: { org_id: string }; permissions: string[] };
    expect(me.actor).toBe(`key:${keyId}`);
    expect(me.org.org_id).toBe(orgId);
    expect(me.permissions).toEqual(["org:read"]);
    const other = await mintKey(orgId, ["sig:checks:read"]);
    expect((await api("/platform/me", { key: other.apiKey })).status).toBe(403);
  });
});
