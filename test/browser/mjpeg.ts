/**
 * A fake camera for Chromium (`--use-file-for-fake-video-capture=<file>.mjpeg`): an MJPEG file is JPEG
 * frames one after another, which Chromium plays in a loop at 30 frames a second. The first second shows
 * an empty sheet of paper, the next two a signature filling the frame, so a page sees its cue change.
 */
import { writeFileSync } from "node:fs";
import { blankPage, encodeJpeg, photoOf } from "../fixtures/generator";
import { signingSheet } from "../helpers/frames";

export function writeSigningMjpeg(file: string, writer: number): void {
  const empty = encodeJpeg(photoOf(blankPage(640, 480), { seed: 2, illumination: 0.15 }), 85);
  const signed = encodeJpeg(photoOf(signingSheet(640, 480, writer), { seed: 1, illumination: 0.15 }), 85);
  const frames = [...Array(30).fill(empty), ...Array(60).fill(signed)] as Uint8Array[];
  const out = new Uint8Array(frames.reduce((n, f) => n + f.length, 0));
  let at = 0;
  for (const f of frames) {
    out.set(f, at);
    at += f.length;
  }
  writeFileSync(file, out);
}
