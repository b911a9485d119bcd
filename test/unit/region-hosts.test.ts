import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { hostOfRegion, regionOfHost } from "../../src/http/region";
import { REGIONAL_TABLES, regionStore } from "../../src/storage/regions";

describe("region hosts", () => {
  it("maps each region's own host (any case, any port) and leaves the global address unmapped", () => {
    expect(regionOfHost(env, "us.api.countersign.localhost")).toBe("us");
    expect(regionOfHost(env, "EU.api.countersign.localhost:8443")).toBe("eu");
    expect(regionOfHost(env, "api.countersign.localhost")).toBeNull();
    expect(regionOfHost(env, "127.0.0.1:8787")).toBeNull();
    expect(hostOfRegion(env, "eu")).toBe("eu.api.countersign.localhost");
  });

  it("gives each region its own database and bucket", () => {
    expect(regionStore(env, "us")).toMatchObject({ name: "us", db: env.DB_US, files: env.FILES_US });
    expect(regionStore(env, "eu")).toMatchObject({ name: "eu", db: env.DB_EU, files: env.FILES_EU });
  });

  it("lists only regional tables that exist and carry org_id", async () => {
    for (const table of REGIONAL_TABLES) {
      const cols = await env.DB_US.prepare(`SELECT name FROM pragma_table_info(?)`).bind(table).all<{ name: string }>();
      expect(
        cols.results.map((c) => c.name),
        table,
      ).toContain("org_id");
    }
  });
});
