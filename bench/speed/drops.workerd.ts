/**
 * Bucket drop latency, in workerd with the whole service: a batch of 50 signature images and its
 * manifest uploaded through the local S3 endpoint with the AWS SDK, and the time from the last upload
 * (the manifest) until summary.json can be read back. Everything in between is the real path: the
 * event message, the bucket-events consumer, the check queue (one item per message), the Job DO, and
 * the summary write. `npm run bench:speed`; not part of `npm test`.
 */
import { it } from "vitest";
import { HeadObjectCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { createOrg } from "../../test/helpers/tenant";
import { enrolWriter } from "../../test/helpers/checks";
import { signaturePng } from "../../test/helpers/signatures";
import { issueBucketKey, s3Client } from "../../test/helpers/s3";

const BATCH = 50;

it("bucket drop: 50 signatures, last upload to summary.json", async () => {
  const org = await createOrg();
  await enrolWriter(org.apiKey, "alice", 41, 3);
  const key = await issueBucketKey(org.apiKey);
  const s3 = s3Client(key.access_key_id, key.secret_access_key);
  const folder = `${key.prefix}batches/bench-50/`;

  const items = [];
  for (let i = 0; i < BATCH; i++) {
    const file = `sig-${String(i).padStart(2, "0")}.png`;
    await s3.send(
      new PutObjectCommand({
        Bucket: key.bucket,
        Key: `${folder}${file}`,
        Body: signaturePng(i % 2 === 0 ? 41 : 42, i),
        ContentType: "image/png",
      }),
    );
    items.push({ file, subject_reference: "alice", input_type: "signature_image", reference: `bench-${i}` });
  }
  const manifest = new TextEncoder().encode(JSON.stringify({ items }));
  await s3.send(
    new PutObjectCommand({ Bucket: key.bucket, Key: `${folder}manifest.json`, Body: manifest, ContentType: "application/json" }),
  );
  const lastUpload = performance.now();

  for (;;) {
    try {
      await s3.send(new HeadObjectCommand({ Bucket: key.bucket, Key: `${folder}summary.json` }));
      break;
    } catch (err) {
      if ((err as { name?: string }).name !== "NotFound" && (err as { name?: string }).name !== "NoSuchKey") throw err;
    }
    if (performance.now() - lastUpload > 540_000) throw new Error("summary.json did not appear within 9 minutes");
    await new Promise((r) => setTimeout(r, 50));
  }
  const ms = performance.now() - lastUpload;
  console.log(
    `\nbucket drop, ${BATCH} signatures: last upload -> summary.json ${(ms / 1000).toFixed(2)} s (${(ms / BATCH).toFixed(0)} ms per signature)\n`,
  );
});
