/** Test helper for form templates: blank forms, filled and photographed forms, and template bodies. */
import { api } from "./tenant";
import { encodePng, makeWriter, photoOf, renderForm, signatureBoxes } from "../fixtures/generator";
import type { Box } from "../../src/verify/types";

/** Two signature boxes on an A4 page at 150 dpi, as the fixture form lays them out. */
export const FORM_BOXES: Box[] = signatureBoxes(1240, 1754, 2);
export const FORM_SEED = 9;

export function blankFormPng(): Uint8Array {
  return encodePng(renderForm({ signatures: [], boxes: FORM_BOXES, seed: FORM_SEED }).raster);
}

/**
 * A phone photo of the form signed by `writer` in box `box` (0 or 1), in the fixtures' phone-photo look:
 * turned 2 degrees, uneven light, lower contrast, blur and sensor noise. Returns the PNG and where the signature's ink lies in
 * the photo (the photo keeps the page's size, so the ink box moves only by the small rotation).
 */
export function photographedForm(writer: number, box: number, variant = 3): { png: Uint8Array; inkBox: Box } {
  const filled = renderForm({
    signatures: [{ writer: makeWriter(writer), variant, box: FORM_BOXES[box] }],
    boxes: FORM_BOXES,
    seed: FORM_SEED,
  });
  const photo = photoOf(filled.raster, { seed: 5, rotation: 2 });
  return { png: encodePng(photo), inkBox: filled.signatures[0].inkBox };
}

/** A different form (another layout) signed by `writer`: it does not register to the template. */
export function otherForm(writer: number): Uint8Array {
  return encodePng(renderForm({ signatures: [{ writer: makeWriter(writer), box: FORM_BOXES[1] }], seed: 77, stamp: false }).raster);
}

export function templateBody(template: unknown, blank: Uint8Array | Blob, blankType = "image/png"): FormData {
  const form = new FormData();
  form.append("template", JSON.stringify(template));
  form.append("blank", blank instanceof Blob ? blank : new Blob([blank], { type: blankType }), "blank.png");
  return form;
}

export function postTemplate(key: string, body: FormData, idem = `t-${crypto.randomUUID()}`): Promise<Response> {
  return api("/sig/templates", { method: "POST", key, body, headers: { "Idempotency-Key": idem } });
}

export const BOX_SPEC = [
  { name: "borrower", page: 1, ...FORM_BOXES[0] },
  { name: "co_borrower", page: 1, ...FORM_BOXES[1] },
];
