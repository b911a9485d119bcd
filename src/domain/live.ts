/**
 * The live capture protocol (spec 4.4, 8): limits, the frame-rate window, close rules, and LiveMessage,
 * the one JSON text reply every client message gets. Documented in docs/live-capture.md.
 */
import type { CaptureCue } from "../verify/quality";
import type { FrameAnalysis } from "../verify/pipeline-frame";

export const LIVE_MAX_FRAMES_PER_SECOND = 5;
export const LIVE_RATE_WINDOW_MS = 1000;
export const LIVE_TENANT_CONNECTIONS = 20;
export const LIVE_INSTANCE_CONNECTIONS = 200;
export const LIVE_IDLE_MS = 60_000;
export const LIVE_MAX_MS = 10 * 60_000;
/** Credentials of open connections are re-checked this often (spec: at least every 30 s). */
export const LIVE_RECHECK_MS = 30_000;

/** Close codes. 1008 (policy violation) is the spec's for a credential that became invalid. */
export const CLOSE_IDLE = 1000;
export const CLOSE_MAX_DURATION = 1000;
export const CLOSE_CREDENTIAL = 1008;

export interface LiveTimings {
  idleMs: number;
  maxMs: number;
  recheckMs: number;
}

/** A sentence to show for each cue, in plain words. */
export const CUE_TEXT: Record<CaptureCue, string> = {
  ready: "Hold still: ready to capture.",
  no_signature_in_view: "Point the camera at the signature.",
  too_dark: "Too dark: find more light.",
  too_bright: "Too bright: avoid glare and direct light.",
  low_contrast: "The ink is faint: use more even light.",
  hold_steady: "Blurred: hold the phone steady.",
  move_closer: "Move closer so the signature fills the frame.",
  signature_cut_off: "Part of the signature is outside the frame: move back or centre it.",
};

/** `analysis_failed`: the frame could not be analysed through a fault of ours (it may be fine); send the next. */
export type LiveErrorCode = "too_fast" | "frame_too_large" | "unsupported_frame" | "unreadable_frame" | "analysis_failed";

/** Reply to a frame that was analysed. */
export interface LiveGuidance {
  type: "guidance";
  /** 1-based number of the client message this answers. */
  seq: number;
  cue: CaptureCue;
  cues: CaptureCue[];
  message: string;
  ready: boolean;
  quality: { score: number; figures: FrameAnalysis["figures"] };
  signature: FrameAnalysis["signature"];
}

/** Reply to a message that was not analysed; the connection stays open. */
export interface LiveError {
  type: "error";
  seq: number;
  code: LiveErrorCode;
  detail: string;
  /** For too_fast: when the next frame will be taken. */
  retry_after_ms?: number;
}

export type LiveMessage = LiveGuidance | LiveError;

export function guidance(seq: number, a: FrameAnalysis): LiveGuidance {
  return {
    type: "guidance",
    seq,
    cue: a.cue,
    cues: a.cues,
    message: CUE_TEXT[a.cue],
    ready: a.ready,
    quality: { score: round(a.score), figures: a.figures },
    signature: a.signature ? { box: a.signature.box, confidence: round(a.signature.confidence) } : null,
  };
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}

/**
 * The frame-rate rule: at most `max` frames taken in any `windowMs`. `taken` holds the arrival times of
 * the last taken frames (oldest first). Refused frames do not count, so a client that sends too fast
 * still gets five frames a second analysed rather than being locked out.
 */
export function admitFrame(
  taken: readonly number[],
  now: number,
  max = LIVE_MAX_FRAMES_PER_SECOND,
  windowMs = LIVE_RATE_WINDOW_MS,
): { ok: true; taken: number[] } | { ok: false; retryAfterMs: number } {
  const recent = taken.filter((t) => now - t < windowMs);
  if (recent.length >= max) return { ok: false, retryAfterMs: Math.max(1, recent[recent.length - max] + windowMs - now) };
  return { ok: true, taken: [...recent, now] };
}

/** The earliest instant a connection needs attention: idle, past its maximum, or due a credential check. */
export function nextDeadline(c: { openedAt: number; lastDataAt: number; checkedAt: number }, t: LiveTimings): number {
  return Math.min(c.lastDataAt + t.idleMs, c.openedAt + t.maxMs, c.checkedAt + t.recheckMs);
}

/** Why a connection must close now, or null. The credential is judged separately. */
export function closeReason(c: { openedAt: number; lastDataAt: number }, t: LiveTimings, now: number): "idle" | "max_duration" | null {
  if (now - c.openedAt >= t.maxMs) return "max_duration";
  if (now - c.lastDataAt >= t.idleMs) return "idle";
  return null;
}
