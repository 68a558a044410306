import { LogLevel, type Logger as BoltLogger } from "@slack/bolt"
import type { Logger } from "pino"

const LEVELS: Record<string, LogLevel> = { trace: LogLevel.DEBUG, debug: LogLevel.DEBUG, info: LogLevel.INFO, warn: LogLevel.WARN }

/** Bolt, its Web API client and the Socket Mode client log through Steward's pino logger, at its level. */
export function boltLogger(log: Logger): BoltLogger {
  const write = (level: "debug" | "info" | "warn" | "error") => (...parts: unknown[]) => log[level](parts.map((part) => (part instanceof Error ? part.message : String(part))).join(" "))
  return {
    debug: write("debug"),
    info: write("info"),
    warn: write("warn"),
    error: write("error"),
    // The level is pino's: Bolt may ask for it, but does not set it.
    setLevel: () => {},
    getLevel: () => LEVELS[log.level] ?? LogLevel.ERROR,
    setName: () => {},
  }
}
