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
