import { NewerDataError } from "../store/migrations.ts"
import { ConfigError } from "./config.ts"

/** Postgres's answers that no restart changes: a login refused, a database that does not exist. */
const POSTGRES_REFUSALS = new Set(["28P01", "28000", "3D000", "42501"])

/**
 * The one line for a start-up (or CLI) failure a restart cannot fix — configuration, data from a
 * newer Steward, a Postgres store that refuses the login or has no such database — or undefined
 * for what may pass (a platform or database briefly out of reach). The first ends the process
 * with exit 2, which the systemd unit does not restart.
 */
export function refusal(error: unknown): string | undefined {
  if (error instanceof ConfigError || error instanceof NewerDataError) return error.message
  const code = (error as { cause?: { code?: unknown } } | undefined)?.cause?.code
  if (typeof code === "string" && POSTGRES_REFUSALS.has(code)) return `STORE_URL: ${(error as Error).message}`
  return undefined
}
