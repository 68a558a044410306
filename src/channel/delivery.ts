import type { OutgoingMessage } from "../core/types.ts"
import { splitPlain, UndeliverableMessage, type Channel } from "./channel.ts"

/** Backoff after a transient failure (of a send, or of the write that records one): 1 s
 *  doubling, capped at 5 min. */
const FIRST_RETRY_MS = 1000
const MAX_RETRY_MS = 5 * 60_000
export const backoffMs = (attempt: number): number => Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.min(attempt - 1, 30))

/**
 * What a failed send means for its record:
 * - "transient": the platform or the network is not available now — retried with backoff, no limit;
 * - "refused": the platform refused the request itself (`Channel.isPermanent`) or the adapter
 *   says it can never be posted (`UndeliverableMessage`) — failed at once;
 * - "local": the adapter's own code threw (a JavaScript RangeError, TypeError… — a renderer
 *   that ran out of stack on deeply nested Markdown): sent once more as plain text, and failed
 *   if that throws too. Network failures never arrive as these: grammY and the Slack client
 *   wrap them in errors of their own.
 */
export type FailureKind = "transient" | "refused" | "local"

const LOCAL_ERRORS = [RangeError, TypeError, SyntaxError, ReferenceError, EvalError, URIError]

export function classify(channel: Channel, error: unknown, onClassifierError: (error: unknown) => void): FailureKind {
  if (error instanceof UndeliverableMessage) return "refused"
  let permanent = false
  try {
    permanent = channel.isPermanent?.(error) === true
  } catch (classifying) {
    onClassifierError(classifying)
  }
  if (permanent) return "refused"
  return LOCAL_ERRORS.some((type) => error instanceof type && error.constructor === type) ? "local" : "transient"
}

const ATTACHMENT_NAME = "reply.md"
const CUT_NOTE = `\n\n… (the whole reply is in the attached file ${ATTACHMENT_NAME})`

/**
 * A reply longer than `maxMessages` of the channel's messages is sent as its first part plus
 * the whole text as a file; anything shorter is sent as it is.
 */
export function capped(message: OutgoingMessage, channel: Channel, maxMessages: number): OutgoingMessage {
  const limit = channel.messageLimit
  if (!limit || message.text.length <= limit * maxMessages) return message
  const [first = ""] = splitPlain(message.text, limit - CUT_NOTE.length)
  return { ...message, text: first + CUT_NOTE, attachment: { name: ATTACHMENT_NAME, text: message.text } }
}
