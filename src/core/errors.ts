import { randomBytes } from "node:crypto"
import type { Logger } from "pino"

/** What an error says, for a log line, a tool result or a message: its message, or the thrown value. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/**
 * What users are told of a failure they cannot fix: a reference, never the error itself. A
 * provider's or Steward's own error can name internal hosts, paths, accounts or credentials
 * ("upstream llm-gw-07.corp.internal:8443 failed: db password rejected"); it goes to the log
 * under the reference, where the owner finds it (`grep <reference>` in the log).
 */

/** Logs `error` at error level with a fresh reference and returns that reference. */
export function incident(log: Pick<Logger, "error">, error: unknown, what: string, fields: Record<string, unknown> = {}): string {
  const ref = `ref-${randomBytes(4).toString("hex")}`
  log.error({ ...fields, err: error, ref }, what)
  return ref
}

/** The chat text for a failure logged under `ref`: `doing` says what could not be done. */
export function apology(ref: string, doing = "I could not answer that"): string {
  return `Sorry — ${doing} because of an error on my side. If it keeps happening, give the owner this reference: ${ref}.`
}

/** A failure's short description for a report or notice a user reads, logged under its reference. */
export function internalError(log: Pick<Logger, "error">, error: unknown, what: string, fields: Record<string, unknown> = {}): string {
  return `an internal error (reference ${incident(log, error, what, fields)})`
}
