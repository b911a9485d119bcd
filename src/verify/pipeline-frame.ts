/**
 * One live-capture preview frame: the quality figures and the single cue to show the person holding the
 * phone. The live WebSocket calls this for every frame (up to 5 per second), so it stays on the cheap
 * path: a frame is at most 640 px, quality runs on it as it is, and the locator looks for the signature.
 */
import { openDocument, sniffFormat } from "./decode";
import { runsOffImage } from "./cut-off";
import { locateSignatures } from "./locate";
import { assessQuality, type CaptureCue, type QualityReport } from "./quality";
import { VerifyError, isVerifyError, type Box, type Raster } from "./types";

/** Spec 4.4 and 8: frames are PNG or JPEG, at most 640 px on the long side and 512 KB. */
export const FRAME_MAX_SIDE = 640;
export const FRAME_MAX_BYTES = 512 * 1024;

/** A signature narrower than this share of the frame is too far away to judge. */
const MIN_SIGNATURE_SHARE = 0.3;

export interface FrameAnalysis {
  /** The cue to show now; `ready` when the frame is good to capture. */
  cue: CaptureCue;
  cues: CaptureCue[];
  /** Quality of the signature when one is in view, else of the whole frame. */
  score: number;
  ready: boolean;
  figures: QualityReport["figures"];
  /** The most likely signature in the frame, in frame pixels. */
  signature: { box: Box; confidence: number } | null;
}

export async function analyseFrame(bytes: Uint8Array, opts: { qualityFloor: number; inputType?: string }): Promise<FrameAnalysis> {
  if (bytes.byteLength > FRAME_MAX_BYTES) throw new VerifyError("too_large", `preview frames are at most ${FRAME_MAX_BYTES >> 10} KB`);
  const format = sniffFormat(bytes);
  if (format !== "png" && format !== "jpeg") throw new VerifyError("unsupported_format", "preview frames are PNG or JPEG");
  const tooBig = (size: string | undefined) =>
    new VerifyError("too_many_pixels", `preview frames are at most ${FRAME_MAX_SIDE} px on the long side${size ? ` (got ${size})` : ""}`);
  let frame: Raster;
  try {
    const doc = await openDocument(bytes, { maxBytes: FRAME_MAX_BYTES, maxPages: 1, maxPixelsPerPage: FRAME_MAX_SIDE * FRAME_MAX_SIDE });
    frame = await doc.decodePage(0);
  } catch (err) {
    // The pixel bound keeps an oversized frame from being decoded at all; its message speaks of document
    // pages ("page 1 declares ..."), so the client is told the frame rule instead.
    if (isVerifyError(err) && err.code === "too_many_pixels") throw tooBig(/\d+x\d+/.exec(err.message)?.[0]);
    throw err;
  }
  if (Math.max(frame.width, frame.height) > FRAME_MAX_SIDE) throw tooBig(`${frame.width}x${frame.height}`);
  const inputType = opts.inputType ?? "photo";
  const whole = assessQuality(frame, { inputType, kind: "frame" });
  // Too dark, too bright or shaking: say so before looking for the signature.
  if (whole.score < opts.qualityFloor || whole.cue !== "ready") return result(whole, null, opts.qualityFloor);

  const found = locateSignatures([frame], { inputType, preview: true });
  if (found.length === 0) {
    const cues: CaptureCue[] = ["no_signature_in_view"];
    return { cue: cues[0], cues, score: whole.score, ready: false, figures: whole.figures, signature: null };
  }
  const best = found.reduce((a, b) => (b.confidence > a.confidence ? b : a));
  const crop = assessQuality(frame, { inputType, region: best.box, kind: "crop" });
  let cues = crop.cues.filter((c) => c !== "ready");
  if (runsOffImage(best.box, frame)) {
    // Said before the capture, instead of letting it become a low score.
    // Moving closer would cut off more: framing comes first.
    cues = [...cues.filter((c) => c !== "move_closer"), "signature_cut_off"];
  } else if (best.box.w < frame.width * MIN_SIGNATURE_SHARE && !cues.includes("move_closer")) {
    cues.push("move_closer");
  }
  const report: QualityReport = { ...crop, cues: cues.length ? cues : ["ready"], cue: cues[0] ?? "ready" };
  return result(report, { box: best.box, confidence: best.confidence }, opts.qualityFloor);
}

function result(q: QualityReport, signature: FrameAnalysis["signature"], floor: number): FrameAnalysis {
  const ready = q.cue === "ready" && q.score >= floor;
  return { cue: q.cue, cues: q.cues, score: q.score, ready, figures: q.figures, signature };
}
