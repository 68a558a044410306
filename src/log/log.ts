import pino, { type DestinationStream, type Logger } from "pino"
import type { Config } from "../config/config.ts"
import { redactor, secretsOf, type SecretSources } from "./redact.ts"
import { errorSerializer } from "./error-fields.ts"

/** An error-level log line, as `steward status` shows it. */
export interface LoggedError {
  at: string
  message: string
  error?: string
}

/** Logs go to LOG_FILE or stderr — never stdout, which belongs to the console chat. On stderr
 *  that is a terminal (`pretty`) they are lines for a person (time, level, message, fields);
 *  anywhere else JSON lines for a machine. Lines at level error and above are handed to
 *  `onError` too (the server keeps the latest in its store). pino-pretty is loaded only when it
 *  is used: it costs start-up time. Every line is redacted once it is serialised, whole: a secret
 *  is caught wherever it hides — a message, an error's nested cause, a property of an object a
 *  library attached, a URL. */
export async function createLogger(config: Pick<Config, "logLevel" | "logFile"> & SecretSources, onError?: (entry: LoggedError) => void, { pretty = false }: { pretty?: boolean } = {}): Promise<Logger> {
  const destination: DestinationStream = config.logFile
    ? pino.destination({ dest: config.logFile, mkdir: true, sync: false, mode: 0o600 })
    : pretty
      ? (await import("pino-pretty")).default({ destination: 2, sync: true, colorize: true, translateTime: "SYS:HH:MM:ss", ignore: "pid,hostname" })
      : pino.destination(2)
  const options = { level: config.logLevel, base: undefined, hooks: { streamWrite: redactor(secretsOf(config)) }, serializers: { err: errorSerializer(config.logLevel === "debug" || config.logLevel === "trace") } }
  if (!onError) return pino(options, destination)
  const errors = { write: (line: string) => onError(loggedError(line)) }
  return pino(options, pino.multistream([{ level: config.logLevel === "silent" ? "fatal" : config.logLevel, stream: destination }, { level: "error", stream: errors }]))
}

function loggedError(line: string): LoggedError {
  const entry = JSON.parse(line) as { time?: number; msg?: string; err?: { message?: string } }
  return { at: new Date(entry.time ?? Date.now()).toISOString(), message: entry.msg ?? "(no message)", ...(entry.err?.message ? { error: entry.err.message } : {}) }
}
