/**
 * The local S3 endpoint's Signature V4 checks against the examples AWS publishes for S3
 * ("Signature Calculations for the Authorization Header" and "Transferring Payload in Multiple Chunks"),
 * so the endpoint agrees with AWS's definition and not only with one client library.
 */
import { describe, expect, it } from "vitest";
import { chunkSignature, expectedSignature, parseSignature, signingKey } from "../../src/s3/sigv4";
import { payloadOf } from "../../src/s3/body";

const SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

describe("Signature V4 (AWS's S3 examples)", () => {
  it("GET Object with a Range header", async () => {
    const url = new URL("https://examplebucket.s3.amazonaws.com/test.txt");
    const req = new Request(url, {
      headers: {
        Host: "examplebucket.s3.amazonaws.com",
        Range: "bytes=0-9",
        "x-amz-content-sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "x-amz-date": "20130524T000000Z",
        Authorization:
          "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
      },
    });
    const parts = parseSignature(req, url);
    expect(parts && !("error" in parts)).toBe(true);
    const { signature } = await expectedSignature(req, url, parts as never, SECRET);
    expect(signature).toBe("f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
  });

  it("a signed aws-chunked upload: each chunk's signature chains from the seed", async () => {
    const key = await signingKey(SECRET, "20130524", "us-east-1", "s3");
    const scope = "20130524/us-east-1/s3/aws4_request";
    const seed = "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9";
    const a = new Uint8Array(65536).fill(0x61);
    const b = new Uint8Array(1024).fill(0x61);
    const s1 = await chunkSignature(key, "20130524T000000Z", scope, seed, a);
    expect(s1).toBe("ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648");
    const s2 = await chunkSignature(key, "20130524T000000Z", scope, s1, b);
    expect(s2).toBe("0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497");
    const s3 = await chunkSignature(key, "20130524T000000Z", scope, s2, new Uint8Array(0));
    expect(s3).toBe("b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9");

    const enc = new TextEncoder();
    const body = new Uint8Array([
      ...enc.encode(`10000;chunk-signature=${s1}\r\n`),
      ...a,
      ...enc.encode("\r\n"),
      ...enc.encode(`400;chunk-signature=${s2}\r\n`),
      ...b,
      ...enc.encode("\r\n"),
      ...enc.encode(`0;chunk-signature=${s3}\r\n\r\n`),
    ]);
    const signing = { key, amzDate: "20130524T000000Z", scope, seedSignature: seed };
    const decoded = await payloadOf(body, "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", signing);
    expect(decoded.byteLength).toBe(66560);
    // One byte changed in the first chunk breaks its signature.
    const tampered = body.slice();
    tampered[200] = 0x62;
    await expect(payloadOf(tampered, "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", signing)).rejects.toMatchObject({
      code: "SignatureDoesNotMatch",
    });
  });

  it("an unsigned chunked body with a trailing checksum decodes to its data, and a hex payload hash must match", async () => {
    const enc = new TextEncoder();
    const body = enc.encode("5\r\nhello\r\n6\r\n world\r\n0\r\nx-amz-checksum-crc32:DUoRhQ==\r\n\r\n");
    expect(new TextDecoder().decode(await payloadOf(body, "STREAMING-UNSIGNED-PAYLOAD-TRAILER", null))).toBe("hello world");
    await expect(payloadOf(enc.encode("hello"), "0".repeat(64), null)).rejects.toMatchObject({ code: "XAmzContentSHA256Mismatch" });
  });
});
