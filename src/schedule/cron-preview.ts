import { systemTimeZone } from "../config/platforms.ts"
import { parseScheduleCron } from "./cron.ts"

export const CRON_USAGE = 'cron "<expr>" [--tz <zone>] [--count <n>]   show the next runs of a cron expression'

const MAX_COUNT = 100

/** What `steward cron --json` prints. */
export interface CronPreview {
  expression: string
  timezone: string
  kind: string
  runs: Array<{ local: string; utc: string }>
}

/**
 * `steward cron "<expr>" [--tz Europe/Berlin] [--count 5]`: the next due times of an expression,
 * read exactly as a schedule reads it, so a user can see what it means before trusting it.
 * Returns the text to print, or the reason it cannot (a usage error or an expression refused).
 */
export function cronPreview(args: string[], now = new Date()): { text: string; data: CronPreview } | { error: string } {
  const words: string[] = []
  let timezone: string | undefined
  let count = 5
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i]!.split(/=(.*)/s, 2) as [string, string | undefined]
    if (flag !== "--tz" && flag !== "--count") {
      words.push(args[i]!)
      continue
    }
    const value = inline ?? args[++i]
    if (value === undefined) return { error: `${flag} needs a value` }
    if (flag === "--tz") timezone = value
    else if (/^\d+$/.test(value) && Number(value) >= 1 && Number(value) <= MAX_COUNT) count = Number(value)
    else return { error: `--count is a whole number from 1 to ${MAX_COUNT}, not "${value}"` }
  }
  // An unquoted expression arrives as several words (if the shell left its stars alone).
  const expression = words.join(" ")
  if (!expression.trim()) return { error: `usage: npm run steward -- ${CRON_USAGE}` }
  const read = parseScheduleCron(expression, timezone)
  if ("error" in read) return read
  const zone = timezone ?? systemTimeZone()
  const runs = read.schedule.nextRuns(count, now)
  const dst =
    read.schedule.kind === "fixed-time"
      ? "fixed time: a time skipped by a DST change runs right after the jump, a repeated one once (first pass)"
      : "wildcard: runs through both passes of a repeated DST hour, none inside a skipped one"
  const lines = [`"${read.schedule.expression}" in ${zone} (${dst}); the next ${runs.length}:`]
  const shown = runs.map((run) => ({ local: localTime(run, zone), utc: run.toISOString().replace(".000Z", "Z") }))
  for (const run of shown) lines.push(`  ${run.local}   ${run.utc}`)
  return { text: `${lines.join("\n")}\n`, data: { expression: read.schedule.expression, timezone: zone, kind: read.schedule.kind, runs: shown } }
}

/** "Sun 2026-03-29 03:00:00 GMT+02:00": the wall-clock time in `zone`, with its offset. */
function localTime(at: Date, zone: string): string {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: zone,
    weekday: "short",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hourCycle: "h23",
    timeZoneName: "longOffset",
  }).formatToParts(at)
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? ""
  return `${part("weekday")} ${part("year")}-${part("month")}-${part("day")} ${part("hour")}:${part("minute")}:${part("second")} ${part("timeZoneName")}`
}
