/**
 * Waiting out an organisation's move (src/storage/move.ts) without spending a message's retries: while
 * its organisation moves, a message is acked and sent again, delayed, as a fresh message carrying the
 * deadline of its whole wait (`deferUntil`, epoch ms). A move of any length up to the deadline so uses
 * none of the retries (max_retries) kept for failures; past it the message is retried as a failure and
 * ends in the dead-letter queue, whose handler ends its work visibly.
 */
import { logError } from "../util/log";
import { backoffSeconds } from "./retry";

/** How long a message waits in all for its organisation's move to end. */
export const MOVE_WAIT_MS = 24 * 60 * 60 * 1000;
/** How long each step of the wait is. */
export const MOVE_DELAY_SECONDS = 30;

/**
 * A message body as it may arrive after a deferral. `deferUntil` is additive: nothing else of the body
 * changes, and no id or key is derived from it.
 */
export type Deferred<T> = T & { deferUntil?: number };

export interface DeferOptions {
  /** The delay of this step; default MOVE_DELAY_SECONDS. */
  delaySeconds?: number;
  /** The whole wait, from the first deferral; default MOVE_WAIT_MS. */
  waitMs?: number;
  /** Names the message in logs ("enrolment", "webhook delivery", ...). */
  what: string;
}

/**
 * Acks `message` and sends a delayed copy of it to `queue` (its own queue) while its deadline has not
 * passed; past the deadline, or if the copy cannot be sent, retries it instead. Either way the message
 * is settled.
 */
export async function deferForMove<T>(message: Message<T>, queue: Queue, opts: DeferOptions): Promise<void> {
  const delaySeconds = opts.delaySeconds ?? MOVE_DELAY_SECONDS;
  const body = message.body as Deferred<Record<string, unknown>>;
  const logged = { message_id: message.id, attempts: message.attempts, body: JSON.stringify(body).slice(0, 1024) };
  const deferUntil = typeof body.deferUntil === "number" ? body.deferUntil : Date.now() + (opts.waitMs ?? MOVE_WAIT_MS);
  if (Date.now() >= deferUntil) {
    logError(`${opts.what} still waiting for its organisation's move past its deadline; retrying as a failure`, undefined, logged);
    message.retry({ delaySeconds: backoffSeconds(message.attempts) });
    return;
  }
  try {
    await queue.send({ ...body, deferUntil }, { delaySeconds });
    message.ack();
  } catch (err) {
    // The retry spends an attempt, but the message is not lost.
    logError(`${opts.what} could not be deferred for its organisation's move; retrying`, err, logged);
    message.retry({ delaySeconds });
  }
}
