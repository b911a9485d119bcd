/**
 * Whether a located signature runs out of its image: its box comes within EDGE_MARGIN_SHARE of the
 * image's side (and 2 px) of an edge. What lies past the edge is lost to the comparison: with a tail cut
 * at the edge, 44% of genuine Bengali signatures are no longer approved at N = 10 (docs/accuracy.md,
 * `tail-cropped`). The live guide says so before the capture (pipeline-frame.ts); a check's result marks
 * such a signature, so that a low score is read for what it may be.
 */
import type { Box } from "./types";

const EDGE_MARGIN_SHARE = 0.01;

export function runsOffImage(box: Box, image: { width: number; height: number }): boolean {
  const mx = Math.max(2, image.width * EDGE_MARGIN_SHARE);
  const my = Math.max(2, image.height * EDGE_MARGIN_SHARE);
  return box.x < mx || box.y < my || box.x + box.w > image.width - mx || box.y + box.h > image.height - my;
}
