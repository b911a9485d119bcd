-- Placeholder so the folder is a valid migrations directory; the foundation work adds the tables.
CREATE TABLE IF NOT EXISTS _meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
