/**
 * The local S3-compatible endpoint (BUCKET_KEYS_MODE=local): path-style requests under /s3/
 * (`/s3/<bucket>/<key>`), signed with a bucket key. It supports what `aws s3 cp`, `rclone` and the AWS
 * SDKs need to upload a drop and read its summary back: PutObject, multipart upload (create, upload
 * part, complete, abort), HeadObject, GetObject (with Range), DeleteObject, ListObjectsV2 (and v1),
 * HeadBucket, GetBucketLocation and ListBuckets. A key may touch only its organisation's drop prefix
 * (`orgs/<org_id>/drops/`) in its region's bucket. Every finished upload emits the message R2 event
 * notifications send, so the bucket-events consumer cannot tell the two apart.
 */
import { logError } from "../util/log";
import { configOf } from "../config";
import type { Env } from "../env";
import { requestIdFor } from "../http/request-id";
import { LATEST_VERSION, VERSION_HEADER } from "../http/versioning";
import { dropPrefix } from "../storage/drops";
import { regionStore } from "../storage/regions";
import { bucketKeysRepo } from "../storage/bucket-keys";
import { authenticateS3, type S3Caller } from "./auth";
import { payloadOf, readBody } from "./body";
import { dropConfig, regionOfBucket, bucketNames } from "./config";
import { S3Error, errorResponse, xmlEscape } from "./errors";
import { queryParams } from "./sigv4";
import { emitObjectEvent } from "./events";

export const S3_PATH_PREFIX = "/s3";

const XML_HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n';
const NS = 'xmlns="http://s3.amazonaws.com/doc/2006-03-01/"';

/**
 * The endpoint answers under /s3/ and also at the root for paths that start with one of the regional
 * bucket names (no API route does), so `--endpoint-url <origin>` works with clients that drop an
 * endpoint URL's path as well as `--endpoint-url <origin>/s3`.
 */
export function isS3Request(url: URL, env: Env): boolean {
  if (configOf(env).drops.mode !== "local") return false;
  if (url.pathname === S3_PATH_PREFIX || url.pathname.startsWith(`${S3_PATH_PREFIX}/`)) return true;
  const first = url.pathname.split("/")[1] ?? "";
  return first !== "" && regionOfBucket(env, safeSegment(first)) !== null;
}

function safeSegment(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The request's path below the endpoint: `/<bucket>/<key>`. */
function s3Path(url: URL): string {
  if (url.pathname === S3_PATH_PREFIX || url.pathname.startsWith(`${S3_PATH_PREFIX}/`))
    return url.pathname.slice(S3_PATH_PREFIX.length) || "/";
  return url.pathname;
}

function xml(body: string, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(XML_HEAD + body, { status, headers: { "Content-Type": "application/xml", ...headers } });
}

function quoted(etag: string): string {
  return etag.startsWith('"') ? etag : `"${etag}"`;
}

function decodeKey(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new S3Error("InvalidArgument", "The object key is not valid percent-encoding.");
  }
}

interface Target {
  bucket: string;
  key: string;
  params: Map<string, string>;
}

function targetOf(url: URL): Target {
  const rest = s3Path(url).replace(/^\//, "");
  const slash = rest.indexOf("/");
  const bucket = decodeKey(slash < 0 ? rest : rest.slice(0, slash));
  const key = slash < 0 ? "" : decodeKey(rest.slice(slash + 1));
  return { bucket, key, params: new Map(queryParams(url.search)) };
}

/** The caller's bucket and prefix: anything else is AccessDenied (or NoSuchBucket for unknown names). */
function assertReach(env: Env, caller: S3Caller, bucket: string, key: string | null): void {
  const region = regionOfBucket(env, bucket);
  if (!region) throw new S3Error("NoSuchBucket", `The bucket ${bucket} does not exist.`);
  const prefix = dropPrefix(caller.org.id);
  if (region !== caller.org.region)
    throw new S3Error("AccessDenied", `This key may only reach ${bucketNames(env)[caller.org.region]}/${prefix}.`);
  if (key !== null && !key.startsWith(prefix)) throw new S3Error("AccessDenied", `This key may only reach keys under ${prefix}.`);
}

export async function handleS3(req: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
  // One id under both names: S3 clients read x-amz-request-id, and X-Request-Id is on every response of
  // the service (spec 4.1), the caller's own when it sends a well-formed one.
  const requestId = requestIdFor(req.headers.get("X-Request-Id"));
  const res = await answer(req, env, ctx, requestId);
  res.headers.set("x-amz-request-id", requestId);
  res.headers.set("X-Request-Id", requestId);
  // So are the version headers (spec 4.1, part 9). The endpoint speaks S3 the same under every version of
  // the interface, so the version used is the latest, as on the unauthenticated routes.
  res.headers.set(VERSION_HEADER, LATEST_VERSION);
  res.headers.set("Service-Latest-Version", LATEST_VERSION);
  return res;
}

async function answer(req: Request, env: Env, ctx: ExecutionContext, requestId: string): Promise<Response> {
  const url = new URL(req.url);
  const head = req.method === "HEAD";
  let resource = s3Path(url);
  try {
    const config = dropConfig(env);
    if (config?.mode !== "local")
      throw new S3Error("NotImplemented", "The local S3 endpoint is not enabled here (BUCKET_KEYS_MODE=local).");
    const caller = await authenticateS3(env, req, url);
    ctx.waitUntil(
      bucketKeysRepo(regionStore(env, caller.org.region).db)
        .touch(caller.key.accessKeyId, new Date().toISOString())
        .catch(() => undefined),
    );
    const t = targetOf(url);
    resource = `/${t.bucket}${t.key ? `/${t.key}` : ""}`;
    return await route(env, req, caller, t);
  } catch (err) {
    if (err instanceof S3Error) return errorResponse(err, resource, requestId, head);
    logError("s3 endpoint failed", err, { request_id: requestId });
    return errorResponse(new S3Error("InternalError", "We encountered an internal error. Please try again."), resource, requestId, head);
  }
}

async function route(env: Env, req: Request, caller: S3Caller, t: Target): Promise<Response> {
  const method = req.method.toUpperCase();
  const files = regionStore(env, caller.org.region).files;
  if (t.bucket === "") {
    if (method !== "GET") throw new S3Error("MethodNotAllowed", "Only GET (ListBuckets) is allowed here.");
    const name = bucketNames(env)[caller.org.region];
    return xml(
      `<ListAllMyBucketsResult ${NS}><Owner><ID>${caller.org.id}</ID></Owner><Buckets><Bucket><Name>${name}</Name><CreationDate>${caller.org.createdAt}</CreationDate></Bucket></Buckets></ListAllMyBucketsResult>`,
    );
  }
  if (t.key === "") {
    assertReach(env, caller, t.bucket, null);
    if (method === "HEAD") return new Response(null, { status: 200, headers: { "x-amz-bucket-region": "auto" } });
    if (method === "GET" && t.params.has("location")) return xml(`<LocationConstraint ${NS}>auto</LocationConstraint>`);
    if (method === "GET" && !t.params.has("uploads")) return list(files, caller, t);
    throw new S3Error("NotImplemented", `${method} on a bucket is not supported by this endpoint.`);
  }
  assertReach(env, caller, t.bucket, t.key);
  const uploadId = t.params.get("uploadId");
  switch (method) {
    case "PUT": {
      if (req.headers.has("x-amz-copy-source")) throw new S3Error("NotImplemented", "CopyObject is not supported: upload the file.");
      const body = await payloadOf(await readBody(req), caller.parts.payloadHash, caller.chunkSigning);
      if (uploadId !== undefined) {
        const n = Number(t.params.get("partNumber"));
        if (!Number.isInteger(n) || n < 1 || n > 10000)
          throw new S3Error("InvalidArgument", "partNumber must be an integer from 1 to 10000.");
        const upload = files.resumeMultipartUpload(t.key, uploadId);
        try {
          const part = await upload.uploadPart(n, body);
          return new Response(null, { status: 200, headers: { ETag: quoted(part.etag) } });
        } catch (err) {
          throw r2UploadError(err);
        }
      }
      const obj = await files.put(t.key, body, {
        httpMetadata: { contentType: req.headers.get("content-type") ?? "application/octet-stream" },
      });
      await emitObjectEvent(env, { bucket: t.bucket, key: t.key, size: obj.size, eTag: obj.etag, action: "PutObject" });
      return new Response(null, { status: 200, headers: { ETag: quoted(obj.etag) } });
    }
    case "POST": {
      if (t.params.has("uploads")) {
        const upload = await files.createMultipartUpload(t.key, {
          httpMetadata: { contentType: req.headers.get("content-type") ?? "application/octet-stream" },
        });
        return xml(
          `<InitiateMultipartUploadResult ${NS}><Bucket>${xmlEscape(t.bucket)}</Bucket><Key>${xmlEscape(t.key)}</Key><UploadId>${xmlEscape(upload.uploadId)}</UploadId></InitiateMultipartUploadResult>`,
        );
      }
      if (uploadId !== undefined) {
        const raw = await payloadOf(await readBody(req, 1024 * 1024), caller.parts.payloadHash, caller.chunkSigning, 1024 * 1024);
        const parts = parseCompleteParts(new TextDecoder().decode(raw));
        let obj: R2Object;
        try {
          obj = await files.resumeMultipartUpload(t.key, uploadId).complete(parts);
        } catch (err) {
          throw r2UploadError(err);
        }
        await emitObjectEvent(env, { bucket: t.bucket, key: t.key, size: obj.size, eTag: obj.etag, action: "CompleteMultipartUpload" });
        return xml(
          `<CompleteMultipartUploadResult ${NS}><Location>${xmlEscape(new URL(req.url).href.split("?")[0])}</Location><Bucket>${xmlEscape(t.bucket)}</Bucket><Key>${xmlEscape(t.key)}</Key><ETag>${xmlEscape(quoted(obj.etag))}</ETag></CompleteMultipartUploadResult>`,
        );
      }
      throw new S3Error("NotImplemented", "This POST is not supported by this endpoint.");
    }
    case "DELETE": {
      if (uploadId !== undefined) {
        try {
          await files.resumeMultipartUpload(t.key, uploadId).abort();
        } catch (err) {
          throw r2UploadError(err);
        }
        return new Response(null, { status: 204 });
      }
      await files.delete(t.key);
      return new Response(null, { status: 204 });
    }
    case "HEAD":
    case "GET": {
      if (uploadId !== undefined) throw new S3Error("NotImplemented", "ListParts is not supported by this endpoint.");
      return getObject(files, req, t.key, method === "HEAD");
    }
    default:
      throw new S3Error("MethodNotAllowed", `${method} is not allowed.`);
  }
}

function r2UploadError(err: unknown): S3Error {
  const msg = String((err as Error)?.message ?? err);
  if (/upload.*(not|does not) exist|NoSuchUpload|10024/i.test(msg))
    return new S3Error("NoSuchUpload", "The specified multipart upload does not exist.");
  if (/too small|EntityTooSmall|10011/i.test(msg))
    return new S3Error("EntityTooSmall", "A part other than the last is smaller than the minimum allowed (5 MiB).");
  if (/part|10025/i.test(msg))
    return new S3Error("InvalidPart", `One or more of the parts could not be found or its ETag does not match (${msg}).`);
  return new S3Error("InternalError", msg);
}

/** `<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>"…"</ETag></Part>…` */
export function parseCompleteParts(body: string): R2UploadedPart[] {
  const parts: R2UploadedPart[] = [];
  for (const m of body.matchAll(/<Part>([\s\S]*?)<\/Part>/g)) {
    const n = /<PartNumber>\s*(\d+)\s*<\/PartNumber>/.exec(m[1]);
    const e = /<ETag>\s*([^<]*?)\s*<\/ETag>/.exec(m[1]);
    if (!n || !e) throw new S3Error("MalformedXML", "Each Part needs a PartNumber and an ETag.");
    const etag = e[1].replace(/&quot;/g, '"').replace(/^"|"$/g, "");
    parts.push({ partNumber: Number(n[1]), etag });
  }
  if (parts.length === 0) throw new S3Error("MalformedXML", "The CompleteMultipartUpload body names no parts.");
  for (let i = 1; i < parts.length; i++)
    if (parts[i].partNumber <= parts[i - 1].partNumber)
      throw new S3Error("InvalidPartOrder", "Parts must be listed in ascending PartNumber order.");
  return parts;
}

/** What a Range header asks of an object of `size` bytes, decided as S3 does (RFC 9110 section 14). */
type RangeAsk = { kind: "whole" } | { kind: "part"; offset: number; length: number } | { kind: "unsatisfiable" };

/**
 * S3 ignores a Range it cannot parse (other units, `bytes=5-2`, several ranges) and sends the whole
 * object; a range starting at or past the end (or `bytes=-0`) is 416 InvalidRange; an end past the
 * object is clamped to its last byte. R2 throws on an inverted range or a start past the end (which
 * surfaced as 500 InternalError), so the range is settled here, with the object's size in hand.
 */
function rangeAsk(header: string, size: number): RangeAsk {
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m || (m[1] === "" && m[2] === "")) return { kind: "whole" };
  if (m[1] === "") {
    const suffix = Number(m[2]);
    if (suffix === 0) return { kind: "unsatisfiable" };
    // An empty object has no last bytes to send: the whole (empty) object is the answer.
    if (size === 0) return { kind: "whole" };
    const length = Math.min(suffix, size);
    return { kind: "part", offset: size - length, length };
  }
  const first = Number(m[1]);
  const last = m[2] === "" ? Number.POSITIVE_INFINITY : Number(m[2]);
  if (last < first) return { kind: "whole" };
  if (first >= size) return { kind: "unsatisfiable" };
  return { kind: "part", offset: first, length: Math.min(last, size - 1) - first + 1 };
}

function invalidRange(header: string, size: number): S3Error {
  return new S3Error(
    "InvalidRange",
    `The requested range is not satisfiable: ${header} starts at or past the end of the object (${size} bytes).`,
    { "Content-Range": `bytes */${size}` },
    { RangeRequested: header, ActualObjectSize: String(size) },
  );
}

type Part = { offset: number; length: number };

/** The part of an object of `size` bytes a Range header asks for: none for the whole object, 416 if unsatisfiable. */
function partOf(rangeHeader: string | null, size: number): Part | undefined {
  if (!rangeHeader) return undefined;
  const ask = rangeAsk(rangeHeader, size);
  if (ask.kind === "unsatisfiable") throw invalidRange(rangeHeader, size);
  return ask.kind === "part" ? { offset: ask.offset, length: ask.length } : undefined;
}

function isRangeRefused(err: unknown): boolean {
  return err instanceof RangeError || /10039|range/i.test(String((err as Error)?.message ?? err));
}

/**
 * A ranged GET reads one version of the object. The range is settled against the size a head reports
 * (R2 refuses ranges S3 answers), and the read is pinned to that head's etag, so Content-Range always
 * describes the bytes sent. An object replaced between the two calls fails the pin (R2 answers without a
 * body, or refuses a range the new version is too short for): the head and read are done again, once.
 * Replaced again in that moment, the whole object is sent with 200, which HTTP allows for any Range and
 * which is consistent by construction (one read).
 */
async function readPinned(files: R2Bucket, key: string, rangeHeader: string): Promise<{ obj: R2ObjectBody; part?: Part }> {
  for (let attempt = 0; attempt < 2; attempt++) {
    const meta = await files.head(key);
    if (!meta) throw new S3Error("NoSuchKey", "The specified key does not exist.");
    const part = partOf(rangeHeader, meta.size);
    let obj: R2Object | R2ObjectBody | null;
    try {
      obj = await files.get(key, { onlyIf: { etagMatches: meta.etag }, ...(part ? { range: part } : {}) });
    } catch (err) {
      if (part && isRangeRefused(err)) continue;
      throw err;
    }
    if (!obj) throw new S3Error("NoSuchKey", "The specified key does not exist.");
    if ("body" in obj) return { obj: obj as R2ObjectBody, part };
  }
  const whole = await files.get(key);
  if (!whole) throw new S3Error("NoSuchKey", "The specified key does not exist.");
  return { obj: whole };
}

async function getObject(files: R2Bucket, req: Request, key: string, head: boolean): Promise<Response> {
  const rangeHeader = req.headers.get("range");
  let obj: R2Object | R2ObjectBody;
  let part: Part | undefined;
  if (head) {
    // S3 answers a HEAD with Range as it would the GET, without the body: 206 with the range's length, or 416.
    const meta = await files.head(key);
    if (!meta) throw new S3Error("NoSuchKey", "The specified key does not exist.");
    obj = meta;
    part = partOf(rangeHeader, meta.size);
  } else if (rangeHeader) {
    ({ obj, part } = await readPinned(files, key, rangeHeader));
  } else {
    const got = await files.get(key);
    if (!got) throw new S3Error("NoSuchKey", "The specified key does not exist.");
    obj = got;
  }
  const headers: Record<string, string> = {
    ETag: quoted(obj.etag),
    "Last-Modified": obj.uploaded.toUTCString(),
    "Content-Type": obj.httpMetadata?.contentType ?? "application/octet-stream",
    "Accept-Ranges": "bytes",
  };
  const body = head ? null : (obj as R2ObjectBody).body;
  if (part) {
    const { offset, length } = part;
    return new Response(body, {
      status: 206,
      headers: { ...headers, "Content-Range": `bytes ${offset}-${offset + length - 1}/${obj.size}`, "Content-Length": String(length) },
    });
  }
  return new Response(body, { status: 200, headers: { ...headers, "Content-Length": String(obj.size) } });
}

/** ListObjectsV2 (list-type=2) and ListObjects (v1, marker), within the caller's drop prefix. */
async function list(files: R2Bucket, caller: S3Caller, t: Target): Promise<Response> {
  const prefix = t.params.get("prefix") ?? "";
  const own = dropPrefix(caller.org.id);
  // Listing a parent of the drop prefix would show other tenants' names: only the drop area is listed.
  if (!prefix.startsWith(own)) throw new S3Error("AccessDenied", `This key may only list keys under ${own} (set prefix).`);
  const v2 = t.params.get("list-type") === "2";
  const delimiter = t.params.get("delimiter") || undefined;
  const maxKeys = Math.max(0, Math.min(1000, Number(t.params.get("max-keys") ?? "1000") || 1000));
  const urlEncode = t.params.get("encoding-type") === "url";
  const token = v2 ? t.params.get("continuation-token") : undefined;
  const startAfter = v2 ? t.params.get("start-after") : t.params.get("marker");
  const page = await files.list({
    prefix,
    delimiter,
    limit: maxKeys,
    cursor: token || undefined,
    startAfter: token ? undefined : startAfter || undefined,
  });
  const enc = (s: string) => xmlEscape(urlEncode ? encodeURIComponent(s).replace(/%2F/g, "/") : s);
  const contents = page.objects
    .map(
      (o) =>
        `<Contents><Key>${enc(o.key)}</Key><LastModified>${o.uploaded.toISOString()}</LastModified><ETag>${xmlEscape(quoted(o.etag))}</ETag><Size>${o.size}</Size><StorageClass>STANDARD</StorageClass></Contents>`,
    )
    .join("");
  const common = page.delimitedPrefixes.map((p) => `<CommonPrefixes><Prefix>${enc(p)}</Prefix></CommonPrefixes>`).join("");
  const truncated = page.truncated;
  const shared = `<Name>${xmlEscape(t.bucket)}</Name><Prefix>${enc(prefix)}</Prefix>${delimiter ? `<Delimiter>${enc(delimiter)}</Delimiter>` : ""}<MaxKeys>${maxKeys}</MaxKeys>${urlEncode ? "<EncodingType>url</EncodingType>" : ""}<IsTruncated>${truncated}</IsTruncated>`;
  if (v2) {
    const next = truncated ? `<NextContinuationToken>${xmlEscape(page.cursor)}</NextContinuationToken>` : "";
    const given = token ? `<ContinuationToken>${xmlEscape(token)}</ContinuationToken>` : "";
    const after = startAfter ? `<StartAfter>${enc(startAfter)}</StartAfter>` : "";
    return xml(
      `<ListBucketResult ${NS}>${shared}<KeyCount>${page.objects.length + page.delimitedPrefixes.length}</KeyCount>${given}${after}${next}${contents}${common}</ListBucketResult>`,
    );
  }
  const last = [...page.objects.map((o) => o.key), ...page.delimitedPrefixes].sort().pop();
  const nextMarker = truncated && last ? `<NextMarker>${enc(last)}</NextMarker>` : "";
  return xml(
    `<ListBucketResult ${NS}>${shared}<Marker>${enc(startAfter ?? "")}</Marker>${nextMarker}${contents}${common}</ListBucketResult>`,
  );
}
