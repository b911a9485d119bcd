/** S3-style errors: the XML error document S3 clients parse, with the status S3 gives each code. */

const STATUS: Record<string, number> = {
  AccessDenied: 403,
  AuthorizationHeaderMalformed: 400,
  AuthorizationQueryParametersError: 400,
  EntityTooLarge: 400,
  EntityTooSmall: 400,
  IncompleteBody: 400,
  InternalError: 500,
  InvalidAccessKeyId: 403,
  InvalidArgument: 400,
  InvalidBucketName: 400,
  InvalidPart: 400,
  InvalidPartOrder: 400,
  InvalidRange: 416,
  InvalidRequest: 400,
  MalformedXML: 400,
  MethodNotAllowed: 405,
  MissingContentLength: 411,
  NoSuchBucket: 404,
  NoSuchKey: 404,
  NoSuchUpload: 404,
  NotImplemented: 501,
  RequestTimeTooSkewed: 403,
  ServiceUnavailable: 503,
  SignatureDoesNotMatch: 403,
  XAmzContentSHA256Mismatch: 400,
};

export class S3Error extends Error {
  readonly status: number;
  constructor(
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
    /** Further elements of the error document, as S3 adds for some codes (InvalidRange's ActualObjectSize). */
    readonly fields: Record<string, string> = {},
  ) {
    super(message);
    this.name = "S3Error";
    this.status = STATUS[code] ?? 400;
  }
}

export function xmlEscape(s: string): string {
  return s.replace(/[<>&'"]/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", "'": "&apos;", '"': "&quot;" })[c]!);
}

export function errorResponse(err: S3Error, resource: string, requestId: string, head = false): Response {
  const body =
    `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${err.code}</Code><Message>${xmlEscape(err.message)}</Message>` +
    Object.entries(err.fields)
      .map(([k, v]) => `<${k}>${xmlEscape(v)}</${k}>`)
      .join("") +
    `<Resource>${xmlEscape(resource)}</Resource><RequestId>${requestId}</RequestId></Error>`;
  return new Response(head ? null : body, {
    status: err.status,
    headers: { "Content-Type": "application/xml", "x-amz-request-id": requestId, "X-Request-Id": requestId, ...err.headers },
  });
}
