/**
 * Who signed an S3 request: the bucket key found by its access key id (in the region its id names first,
 * then the others, as the organisation may have moved), its secret recovered, the signature recomputed.
 */
import type { Env } from "../env";
import type { Org, RegionName } from "../domain/tenancy";
import { accessKeyRegionHint, bucketKeySealing, bucketKeyStatus, isAccessKeyId } from "../domain/bucket-key";
import { openSecret } from "../domain/sealed-secret";
import { configOf } from "../config";
import { logError } from "../util/log";
import { bucketKeysRepo, type BucketKeyRecord } from "../storage/bucket-keys";
import { directory } from "../storage/directory";
import { regionStore } from "../storage/regions";
import { S3Error } from "./errors";
import { MAX_SKEW_MS, amzDateMs, constantTimeEqualHex, expectedSignature, parseSignature, type SignedRequestParts } from "./sigv4";
import type { ChunkSigning } from "./body";

const REGIONS: RegionName[] = ["us", "eu"];

export interface S3Caller {
  key: BucketKeyRecord;
  org: Org;
  parts: SignedRequestParts;
  /** For verifying the chunk signatures of a signed aws-chunked body. */
  chunkSigning: ChunkSigning;
}

async function findKey(env: Env, accessKeyId: string): Promise<BucketKeyRecord | null> {
  const hint = accessKeyRegionHint(accessKeyId) as RegionName | null;
  const order = hint ? [hint, ...REGIONS.filter((r) => r !== hint)] : REGIONS;
  for (const region of order) {
    const key = await bucketKeysRepo(regionStore(env, region).db).byAccessKeyId(accessKeyId);
    if (key) return key;
  }
  return null;
}

export async function authenticateS3(env: Env, req: Request, url: URL, now = Date.now()): Promise<S3Caller> {
  const parts = parseSignature(req, url);
  if (parts === null)
    throw new S3Error("AccessDenied", "Anonymous requests are not allowed: sign the request with a bucket key (AWS Signature V4).");
  if ("error" in parts) throw new S3Error(parts.error, parts.message);
  if (parts.service !== "s3")
    throw new S3Error("AuthorizationHeaderMalformed", `The credential scope names service ${parts.service}; it must be s3.`);
  const at = amzDateMs(parts.amzDate);
  if (!Number.isFinite(at)) throw new S3Error("AccessDenied", "The request has no valid x-amz-date.");
  if (parts.presigned) {
    if (now > at + parts.expires! * 1000) throw new S3Error("AccessDenied", "The presigned URL has expired.");
  } else if (Math.abs(now - at) > MAX_SKEW_MS) {
    throw new S3Error("RequestTimeTooSkewed", "The difference between the request time and the server's time is too large.");
  }
  if (parts.amzDate.slice(0, 8) !== parts.date)
    throw new S3Error("AuthorizationHeaderMalformed", "The credential scope's date does not match x-amz-date.");

  const key = isAccessKeyId(parts.accessKeyId) ? await findKey(env, parts.accessKeyId) : null;
  // A revoked or expired key is unknown from here on, as S3 answers for a deleted access key.
  if (!key || bucketKeyStatus(key, now) !== "active")
    throw new S3Error("InvalidAccessKeyId", "The AWS access key id you provided does not exist in our records.");
  let secret: string;
  try {
    secret = await openSecret(bucketKeySealing(configOf(env).drops.secretKey ?? ""), key.accessKeyId, key.secretBox);
  } catch (err) {
    logError("bucket key secret cannot be opened (BUCKET_SECRET_KEY changed?)", err, { access_key_id: key.accessKeyId });
    throw new S3Error("InternalError", "The key cannot be verified right now.");
  }
  const expected = await expectedSignature(req, url, parts, secret);
  if (!constantTimeEqualHex(parts.signature, expected.signature)) {
    throw new S3Error(
      "SignatureDoesNotMatch",
      "The request signature we calculated does not match the signature you provided. Check your key and signing method.",
    );
  }
  const chain = await directory(env.DIRECTORY).orgWithAncestors(key.orgId);
  const org = chain[0];
  if (!org) throw new S3Error("InvalidAccessKeyId", "The AWS access key id you provided does not exist in our records.");
  if (chain.some((o) => o.suspended)) throw new S3Error("AccessDenied", "The organisation is suspended.");
  if (org.movingTo)
    throw new S3Error("ServiceUnavailable", "The organisation is being moved to another region; retry shortly.", { "Retry-After": "30" });
  return {
    key,
    org,
    parts,
    chunkSigning: { key: expected.key, amzDate: parts.amzDate, scope: expected.scope, seedSignature: expected.signature },
  };
}
