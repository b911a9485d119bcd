/** Encoded signature images of synthetic writers, for enrolment and check tests. */
import { encodePng, makeWriter, renderSignature } from "../fixtures/generator";

/** A PNG of writer `writer`'s signing number `variant`. */
export function signaturePng(writer: number, variant: number): Uint8Array {
  return encodePng(renderSignature(makeWriter(writer), { variant, height: 200 }));
}

/** A multipart body with one file part per ref_id (and optional source.<ref_id> fields). */
export function referencesForm(files: Record<string, Uint8Array | Blob>, sources: Record<string, string> = {}): FormData {
  const form = new FormData();
  for (const [refId, bytes] of Object.entries(files)) {
    const blob = bytes instanceof Blob ? bytes : new Blob([bytes], { type: "image/png" });
    form.append(refId, blob, `${refId}.png`);
  }
  for (const [refId, source] of Object.entries(sources)) form.append(`source.${refId}`, source);
  return form;
}

export function toBase64(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}
