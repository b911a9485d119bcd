import { beforeAll, describe, expect, it } from "vitest";
import { api, createOrg, type CreatedOrg } from "../helpers/tenant";
import { signaturePng } from "../helpers/signatures";
import { enrolWriter, expectProblem, type CheckResultBody } from "../helpers/checks";

// A JSON part arrives as a text field or as a file part typed JSON (what `curl -F
// 'request=@req.json;type=application/json'` and a FormData Blob send). Both must be the same request.

let org: CreatedOrg;
const WRITER = 23;

beforeAll(async () => {
  org = await createOrg();
  await enrolWriter(org.apiKey, "bob", WRITER, 3);
});

const checkRequest = () => ({ items: [{ file: "doc", subject_reference: "bob", input_type: "signature_image" }] });

/** A multipart body built by hand, as curl sends it: each part with its own headers. */
function rawMultipart(parts: { name: string; filename?: string; type?: string; body: Uint8Array | string }[]): {
  body: Uint8Array;
  contentType: string;
} {
  const boundary = `----curl${crypto.randomUUID().replace(/-/g, "")}`;
  const enc = new TextEncoder();
  const chunks: Uint8Array[] = [];
  for (const p of parts) {
    let head = `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"`;
    if (p.filename !== undefined) head += `; filename="${p.filename}"`;
    head += "\r\n";
    if (p.type !== undefined) head += `Content-Type: ${p.type}\r\n`;
    chunks.push(enc.encode(`${head}\r\n`), typeof p.body === "string" ? enc.encode(p.body) : p.body, enc.encode("\r\n"));
  }
  chunks.push(enc.encode(`--${boundary}--\r\n`));
  const body = new Uint8Array(chunks.reduce((n, c) => n + c.byteLength, 0));
  let at = 0;
  for (const c of chunks) {
    body.set(c, at);
    at += c.byteLength;
  }
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

function post(body: BodyInit, contentType?: string): Promise<Response> {
  const headers: Record<string, string> = { "Idempotency-Key": `mp-${crypto.randomUUID()}` };
  if (contentType) headers["Content-Type"] = contentType;
  return api("/sig/checks", { method: "POST", key: org.apiKey, body, headers });
}

async function expectChecked(res: Response): Promise<void> {
  const text = await res.text();
  expect(res.status, text).toBe(200);
  const body = JSON.parse(text) as CheckResultBody;
  expect(["APPROVE", "AUTO_APPROVE"]).toContain(body.decision);
  expect(body.subject_reference).toBe("bob");
}

describe("multipart JSON part `request` of POST /sig/checks", () => {
  it("accepts it as a FormData text field", async () => {
    const form = new FormData();
    form.append("request", JSON.stringify(checkRequest()));
    form.append("doc", new Blob([signaturePng(WRITER, 5)], { type: "image/png" }), "doc.png");
    await expectChecked(await post(form));
  });

  it("accepts it as a FormData Blob typed application/json", async () => {
    const form = new FormData();
    form.append("request", new Blob([JSON.stringify(checkRequest())], { type: "application/json" }), "blob");
    form.append("doc", new Blob([signaturePng(WRITER, 5)], { type: "image/png" }), "doc.png");
    await expectChecked(await post(form));
  });

  it("accepts it as a curl file part (filename, Content-Type: application/json)", async () => {
    const { body, contentType } = rawMultipart([
      { name: "request", filename: "req.json", type: "application/json", body: JSON.stringify(checkRequest()) },
      { name: "doc", filename: "doc.png", type: "image/png", body: signaturePng(WRITER, 6) },
    ]);
    await expectChecked(await post(body, contentType));
  });

  it("accepts it as a curl text field (no filename, no Content-Type)", async () => {
    const { body, contentType } = rawMultipart([
      { name: "request", body: JSON.stringify(checkRequest()) },
      { name: "doc", filename: "doc.png", type: "image/png", body: signaturePng(WRITER, 6) },
    ]);
    await expectChecked(await post(body, contentType));
  });

  it("accepts a +json media type with parameters", async () => {
    const { body, contentType } = rawMultipart([
      {
        name: "request",
        filename: "req.json",
        type: "application/vnd.countersign+json; charset=utf-8",
        body: JSON.stringify(checkRequest()),
      },
      { name: "doc", filename: "doc.png", type: "image/png", body: signaturePng(WRITER, 6) },
    ]);
    await expectChecked(await post(body, contentType));
  });

  it("refuses a file part of another type with 400 naming the part", async () => {
    const { body, contentType } = rawMultipart([
      { name: "request", filename: "req.png", type: "image/png", body: JSON.stringify(checkRequest()) },
      { name: "doc", filename: "doc.png", type: "image/png", body: signaturePng(WRITER, 6) },
    ]);
    const problem = await expectProblem(await post(body, contentType), 400, "invalid_request");
    expect(problem.errors[0].field).toBe("body.request");
    expect(problem.errors[0].message).toContain("application/json");
  });

  it("refuses a JSON file part that is not JSON with 400 naming the part", async () => {
    const { body, contentType } = rawMultipart([
      { name: "request", filename: "req.json", type: "application/json", body: "{not json" },
      { name: "doc", filename: "doc.png", type: "image/png", body: signaturePng(WRITER, 6) },
    ]);
    const problem = await expectProblem(await post(body, contentType), 400, "invalid_request");
    expect(problem.errors[0].field).toBe("body.request");
    expect(problem.errors[0].message).toBe("is not valid JSON");
  });

  it("names a member of the JSON file part that is invalid", async () => {
    const { body, contentType } = rawMultipart([
      { name: "request", filename: "req.json", type: "application/json", body: JSON.stringify({ items: "nope" }) },
      { name: "doc", filename: "doc.png", type: "image/png", body: signaturePng(WRITER, 6) },
    ]);
    const problem = await expectProblem(await post(body, contentType), 400, "invalid_request");
    expect(problem.errors[0].field).toBe("body.request.items");
  });
});
