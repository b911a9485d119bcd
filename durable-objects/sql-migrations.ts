/**
 * Numbered schema migrations for a Durable Object's SQLite storage (the approach of cloudflare/actors'
 * SQLSchemaMigrations, written for our objects). Each object lists every migration it has ever had,
 * numbered 1, 2, 3, ... and never edited once shipped; a change to the schema is a new entry. The
 * constructor applies the ones its storage has not seen, inside blockConcurrencyWhile, so no request
 * reaches an object whose schema is behind its code.
 *
 * The numbers applied are recorded in the table `_schema_migrations`, in the same transaction as the
 * migration's statements: a migration is applied entirely, with its record, or not at all. Migration 1
 * of each object is the schema it had before numbering (CREATE ... IF NOT EXISTS), so objects created
 * earlier adopt the numbering without change.
 */

export interface SqlMigration {
  /** 1, 2, 3, ...: the order they run in. */
  id: number;
  /** What it changes, for the reader (and recorded beside its number). */
  description: string;
  /** Statements run in order; each is one sql.exec call. */
  statements: readonly string[];
}

const LEDGER = `CREATE TABLE IF NOT EXISTS _schema_migrations (
  id INTEGER PRIMARY KEY,
  description TEXT NOT NULL,
  applied_at INTEGER NOT NULL
)`;

/** The list must be numbered 1..n with no gap or repeat: a mistake here is a programming error. */
function assertNumbered(migrations: readonly SqlMigration[]): void {
  migrations.forEach((m, i) => {
    if (m.id !== i + 1) throw new Error(`migration ${i + 1} is numbered ${m.id}: migrations are numbered 1, 2, 3, ... in order`);
  });
}

/** The highest migration number this storage has applied (0 for new storage). */
export function schemaVersion(storage: DurableObjectStorage): number {
  storage.sql.exec(LEDGER);
  return storage.sql.exec<{ v: number | null }>("SELECT MAX(id) AS v FROM _schema_migrations").one().v ?? 0;
}

/**
 * Applies every migration newer than the storage's schema, each in its own transaction with its
 * record. Returns the numbers applied now. Call it from the constructor under blockConcurrencyWhile.
 */
export function migrate(storage: DurableObjectStorage, migrations: readonly SqlMigration[]): number[] {
  assertNumbered(migrations);
  const current = schemaVersion(storage);
  // Storage already migrated by newer code (a rollback or a gradual deployment) is left as it is:
  // migrations are additive, so older code keeps working on it, and nothing older is run over it.
  const applied: number[] = [];
  for (const m of migrations.slice(current)) {
    storage.transactionSync(() => {
      for (const stmt of m.statements) storage.sql.exec(stmt);
      storage.sql.exec("INSERT INTO _schema_migrations (id, description, applied_at) VALUES (?, ?, ?)", m.id, m.description, Date.now());
    });
    applied.push(m.id);
  }
  return applied;
}
