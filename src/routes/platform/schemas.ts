import { z } from "@hono/zod-openapi";
import { PERMISSIONS, type Org } from "../../domain/tenancy";
import type { ApiKeyRecord } from "../../storage/directory";

// Platform payloads. The spec leaves the platform surface unshown; these shapes are designed here.

export const OrgIdParam = z
  .string()
  .regex(/^org_[0-9A-HJKMNP-TV-Z]{26}$/)
  .openapi({ param: { name: "org_id", in: "path" }, example: "org_01JD0000000000000000000000" });

export const KeyIdParam = z
  .string()
  .regex(/^[0-9A-Za-z]{16}$/)
  .openapi({ param: { name: "key_id", in: "path" }, example: "a1B2c3D4e5F6g7H8" });

export const RegionSchema = z.enum(["us", "eu"]);
export const BillingSchema = z.enum(["active", "inactive", "canceled", "parent"]);
export const PermissionSchema = z.enum(PERMISSIONS);
const Host = z
  .string()
  .min(1)
  .max(260)
  .regex(
    /^(\*\.)?([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(:\d{1,5})?$/,
    "must be a host name or IP address, optionally with a port, or *.domain",
  )
  .openapi({
    description:
      "`docs.example.com` (port 443 only), `docs.example.com:8443` (that port only) or `*.example.com` (every subdomain, not the domain itself). " +
      "Loopback, private, link-local, metadata and other special addresses (in any spelling, IPv4 or IPv6) and local names (`localhost`, `*.local`, `*.internal`) are refused.",
  });
const Bucket = z.string().min(1).max(255);

export const OrgCreateSchema = z
  .object({
    name: z.string().min(1).max(200),
    region: RegionSchema,
    parent_id: z.string().nullable().optional(),
    billing: BillingSchema.default("active"),
    pinned_version: z
      .string()
      .regex(/^\d{4}-\d{2}-\d{2}$/, "must be a date YYYY-MM-DD")
      .optional()
      .openapi({ description: "Defaults to the version current at creation." }),
    learning: z.boolean().default(true),
    allow_hosts: z.array(Host).max(100).default([]),
    allow_buckets: z.array(Bucket).max(100).default([]),
    monthly_quota: z
      .number()
      .int()
      .min(0)
      .nullable()
      .default(null)
      .openapi({ description: "Checked items per UTC month; null = unlimited" }),
    inbox_ttl: z
      .number()
      .int()
      .min(60)
      .max(30 * 86400)
      .default(86400)
      .openapi({ description: "Seconds check inputs and crops are kept" }),
  })
  .strict()
  .openapi("OrgCreate");

export const OrgSchema = z
  .object({
    org_id: z.string(),
    name: z.string(),
    parent_id: z.string().nullable(),
    region: RegionSchema,
    moving_to: RegionSchema.nullable(),
    billing: BillingSchema,
    pinned_version: z.string(),
    learning: z.boolean(),
    allow_hosts: z.array(z.string()),
    allow_buckets: z.array(z.string()),
    monthly_quota: z.number().int().nullable(),
    inbox_ttl: z.number().int(),
    suspended: z.boolean(),
    created_at: z.string(),
  })
  .openapi("Org");

export function orgJson(org: Org): z.infer<typeof OrgSchema> {
  return {
    org_id: org.id,
    name: org.name,
    parent_id: org.parentId,
    region: org.region,
    moving_to: org.movingTo,
    billing: org.billing,
    pinned_version: org.pinnedVersion,
    learning: org.learning,
    allow_hosts: org.allowHosts,
    allow_buckets: org.allowBuckets,
    monthly_quota: org.monthlyQuota,
    inbox_ttl: org.inboxTtlSeconds,
    suspended: org.suspended,
    created_at: org.createdAt,
  };
}

export const KeyCreateSchema = z
  .object({
    permissions: z.array(PermissionSchema).min(1).max(PERMISSIONS.length),
    name: z.string().min(1).max(200).optional(),
    expires_at: z.iso.datetime({ offset: true }).optional().openapi({ description: "RFC 3339; the key stops working then" }),
  })
  .strict()
  .openapi("ApiKeyCreate");

export const ApiKeySchema = z
  .object({
    key_id: z.string(),
    org_id: z.string(),
    prefix: z.string().openapi({ description: "For recognising the key only" }),
    name: z.string().nullable(),
    permissions: z.array(PermissionSchema),
    created_by: z.string(),
    created_at: z.string(),
    expires_at: z.string().nullable(),
    revoked_at: z.string().nullable(),
  })
  .openapi("ApiKey");

export const ApiKeyCreatedSchema = ApiKeySchema.extend({
  key: z.string().openapi({ description: "The full key, shown only in this response" }),
}).openapi("ApiKeyCreated");

export const ApiKeyListSchema = z.object({ keys: z.array(ApiKeySchema) }).openapi("ApiKeyList");

export function keyJson(k: ApiKeyRecord): z.infer<typeof ApiKeySchema> {
  return {
    key_id: k.keyId,
    org_id: k.orgId,
    prefix: k.prefix,
    name: k.name,
    permissions: k.permissions,
    created_by: k.createdBy,
    created_at: k.createdAt,
    expires_at: k.expiresAt,
    revoked_at: k.revokedAt,
  };
}
