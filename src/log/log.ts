import pino, { type Logger } from "pino"
import type { Config } from "../config/config.ts"

/** Logs go to LOG_FILE or stderr — never stdout, which belongs to the console chat. */
export function createLogger(config: Pick<Config, "logLevel" | "logFile">): Logger {
  const destination = config.logFile ? pino.destination({ dest: config.logFile, mkdir: true, sync: false }) : pino.destination(2)
  return pino({ level: config.logLevel, base: undefined }, destination)
}
