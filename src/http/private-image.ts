/**
 * The image routes (reference thumbnail, check crop) show a person's signature: never cached by a
 * browser or a proxy, and never sniffed into another type.
 */
export const PRIVATE_IMAGE_HEADERS = {
  "Content-Type": "image/png",
  "Cache-Control": "private, no-store",
  "X-Content-Type-Options": "nosniff",
} as const;

export function privatePng(png: Uint8Array): Response {
  return new Response(png, { status: 200, headers: PRIVATE_IMAGE_HEADERS });
}

/** The 200 response of an image route, for its contract: the headers above are part of it (spec 4.2, 4.3). */
export function privatePngResponse(description: string) {
  return {
    description,
    headers: {
      "Cache-Control": { description: "private, no-store", schema: { type: "string" as const } },
      "X-Content-Type-Options": { description: "nosniff", schema: { type: "string" as const } },
    },
    content: { "image/png": { schema: { type: "string" as const, format: "binary" } } },
  };
}
