import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, createOrg, mintKey, operator } from "../helpers/tenant";

/**
 * The isolate's cache of API keys and organisations (src/storage/directory-cache.ts): reads under /sig/
 * use it; writes and platform routes read the directory; a change made through the service drops it.
 * A change written straight into the directory (bypassing the service, as another isolate's change
 * would look from here) shows which requests were served from the cache.
 */
async function revokeBehindTheServicesBack(keyId: string): Promise<void> {
  await env.DIRECTORY.prepare("UPDATE api_keys SET revoked_at = ? WHERE id = ?").bind(new Date().toISOString(), keyId).run();
}

describe("directory cache", () => {
  it("serves /sig/ reads from the cache, while writes and platform routes read the directory", async () => {
    const org = await createOrg();
    expect((await api("/sig/policies", { key: org.apiKey })).status).toBe(200);
    await revokeBehindTheServicesBack(org.keyId);

    // The cached key record: as another isolate would still see it within the cache's 30 s.
    expect((await api("/sig/policies", { key: org.apiKey })).status).toBe(200);
    // A write reads the directory: the key is revoked.
    const put = await api("/sig/policies/strict", { method: "PUT", key: org.apiKey, json: {} });
    expect(put.status).toBe(401);
    expect(((await put.json()) as { detail: string }).detail).toMatch(/revoked/);
    // So does a platform route.
    expect((await api("/platform/me", { key: org.apiKey })).status).toBe(401);
    // The write refreshed the cached record: reads now refuse the key too.
    expect((await api("/sig/policies", { key: org.apiKey })).status).toBe(401);
  });

  it("still checks the secret of a cached key on every request", async () => {
    const org = await createOrg();
    expect((await api("/sig/policies", { key: org.apiKey })).status).toBe(200);
    const wrong = org.apiKey.slice(0, -1) + (org.apiKey.endsWith("a") ? "b" : "a");
    expect((await api("/sig/policies", { key: wrong })).status).toBe(401);
  });

  it("drops a revoked key at once on the isolate that revoked it", async () => {
    const org = await createOrg();
    const other = await mintKey(org.orgId, ["org:read"]);
    expect((await api("/sig/policies", { key: other.apiKey })).status).toBe(200);
    await operator("DELETE", `/platform/orgs/${org.orgId}/keys/${other.keyId}`);
    const res = await api("/sig/policies", { key: other.apiKey });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/revoked/);
    expect((await api("/sig/policies", { key: org.apiKey })).status).toBe(200);
  });

  it("drops cached organisations at once on suspension, also of a parent, and on unsuspension", async () => {
    const parent = await createOrg();
    const child = await createOrg({ parentId: parent.orgId });
    expect((await api("/sig/policies", { key: parent.apiKey })).status).toBe(200);
    expect((await api("/sig/policies", { key: child.apiKey })).status).toBe(200);

    await operator("POST", `/platform/orgs/${parent.orgId}/suspend`);
    const res = await api("/sig/policies", { key: child.apiKey });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/suspended through/);
    expect((await api("/sig/policies", { key: parent.apiKey })).status).toBe(401);

    await operator("POST", `/platform/orgs/${parent.orgId}/unsuspend`);
    expect((await api("/sig/policies", { key: child.apiKey })).status).toBe(200);
  });

  it("drops cached organisations at once when a move begins", async () => {
    const org = await createOrg();
    expect((await api("/sig/policies", { key: org.apiKey })).status).toBe(200);
    await operator("POST", `/platform/orgs/${org.orgId}/move/begin`, { region: "eu" });
    const res = await api("/sig/policies", { key: org.apiKey });
    expect(res.status).toBe(503);
    expect(((await res.json()) as { code: string }).code).toBe("org_moving");
    await operator("POST", `/platform/orgs/${org.orgId}/move/complete`);
    expect((await api("/sig/policies", { key: org.apiKey })).status).toBe(200);
  });
});
