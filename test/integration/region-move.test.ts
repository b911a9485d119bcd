import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { REGIONAL_TABLES } from "../../src/storage/regions";
import { api, createOrg, operator } from "../helpers/tenant";

describe("moving an organisation copies every registered regional table, paged, and its files", () => {
  it("moves 1,203 rows with blobs and reals, and 3 files, leaving other organisations alone", async () => {
    // A table added by "later work": registered in REGIONAL_TABLES like any migration would.
    for (const db of [env.DB_US, env.DB_EU]) {
      await db
        .prepare(
          "CREATE TABLE move_probe (org_id TEXT NOT NULL, k INTEGER NOT NULL, data BLOB, score REAL, note TEXT, PRIMARY KEY (org_id, k))",
        )
        .run();
    }
    REGIONAL_TABLES.push("move_probe");
    try {
      const org = await createOrg({ region: "us", permissions: ["org:read"] });
      const other = await createOrg({ region: "us", permissions: ["org:read"] });
      const insert = (orgId: string, k: number) =>
        env.DB_US.prepare("INSERT INTO move_probe VALUES (?, ?, ?, ?, ?)").bind(
          orgId,
          k,
          new Uint8Array([k % 256, 0, 255]),
          k / 7,
          k % 3 ? null : `n${k}`,
        );
      const rows = Array.from({ length: 1203 }, (_, k) => insert(org.orgId, k));
      for (let i = 0; i < rows.length; i += 100) await env.DB_US.batch(rows.slice(i, i + 100));
      await insert(other.orgId, 1).run();
      for (let i = 0; i < 3; i++)
        await env.FILES_US.put(`orgs/${org.orgId}/f${i}.bin`, new Uint8Array(1000 + i).fill(i), { customMetadata: { i: String(i) } });

      const moved = await operator("POST", `/platform/orgs/${org.orgId}/move`, { region: "eu" });
      expect(await moved.json()).toMatchObject({ region: "eu" });

      const eu = await env.DB_EU.prepare("SELECT k, data, score, note FROM move_probe WHERE org_id = ? ORDER BY k")
        .bind(org.orgId)
        .all<{ k: number; data: number[] | ArrayBuffer; score: number; note: string | null }>();
      expect(eu.results).toHaveLength(1203);
      const r = eu.results[1000];
      expect(r.k).toBe(1000);
      const bytes = Array.isArray(r.data) ? r.data : [...new Uint8Array(r.data)];
      expect(bytes).toEqual([1000 % 256, 0, 255]);
      expect(r.score).toBeCloseTo(1000 / 7, 10);
      expect(eu.results[999].note).toBe("n999");
      expect(eu.results[1001].note).toBeNull();
      const left = await env.DB_US.prepare("SELECT org_id, COUNT(*) AS n FROM move_probe GROUP BY org_id").all<{
        org_id: string;
        n: number;
      }>();
      expect(left.results).toEqual([{ org_id: other.orgId, n: 1 }]);

      for (let i = 0; i < 3; i++) {
        const f = await env.FILES_EU.get(`orgs/${org.orgId}/f${i}.bin`);
        expect(f!.size).toBe(1000 + i);
        expect(f!.customMetadata).toEqual({ i: String(i) });
        expect(new Uint8Array(await f!.arrayBuffer()).every((b) => b === i)).toBe(true);
      }
      expect((await env.FILES_US.list({ prefix: `orgs/${org.orgId}/` })).objects).toHaveLength(0);
      expect((await api("/platform/me", { key: org.apiKey })).status).toBe(200);
    } finally {
      REGIONAL_TABLES.splice(REGIONAL_TABLES.indexOf("move_probe"), 1);
    }
  });
});
