import type { RegionStore } from "../domain/tenancy";
import { forgetPolicies } from "./policy-cache";
import { REGIONAL_TABLES, orgFilePrefix } from "./regions";

const BATCH = 50;
const PAGE = 500;

/** D1 reads BLOBs back as arrays of bytes; they must be bound as bytes again. */
function bindable(value: unknown): unknown {
  if (value === undefined) return null;
  if (Array.isArray(value)) return new Uint8Array(value as number[]);
  return value;
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * Copies an organisation's regional rows (every table in REGIONAL_TABLES) and its R2 objects from one
 * region to another. Copies are upserts, so a move interrupted half-way can simply be run again.
 */
export async function copyOrgData(orgId: string, from: RegionStore, to: RegionStore): Promise<{ rows: number; files: number }> {
  try {
    return await copyRowsAndFiles(orgId, from, to);
  } finally {
    // The destination's policies changed (an entry of an earlier stay there must not come back).
    forgetPolicies(orgId);
  }
}

async function copyRowsAndFiles(orgId: string, from: RegionStore, to: RegionStore): Promise<{ rows: number; files: number }> {
  let rows = 0;
  for (const table of REGIONAL_TABLES) {
    // Paged, so a large organisation never has to fit in memory at once. The organisation answers
    // 503 org_moving throughout, so its rows do not change between pages and OFFSET paging is stable.
    for (let offset = 0; ; offset += PAGE) {
      const { results } = await from.db
        .prepare(`SELECT * FROM ${quoteIdent(table)} WHERE org_id = ? LIMIT ${PAGE} OFFSET ${offset}`)
        .bind(orgId)
        .all<Record<string, unknown>>();
      const statements = results.map((row) => {
        const cols = Object.keys(row);
        return to.db
          .prepare(
            `INSERT OR REPLACE INTO ${quoteIdent(table)} (${cols.map(quoteIdent).join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`,
          )
          .bind(...cols.map((c) => bindable(row[c])));
      });
      for (let i = 0; i < statements.length; i += BATCH) await to.db.batch(statements.slice(i, i + BATCH));
      rows += results.length;
      if (results.length < PAGE) break;
    }
  }

  let files = 0;
  for await (const key of listKeys(from.files, orgFilePrefix(orgId))) {
    const obj = await from.files.get(key);
    if (!obj) continue;
    // R2 needs a body of known length: stream it through rather than buffering documents of up to 50 MB.
    await to.files.put(key, obj.body.pipeThrough(new FixedLengthStream(obj.size)), {
      httpMetadata: obj.httpMetadata,
      customMetadata: obj.customMetadata,
    });
    files++;
  }
  return { rows, files };
}

/** Removes what copyOrgData copied, once the directory points at the new region. */
export async function deleteOrgData(orgId: string, from: RegionStore): Promise<void> {
  // Children before parents (the registry lists parents first), should foreign keys ever be added.
  const tables = [...REGIONAL_TABLES].reverse();
  try {
    await from.db.batch(tables.map((t) => from.db.prepare(`DELETE FROM ${quoteIdent(t)} WHERE org_id = ?`).bind(orgId)));
  } finally {
    forgetPolicies(orgId);
  }
  // List everything first: deleting while paging a listing can skip objects.
  const keys: string[] = [];
  for await (const key of listKeys(from.files, orgFilePrefix(orgId))) keys.push(key);
  for (let i = 0; i < keys.length; i += 500) await from.files.delete(keys.slice(i, i + 500));
}

async function* listKeys(bucket: R2Bucket, prefix: string): AsyncGenerator<string> {
  let cursor: string | undefined;
  do {
    const page = await bucket.list({ prefix, cursor });
    for (const o of page.objects) yield o.key;
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
}
