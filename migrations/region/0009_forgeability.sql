-- The subject's forgeability estimate (docs/forgeability.md), JSON in the API's shape, computed with the
-- reference model whenever the live references change, so the subject view reads it without work.
-- NULL: no live reference, or a model built before the estimate existed (the next change computes it).
ALTER TABLE subjects ADD COLUMN forgeability TEXT;
