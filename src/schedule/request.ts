import { z } from "zod"
import { Condition } from "./condition.ts"
import { isTimeZone, parseScheduleCron } from "./cron.ts"

/** What a quiet trigger's run answers when there is nothing to report. */
export const NO_REPORT = "NO_REPORT"

/** A run later than this is not worth doing any more; it also bounds the catch-up search. */
const MAX_LATENESS_S = 86_400

/** Read as the engine reads it (parseScheduleCron: a misread or unknown expression, or one that
 *  runs more than once a minute, is refused with the reason). */
const CronExpression = z
  .string()
  .trim()
  .superRefine((expression, ctx) => {
    const read = parseScheduleCron(expression)
    if ("error" in read) ctx.addIssue({ code: "custom", message: read.error })
  })

const TimeZone = z.string().refine(isTimeZone, { error: (issue) => `unknown IANA time zone "${String(issue.input)}" (e.g. "Europe/Berlin")` })

/**
 * A schedule as the `schedule` tool takes it (seed 002, plus cron, timezone, onMissed,
 * maxLateness and target). Which fields apply depends on `type`; a field of another type is
 * an error rather than silently ignored, so the model learns what it actually asked for.
 */
export const ScheduleRequest = z
  .object({
    prompt: z.string().trim().min(1).describe("What the Worker does at each run, complete and self-contained"),
    type: z.enum(["recurring", "scheduled", "conditional"]),
    interval: z.number().int().min(60).optional().describe("recurring: seconds between runs, at least 60"),
    cron: CronExpression.optional().describe('recurring, instead of interval: a 5- or 6-field cron expression read as crontab reads it (L, W, # and @daily-style nicknames allowed), e.g. "0 9 * * 1-5"'),
    timezone: TimeZone.optional().describe('With cron: the IANA time zone it is read in, e.g. "Europe/Berlin" (default: the user\'s time zone)'),
    runAt: z.iso.datetime({ offset: true }).optional().describe("scheduled: when to run, ISO 8601 with offset, in the future and at most a year ahead"),
    condition: Condition.optional().describe("conditional: runs each time this becomes true"),
    cooldown: z.number().int().min(0).optional().describe("conditional: seconds to wait after a run before reacting again (default 0)"),
    timeout: z.number().int().positive().max(86_400).nullable().optional().describe("Seconds each run may take; null or absent: the Worker default"),
    onMissed: z.enum(["run-once", "skip"]).optional().describe('A run missed while Steward was down: "run-once" (default) catches up once if late by at most maxLateness, "skip" does not'),
    maxLateness: z.number().int().min(0).max(MAX_LATENESS_S).optional().describe("Seconds a missed run may be late and still run (default 3600)"),
    target: z.string().min(1).optional().describe("Conversation id to post the reports to (default: this conversation)"),
    quiet: z.boolean().optional().describe(`true: a run that finds nothing worth telling answers exactly ${NO_REPORT} and nothing is posted (for checks like "tell me if the site is down")`),
    triggerId: z.string().min(1).optional().describe("Id (or a unique prefix of at least 4 characters) of an existing schedule of this conversation: this request replaces its definition in place, keeping its history"),
  })
  .superRefine((request, ctx) => {
    const misplaced = (fields: Array<keyof typeof request>, type: string) => {
      for (const field of fields) {
        if (request[field] !== undefined) ctx.addIssue({ code: "custom", path: [field], message: `${field} is only for type "${type}"` })
      }
    }
    const require = (field: keyof typeof request, message: string) => ctx.addIssue({ code: "custom", path: [field], message })
    if (request.type !== "recurring") misplaced(["interval", "cron", "timezone"], "recurring")
    if (request.type !== "scheduled") misplaced(["runAt"], "scheduled")
    if (request.type !== "conditional") misplaced(["condition", "cooldown"], "conditional")
    if (request.type === "recurring") {
      if ((request.interval === undefined) === (request.cron === undefined)) require("interval", 'recurring needs exactly one of interval (seconds) or cron')
      if (request.timezone !== undefined && request.cron === undefined) require("timezone", "timezone is only used with cron")
    }
    // Whether runAt is still ahead is checked when the trigger is created (runAtProblem), not
    // here: a call replayed after a crash must find its trigger even once runAt has passed.
    if (request.type === "scheduled" && request.runAt === undefined) require("runAt", "scheduled needs runAt")
    if (request.type === "conditional" && request.condition === undefined) require("condition", "conditional needs a condition")
  })

export type ScheduleRequest = z.output<typeof ScheduleRequest>

/** Why a new one-shot trigger cannot run at `runAt`: it is not in the future — or was not when
 *  the work was asked for (`askedAt`) — or it is more than a (calendar) year ahead. */
export function runAtProblem(runAt: string, askedAt?: Date): string | undefined {
  const now = askedAt ?? new Date()
  const at = Date.parse(runAt)
  if (at <= now.getTime()) return askedAt ? `runAt ${runAt} was not in the future when this was asked for (${askedAt.toISOString()})` : `runAt ${runAt} is not in the future (now: ${now.toISOString()})`
  const yearAhead = new Date(now)
  yearAhead.setUTCFullYear(yearAhead.getUTCFullYear() + 1)
  if (at > yearAhead.getTime()) return `runAt ${runAt} is more than a year ahead`
  return undefined
}
