import { Cron } from "croner"

/**
 * A crontab expression read the way cronie (and Vixie cron, which it comes from) reads it, with
 * the due times computed by croner, which also does the time-zone and DST arithmetic:
 *
 * - Five fields (minute hour day-of-month month day-of-week), or six with seconds first; the
 *   nicknames @yearly/@annually, @monthly, @weekly, @daily/@midnight and @hourly; croner's
 *   extensions L, W and # in the day fields. Anything else (seven fields, an ISO date that croner
 *   would take as a one-off, @reboot, `5/5`) is refused with the reason.
 * - Day of month and day of week: when both are restricted, a day matching either runs; when
 *   either starts with `*` (including `*\/2`), both must match — cronie's DOM_STAR/DOW_STAR rule.
 * - DST (cronie's man 8 cron): a fixed-time job — one whose minute and hour fields do not start
 *   with `*` — whose time falls in a spring-forward gap runs right after the jump, that day, and
 *   in a repeated autumn hour runs once, at the first occurrence. Any other job runs through both
 *   passes of a repeated hour and has no runs inside a gap. croner implements both behaviours.
 *
 * Two places where croner, left to itself, reads an expression differently from cronie, and
 * what is done about it (each has a test in test/cron.test.ts):
 * 1. croner's fixed-time test looks at the whole field, cronie's only at its first character:
 *    `0 0-23/2 * * *` or `0,*\/30 2 * * *` are fixed-time in cronie but interval jobs in croner
 *    (even with fixedTimeRule "no-wildcard", which already makes lists and ranges fixed-time).
 *    So when neither the minute nor the hour field (nor seconds, if given) starts with `*`, they
 *    are handed to croner as the explicit lists of values they stand for, which croner then
 *    treats as fixed-time.
 * 2. croner ORs the day fields whenever both are something other than a bare `*`; cronie ANDs
 *    them when either merely starts with `*` (`0 9 *\/2 * MON`: odd-numbered Mondays). That case
 *    is passed to croner with domAndDow.
 */
export interface CronSchedule {
  /** The expression as written (trimmed). */
  readonly expression: string
  /** The IANA zone it is read in; undefined: the server's. */
  readonly timezone: string | undefined
  /** cronie's DST treatment: "fixed-time" (gap: after the jump; repeat: once) or "wildcard". */
  readonly kind: "fixed-time" | "wildcard"
  /** The seconds field of a six-field expression, as written. */
  readonly seconds: string | undefined
  /** The first due time strictly after `after`; undefined when there is none. */
  next(after: Date): Date | undefined
  /** The next `count` due times strictly after `after`. */
  nextRuns(count: number, after: Date): Date[]
  /** The latest due time in [from, to], if any. */
  latest(from: Date, to: Date): Date | undefined
}

const NICKNAMES = new Set(["@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"])

const FIELDS = "minute hour day-of-month month day-of-week"

/** Reads `expression` in `timezone` (IANA; undefined: the server's zone), or says why not. */
export function parseCron(expression: string, timezone?: string): { schedule: CronSchedule } | { error: string } {
  const written = expression.trim()
  if (timezone !== undefined && !isTimeZone(timezone)) return { error: `unknown IANA time zone "${timezone}" (e.g. "Europe/Berlin")` }
  const read = readFields(written)
  if ("error" in read) return read
  let cron: Cron
  try {
    cron = new Cron(read.pattern, {
      timezone,
      paused: true,
      mode: "5-or-6-parts",
      fixedTimeRule: "no-wildcard",
      domAndDow: read.domAndDow,
    })
  } catch (error) {
    return { error: `not a valid cron expression: ${String(error instanceof Error ? error.message : error).replace(/^CronPattern:\s*/, "")}` }
  }
  if (!cron.nextRun(new Date())) return { error: `"${written}" never matches a date from now on (e.g. 31 February)` }
  const schedule: CronSchedule = {
    expression: written,
    timezone,
    kind: read.fixedTime ? "fixed-time" : "wildcard",
    seconds: read.seconds,
    next: (after) => cron.nextRun(after) ?? undefined,
    nextRuns: (count, after) => cron.nextRuns(count, after),
    latest(from, to) {
      // previousRuns looks strictly before its reference; runs fall on whole seconds, so one
      // millisecond later makes `to` itself count. It walks back in real time with the same DST
      // rules as nextRun (the repeated hour's second pass before its first).
      const [last] = cron.previousRuns(1, new Date(to.getTime() + 1))
      return last && last >= from ? last : undefined
    },
  }
  return { schedule }
}

interface ReadFields {
  pattern: string
  fixedTime: boolean
  domAndDow: boolean
  seconds: string | undefined
}

function readFields(written: string): ReadFields | { error: string } {
  if (written.startsWith("@")) {
    const nickname = written.toLowerCase()
    if (!NICKNAMES.has(nickname)) return { error: `unknown nickname "${written}": use one of ${[...NICKNAMES].join(", ")}` }
    return { pattern: nickname, fixedTime: nickname !== "@hourly", domAndDow: false, seconds: undefined }
  }
  const fields = written.split(/\s+/).filter(Boolean)
  if (fields.length !== 5 && fields.length !== 6) {
    return { error: `not a valid cron expression: expected 5 or 6 fields but got ${fields.length} (${FIELDS}, with seconds first if 6)` }
  }
  const seconds = fields.length === 6 ? fields.shift() : undefined
  const [minute, hour, dom, month, dow] = fields as [string, string, string, string, string]
  // Seconds are not cron's; they are read like minutes and hours.
  const fixedTime = [seconds, minute, hour].every((field) => field === undefined || !startsWild(field))
  const time = fixedTime ? [seconds === undefined ? undefined : valuesOf(seconds, 59), valuesOf(minute, 59), valuesOf(hour, 23)] : [seconds, minute, hour]
  const pattern = [...time, dom, month, dow].filter((field) => field !== undefined).join(" ")
  return { pattern, fixedTime, domAndDow: startsWild(dom) || startsWild(dow), seconds }
}

/** cronie's test for a "star" field: its first character (`?` is croner's alias of `*`). */
function startsWild(field: string): boolean {
  return field.startsWith("*") || field.startsWith("?")
}

/**
 * The explicit comma list a seconds, minute or hour field stands for (`0-23/2` → `0,2,…,22`), so that
 * croner treats it as fixed-time (see parseCron's note 1). A field this cannot read is returned
 * as written, for croner to refuse with its own message.
 */
function valuesOf(field: string, max: number): string {
  const values = new Set<number>()
  for (const part of field.split(",")) {
    const match = /^(?:(\*)|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(part)
    if (!match) return field
    const [, star, low, high, step] = match
    const first = star ? 0 : Number(low)
    const last = star ? max : high !== undefined ? Number(high) : step !== undefined ? max : first
    const by = step === undefined ? 1 : Number(step)
    // A bare `5/5` stays as written: croner refuses it (its sloppyRanges is off).
    if ((!star && high === undefined && step !== undefined) || first > last || last > max || by < 1) return field
    for (let value = first; value <= last; value += by) values.add(value)
  }
  return [...values].sort((a, b) => a - b).join(",")
}

/** A cron expression as a schedule takes it: read by parseCron, and at most one run a minute
 *  (like interval's minimum: a seconds field may name one second only). The `schedule` tool and
 *  `steward cron` both read it here, so the preview refuses what a schedule refuses, in the same words. */
export function parseScheduleCron(expression: string, timezone?: string): { schedule: CronSchedule } | { error: string } {
  const read = parseCron(expression, timezone)
  if ("error" in read || read.schedule.seconds === undefined || /^\d+$/.test(read.schedule.seconds)) return read
  return { error: "runs more than once a minute: give the seconds field one value" }
}

export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name })
    return true
  } catch {
    return false
  }
}
