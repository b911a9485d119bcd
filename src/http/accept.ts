/**
 * Whether an Accept header asks for a Server-Sent Events stream (spec 4.2: `Accept: text/event-stream`):
 * `text/event-stream` named with a quality above 0 and at least that of JSON (`application/json`,
 * `application/*` or `*\/*`, the most specific range giving JSON's quality, RFC 9110 12.5.1). A client that
 * lists the stream with `q=0` refuses it, and one that prefers JSON gets JSON. Wildcards alone never ask for
 * a stream: it changes how the answer must be read.
 */
export function wantsEventStream(accept: string | undefined): boolean {
  if (!accept) return false;
  let stream = -1;
  let json = -1;
  let jsonSpecificity = -1;
  for (const part of accept.split(",")) {
    const [range, ...params] = part.split(";").map((p) => p.trim().toLowerCase());
    if (!range) continue;
    let q = 1;
    for (const p of params) {
      const m = /^q=([01](?:\.\d{0,3})?)$/.exec(p);
      if (m) q = Math.min(1, Number(m[1]));
    }
    if (range === "text/event-stream") stream = Math.max(stream, q);
    const specificity = range === "application/json" ? 2 : range === "application/*" ? 1 : range === "*/*" ? 0 : -1;
    if (specificity > jsonSpecificity) {
      jsonSpecificity = specificity;
      json = q;
    } else if (specificity === jsonSpecificity && specificity >= 0) json = Math.max(json, q);
  }
  return stream > 0 && stream >= json;
}
