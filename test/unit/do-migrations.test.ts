import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { jobObject } from "../../durable-objects/job-client";
import { MIGRATIONS as JOB_MIGRATIONS } from "../../durable-objects/job";
import { MIGRATIONS as GATE_MIGRATIONS } from "../../durable-objects/tenant-gate";
import { tenantGate } from "../../durable-objects/tenant-gate-client";
import { migrate, schemaVersion, type SqlMigration } from "../../durable-objects/sql-migrations";

let n = 0;
/** A Job object of its own; its storage doubles as a scratch SQLite database for the runner. */
const freshJob = () => jobObject(env, "org_migrations", `job_${++n}`);

const tables = (storage: DurableObjectStorage) =>
  storage.sql
    .exec<{ name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_cf%' ESCAPE '\\' AND name NOT LIKE 'sqlite%' ORDER BY name",
    )
    .toArray()
    .map((r) => r.name);

describe("Durable Object schema migrations", () => {
  it("brings a new Job and a new TenantGate to their latest schema before the first call", async () => {
    const job = freshJob();
    expect(await job.init("org_migrations", "j", 1)).toMatchObject({ status: "queued" });
    await runInDurableObject(job, (_o, state) => {
      expect(schemaVersion(state.storage)).toBe(JOB_MIGRATIONS.length);
      expect(tables(state.storage)).toEqual(["_schema_migrations", "done_items", "job"]);
    });
    const gate = tenantGate(env, { id: `org_migrations_${++n}`, region: "us" });
    await runInDurableObject(gate, (_o, state) => {
      expect(schemaVersion(state.storage)).toBe(GATE_MIGRATIONS.length);
      expect(tables(state.storage)).toEqual(
        expect.arrayContaining(["_schema_migrations", "buckets", "idempotency", "counted_items", "monthly_usage"]),
      );
    });
  });

  it("adopts storage created before migrations were numbered, keeping its rows", async () => {
    const job = freshJob();
    await job.init("org_migrations", "old", 2);
    await job.completeItem(0, true);
    await runInDurableObject(job, (_o, state) => {
      // The storage as the code before numbering left it: the tables and rows, no ledger.
      state.storage.sql.exec("DROP TABLE _schema_migrations");
      expect(migrate(state.storage, JOB_MIGRATIONS)).toEqual([1]);
      expect(migrate(state.storage, JOB_MIGRATIONS)).toEqual([]);
      const row = state.storage.sql.exec<{ job_id: string; completed: number }>("SELECT job_id, completed FROM job").one();
      expect(row).toEqual({ job_id: "old", completed: 1 });
    });
  });

  it("runs each later migration once, in order, and records it", async () => {
    const later: SqlMigration[] = [
      ...JOB_MIGRATIONS,
      {
        id: JOB_MIGRATIONS.length + 1,
        description: "notes",
        statements: ["CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)"],
      },
      {
        id: JOB_MIGRATIONS.length + 2,
        description: "note authors",
        statements: ["ALTER TABLE notes ADD COLUMN author TEXT", "CREATE INDEX notes_author ON notes (author)"],
      },
    ];
    await runInDurableObject(freshJob(), (_o, state) => {
      expect(migrate(state.storage, later)).toEqual([JOB_MIGRATIONS.length + 1, JOB_MIGRATIONS.length + 2]);
      expect(migrate(state.storage, later)).toEqual([]);
      state.storage.sql.exec("INSERT INTO notes (text, author) VALUES ('x', 'y')");
      const ledger = state.storage.sql
        .exec<{ id: number; description: string }>("SELECT id, description FROM _schema_migrations ORDER BY id")
        .toArray();
      expect(ledger.map((r) => r.id)).toEqual(later.map((m) => m.id));
      expect(ledger.at(-1)?.description).toBe("note authors");
      // Code that knows fewer migrations (a rollback) leaves newer storage alone.
      expect(migrate(state.storage, JOB_MIGRATIONS)).toEqual([]);
    });
  });

  it("applies a migration entirely or not at all", async () => {
    const broken: SqlMigration[] = [
      ...JOB_MIGRATIONS,
      {
        id: JOB_MIGRATIONS.length + 1,
        description: "half",
        statements: ["CREATE TABLE half (id INTEGER)", "CREATE TABLE job (id INTEGER)"],
      },
    ];
    await runInDurableObject(freshJob(), (_o, state) => {
      expect(() => migrate(state.storage, broken)).toThrow(/already exists/);
      expect(schemaVersion(state.storage)).toBe(JOB_MIGRATIONS.length);
      expect(tables(state.storage)).not.toContain("half");
    });
  });

  it("refuses a list that is not numbered 1, 2, 3, ...", async () => {
    await runInDurableObject(freshJob(), (_o, state) => {
      const skipped = [{ ...JOB_MIGRATIONS[0] }, { id: 3, description: "gap", statements: [] }];
      expect(() => migrate(state.storage, skipped)).toThrow(/migration 2 is numbered 3/);
    });
  });
});
