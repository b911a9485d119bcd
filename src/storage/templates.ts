/**
 * Template rows in the home region's D1 and the template's files in R2: the blank as uploaded and the
 * registration model computed at creation.
 */
import type { TemplateBox } from "../domain/template";
import { auditStatement, type AuditEntry } from "./audit";
import { orgFilePrefix } from "./regions";

export interface TemplateRecord {
  orgId: string;
  templateId: string;
  name: string | null;
  description: string | null;
  boxes: TemplateBox[];
  blankKey: string;
  blankType: string;
  blankBytes: number;
  blankSha256: string;
  /** Sizes of the blank pages that hold boxes. */
  pages: { page: number; width: number; height: number }[];
  modelKey: string;
  createdBy: string;
  createdAt: string;
}

interface Row {
  org_id: string;
  template_id: string;
  name: string | null;
  description: string | null;
  boxes: string;
  blank_key: string;
  blank_type: string;
  blank_bytes: number;
  blank_sha256: string;
  pages: string;
  model_key: string;
  created_by: string;
  created_at: string;
}

function toRecord(r: Row): TemplateRecord {
  return {
    orgId: r.org_id,
    templateId: r.template_id,
    name: r.name,
    description: r.description,
    boxes: JSON.parse(r.boxes) as TemplateBox[],
    blankKey: r.blank_key,
    blankType: r.blank_type,
    blankBytes: Number(r.blank_bytes),
    blankSha256: r.blank_sha256,
    pages: JSON.parse(r.pages) as TemplateRecord["pages"],
    modelKey: r.model_key,
    createdBy: r.created_by,
    createdAt: r.created_at,
  };
}

export function templatePrefix(orgId: string, templateId: string): string {
  return `${orgFilePrefix(orgId)}templates/${templateId}/`;
}

/** A new upload gets new keys, so a template deleted and created again never reads the old files. */
export function templateFileKeys(orgId: string, templateId: string, uploadId: string): { blankKey: string; modelKey: string } {
  const p = templatePrefix(orgId, templateId);
  return { blankKey: `${p}${uploadId}/blank`, modelKey: `${p}${uploadId}/model.json` };
}

export function templatesRepo(db: D1Database) {
  return {
    async get(orgId: string, templateId: string): Promise<TemplateRecord | null> {
      const row = await db.prepare("SELECT * FROM templates WHERE org_id = ? AND template_id = ?").bind(orgId, templateId).first<Row>();
      return row ? toRecord(row) : null;
    },

    /** Newest first. */
    async list(orgId: string): Promise<TemplateRecord[]> {
      const { results } = await db
        .prepare("SELECT * FROM templates WHERE org_id = ? ORDER BY created_at DESC, template_id DESC")
        .bind(orgId)
        .all<Row>();
      return results.map(toRecord);
    },

    async count(orgId: string): Promise<number> {
      const row = await db.prepare("SELECT COUNT(*) AS n FROM templates WHERE org_id = ?").bind(orgId).first<{ n: number }>();
      return Number(row?.n ?? 0);
    },

    /**
     * Inserts the row with its audit entry, unless the id exists or the tenant already has `max`
     * templates: the count is checked in the same statement, so two concurrent creations cannot both
     * pass it. Returns "exists", "full" or "created".
     */
    async insert(t: TemplateRecord, max: number, audit: AuditEntry): Promise<"exists" | "full" | "created"> {
      const insert = db
        .prepare(
          `INSERT INTO templates (org_id, template_id, name, description, boxes, blank_key, blank_type, blank_bytes, blank_sha256, pages, model_key, created_by, created_at)
           SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13
           WHERE (SELECT COUNT(*) FROM templates WHERE org_id = ?1) < ?14`,
        )
        .bind(
          t.orgId,
          t.templateId,
          t.name,
          t.description,
          JSON.stringify(t.boxes),
          t.blankKey,
          t.blankType,
          t.blankBytes,
          t.blankSha256,
          JSON.stringify(t.pages),
          t.modelKey,
          t.createdBy,
          t.createdAt,
          max,
        );
      try {
        const [res] = await db.batch([insert]);
        if ((res.meta.changes ?? 0) === 0) return "full";
      } catch (err) {
        if (/UNIQUE|PRIMARY KEY|constraint/i.test(String(err))) return "exists";
        throw err;
      }
      await auditStatement(db, audit).run();
      return "created";
    },

    /** Deletes the row with its audit entry; false when there was none. */
    async delete(orgId: string, templateId: string, audit: AuditEntry): Promise<TemplateRecord | null> {
      const row = await db
        .prepare("DELETE FROM templates WHERE org_id = ? AND template_id = ? RETURNING *")
        .bind(orgId, templateId)
        .first<Row>();
      if (!row) return null;
      await auditStatement(db, audit).run();
      return toRecord(row);
    },
  };
}
