/**
 * The one catalogue of webhook event kinds. The OpenAPI document (components and the `webhooks`
 * section), the endpoint routes (which events an endpoint may choose) and the delivery code all read
 * it, so an event cannot be sent that is not documented, nor documented and never accepted.
 *
 * Each kind belongs to one product: verification (`sig`) endpoints receive only `sig` kinds, archive
 * endpoints only `archive` kinds. `webhook.test` is the one kind of both: it is sent only when a test
 * send is asked for, to that one endpoint.
 */
import { z } from "zod";

export type WebhookProduct = "sig" | "archive";

export interface EventKind {
  type: string;
  /** The products whose endpoints may receive it. */
  products: WebhookProduct[];
  /** Whether an endpoint can subscribe to it (false: sent on request only, e.g. the test send). */
  subscribable: boolean;
  /** When it is sent (the changelog-style line of docs/webhooks.md and the OpenAPI document). */
  description: string;
  /**
   * The `data` member: a schema, or the name of an OpenAPI component the API already documents
   * (the check result is the same object `GET /sig/checks/{job_id}` returns).
   */
  data: z.ZodType | { component: string };
  /** The OpenAPI component name of the `data` schema, when it is defined here. */
  dataName?: string;
}

const IsoTime = z.string().meta({ format: "date-time" });

const JobEventData = z.object({
  job_id: z.string(),
  status: z.enum(["completed", "failed", "rejected"]),
  source: z.enum(["api", "bucket"]),
  item_count: z.number().int(),
  completed_items: z.number().int(),
  errored_items: z.number().int().meta({ description: "Items that ended with an error instead of a decision" }),
  decisions: z.record(z.string(), z.number().int()).meta({ description: "Counts per decision; `ERROR` counts items without one" }),
  created_at: IsoTime,
  finished_at: IsoTime,
  status_url: z.string().meta({ description: "GET /sig/checks/{job_id}" }),
});

const ReferenceEventData = z.object({
  subject_reference: z.string(),
  ref_id: z.string(),
  status: z.enum(["enrolled", "rejected"]).meta({
    description:
      "The queued upload's outcome. A rejected upload that was to replace a live reference leaves that reference live " +
      "(the subject view shows it with the rejected upload as `replacement`)",
  }),
  source: z.string(),
  rejected_reason: z.string().nullable(),
  rejected_detail: z.string().nullable(),
  at: IsoTime,
});

const BucketDropData = z.object({
  job_id: z.string().nullable().meta({ description: "The drop's check job; null when nothing could be submitted" }),
  bucket: z.string(),
  summary_key: z.string().meta({
    description:
      "Object key of the drop's summary.json, beside the drop (`<drop_id>.summary.json` for a manifest uploaded again with the job_id its folder's earlier upload submitted)",
  }),
  status: z.enum(["completed", "failed", "rejected", "not_submitted"]).meta({
    description:
      "The job's status; `rejected` carries the reason in `errors` (billing_required, quota_exceeded, organisation_suspended); `not_submitted`: no job was made (see `errors`); `failed` with job_id null: the drop's event failed every retry (processing_failed)",
  }),
  item_count: z.number().int(),
  decided_count: z.number().int(),
  errors: z.array(z.object({ code: z.string(), detail: z.string() })).meta({ description: "What kept the drop or its job from running" }),
  status_url: z.string().nullable(),
});

const LearningData = z.object({
  outcome: z.enum(["learned", "refused", "evicted", "unlearned"]).meta({
    description:
      "learned: became a reference; refused: stopped by the entry bar; evicted: the oldest learned reference made room under the cap; unlearned: removed by unlearn",
  }),
  check_id: z.string(),
  subject_reference: z.string(),
  ref_id: z.string().nullable().meta({ description: "The learned reference (learned-...), or null when not learned" }),
  reason: z.string().nullable().meta({ description: "Why the item was not learned (entry bar, learning off, ...)" }),
});

const EndpointDisabledData = z.object({
  webhook_id: z.string(),
  product: z.enum(["sig", "archive"]),
  url: z.string(),
  reason: z.literal("failing"),
  failing_since: IsoTime,
  disabled_at: IsoTime,
});

const TestData = z.object({
  webhook_id: z.string(),
  message: z.string(),
});

/**
 * Archive records live in the archive product; its events carry what it publishes: always the record,
 * and the kind's own member when it has one.
 */
const archiveData = (extra: Record<string, z.ZodType>) =>
  z
    .object({
      record_id: z.string().min(1).meta({ description: "The archive record concerned" }),
      ...Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, v.optional()])),
    })
    .catchall(z.unknown())
    .meta({ description: "Published by the archive product; members beyond these are passed through unchanged" });

export const ARCHIVE_EVENT_TYPES = [
  "archive.record.filed",
  "archive.hold.applied",
  "archive.hold.released",
  "archive.record.disposed",
  "archive.integrity.alert",
  "archive.export.ready",
  "archive.restore.ready",
] as const;
export type ArchiveEventType = (typeof ARCHIVE_EVENT_TYPES)[number];

export const EVENT_KINDS: readonly EventKind[] = [
  {
    type: "check.completed",
    products: ["sig"],
    subscribable: true,
    description:
      "One checked item has its outcome (a decision or an item error). `data` is the CheckResult, as GET /sig/checks/{job_id} returns it, without `review` (no verdict exists yet).",
    data: { component: "CheckResult" },
  },
  {
    type: "job.completed",
    products: ["sig"],
    subscribable: true,
    description: "A check job finished and at least one item has a decision.",
    data: JobEventData,
    dataName: "JobEventData",
  },
  {
    type: "job.failed",
    products: ["sig"],
    subscribable: true,
    description:
      "A check job finished without any decision (every item ended in an error), could not go on, or was rejected before it started (billing or quota; `status: rejected`).",
    data: JobEventData,
    dataName: "JobEventData",
  },
  {
    type: "reference.enrolled",
    products: ["sig"],
    subscribable: true,
    description: "A reference queued for enrolment (PUT .../references answered 202) has been enrolled.",
    data: ReferenceEventData,
    dataName: "ReferenceEventData",
  },
  {
    type: "reference.rejected",
    products: ["sig"],
    subscribable: true,
    description: "A reference queued for enrolment was rejected (no signature, unreadable, or processing failed).",
    data: ReferenceEventData,
    dataName: "ReferenceEventData",
  },
  {
    type: "bucket.drop.completed",
    products: ["sig"],
    subscribable: true,
    description: "A bucket drop was processed and its summary.json written beside it (once per drop, refused drops included).",
    data: BucketDropData,
    dataName: "BucketDropEventData",
  },
  {
    type: "reference.learned",
    products: ["sig"],
    subscribable: true,
    description:
      "A confirmed item was learned as a reference or refused by the entry bar, or a learned reference was evicted or unlearned.",
    data: LearningData,
    dataName: "LearningEventData",
  },
  {
    type: "webhook.endpoint_disabled",
    products: ["sig"],
    subscribable: true,
    description:
      "A verification endpoint failed every delivery for the disable threshold (5 days) and was disabled. Sent to the organisation's other verification endpoints that chose it; also audited as `webhook.disable`. An archive endpoint's disabling is audited only (spec 6.2: endpoints receive only their own product's events).",
    data: EndpointDisabledData,
    dataName: "EndpointDisabledEventData",
  },
  {
    type: "webhook.test",
    products: ["sig", "archive"],
    subscribable: false,
    description: "Sent only by a test send, only to the endpoint it was asked for.",
    data: TestData,
    dataName: "TestEventData",
  },
  {
    type: "archive.record.filed",
    products: ["archive"],
    subscribable: true,
    description: "A record has been filed.",
    data: archiveData({ filed_at: IsoTime }),
    dataName: "ArchiveRecordFiledData",
  },
  {
    type: "archive.hold.applied",
    products: ["archive"],
    subscribable: true,
    description: "A hold is placed on a record.",
    data: archiveData({ hold_id: z.string() }),
    dataName: "ArchiveHoldAppliedData",
  },
  {
    type: "archive.hold.released",
    products: ["archive"],
    subscribable: true,
    description: "A hold is released.",
    data: archiveData({ hold_id: z.string() }),
    dataName: "ArchiveHoldReleasedData",
  },
  {
    type: "archive.record.disposed",
    products: ["archive"],
    subscribable: true,
    description: "A record has been disposed of.",
    data: archiveData({ disposed_at: IsoTime }),
    dataName: "ArchiveRecordDisposedData",
  },
  {
    type: "archive.integrity.alert",
    products: ["archive"],
    subscribable: true,
    description: "A stored file no longer matches its receipt.",
    data: archiveData({ file: z.string() }),
    dataName: "ArchiveIntegrityAlertData",
  },
  {
    type: "archive.export.ready",
    products: ["archive"],
    subscribable: true,
    description: "A requested export is ready to download.",
    data: archiveData({ export_id: z.string() }),
    dataName: "ArchiveExportReadyData",
  },
  {
    type: "archive.restore.ready",
    products: ["archive"],
    subscribable: true,
    description: "A record requested from slower storage is ready to open.",
    data: archiveData({ restore_id: z.string() }),
    dataName: "ArchiveRestoreReadyData",
  },
];

const BY_TYPE = new Map(EVENT_KINDS.map((k) => [k.type, k]));

export function eventKind(type: string): EventKind | undefined {
  return BY_TYPE.get(type);
}

/** The kinds an endpoint of `product` may subscribe to. */
export function subscribableTypes(product: WebhookProduct): string[] {
  return EVENT_KINDS.filter((k) => k.subscribable && k.products.includes(product)).map((k) => k.type);
}

/** Whether an endpoint of `product` may ever receive `type`. */
export function productReceives(product: WebhookProduct, type: string): boolean {
  return BY_TYPE.get(type)?.products.includes(product) ?? false;
}

/** The envelope every message carries (the signed body). */
export interface EventEnvelope {
  id: string;
  type: string;
  /** When the event happened (RFC 3339). */
  timestamp: string;
  /** The Service-Version the body is rendered in: the organisation's pin at the time of the event. */
  version: string;
  org_id: string;
  data: unknown;
}

const encoder = new TextEncoder();
const ID_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

/**
 * A deterministic event id: the same happening (e.g. job J's item 3 completed) always gets the same id,
 * so re-emitting it after a redelivered queue message is recognised and never delivered twice.
 */
export async function deterministicEventId(orgId: string, type: string, key: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(`${orgId}\n${type}\n${key}`)));
  let out = "";
  // 26 base32 characters (130 bits) of the digest.
  let bits = 0;
  let value = 0;
  for (const byte of digest) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < 26) {
      out += ID_ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
    if (out.length >= 26) break;
  }
  return `evt_${out}`;
}
