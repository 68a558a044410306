import pino, { type Logger } from "pino"
import type { Config } from "../config/config.ts"
import { redactor, secretsOf, type SecretSources } from "./redact.ts"

/** An error-level log line, as `steward status` shows it. */
export interface LoggedError {
  at: string
  message: string
  error?: string
}

/** Logs go to LOG_FILE or stderr — never stdout, which belongs to the console chat. Lines at
 *  level error and above are handed to `onError` too (the server keeps the latest in its store).
 *  Every line is redacted once it is serialised, whole: a secret is caught wherever it hides — a
 *  message, an error's nested cause, a property of an object a library attached, a URL. */
export function createLogger(config: Pick<Config, "logLevel" | "logFile"> & SecretSources, onError?: (entry: LoggedError) => void): Logger {
  const destination = config.logFile ? pino.destination({ dest: config.logFile, mkdir: true, sync: false, mode: 0o600 }) : pino.destination(2)
  const options = { level: config.logLevel, base: undefined, hooks: { streamWrite: redactor(secretsOf(config)) } }
  if (!onError) return pino(options, destination)
  const errors = { write: (line: string) => onError(loggedError(line)) }
  return pino(options, pino.multistream([{ level: config.logLevel === "silent" ? "fatal" : config.logLevel, stream: destination }, { level: "error", stream: errors }]))
}

function loggedError(line: string): LoggedError {
  const entry = JSON.parse(line) as { time?: number; msg?: string; err?: { message?: string } }
  return { at: new Date(entry.time ?? Date.now()).toISOString(), message: entry.msg ?? "(no message)", ...(entry.err?.message ? { error: entry.err.message } : {}) }
}
