-- A queued upload of a ref_id whose reference is live waits beside it (JSON, services/enrolment.ts
-- Replacement; null when there is none): the live reference stays in the model until the new file is
-- enrolled, and a rejected replacement leaves it as it was (spec part 3, "replaced").
ALTER TABLE subject_references ADD COLUMN replacement TEXT;
