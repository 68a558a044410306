import type { Quotas } from "../config/quotas.ts"
import type { TriggerRecord } from "../core/types.ts"
import { parseCron } from "../schedule/cron.ts"
import type { ScheduleRequest } from "../schedule/request.ts"

// Enough runs to see the shortest gap of any cron expression's pattern (a day of "*/15", a week of hours).
const CRON_RUNS_LOOKED_AT = 200

/** The shortest time (seconds) between two of the next runs of a cron expression. */
export function shortestCronGap(expression: string, timezone: string | undefined, from = new Date()): number {
  const read = parseCron(expression, timezone)
  if ("error" in read) return Number.POSITIVE_INFINITY // refused by the request's own check
  let shortest = Number.POSITIVE_INFINITY
  let previous = read.schedule.next(from)
  for (let run = 0; previous && run < CRON_RUNS_LOOKED_AT; run++) {
    const next = read.schedule.next(previous)
    if (!next) break
    shortest = Math.min(shortest, (next.getTime() - previous.getTime()) / 1000)
    previous = next
  }
  return shortest
}

/**
 * Why a user who is not an owner may not have this schedule (QUOTA_MIN_INTERVAL_SECONDS,
 * QUOTA_SCHEDULES), worded for the model to relay; undefined when they may. `theirs` are the
 * user's triggers still in force; `replacing` the one an edit redefines.
 */
export function scheduleRefusal(quotas: Quotas, request: ScheduleRequest, theirs: readonly TriggerRecord[], replacing?: string): string | undefined {
  if (request.type !== "recurring") return undefined
  const gap = request.interval ?? shortestCronGap(request.cron!, request.timezone)
  if (gap < quotas.minIntervalSeconds) {
    return `this schedule would run every ${gap} s, and yours may run at most every ${quotas.minIntervalSeconds} s (QUOTA_MIN_INTERVAL_SECONDS); choose a longer interval`
  }
  const recurring = theirs.filter((trigger) => trigger.kind === "recurring" && trigger.id !== replacing).length
  if (recurring >= quotas.schedules) {
    return `you have ${recurring} recurring schedules, the most you may have (QUOTA_SCHEDULES=${quotas.schedules}); cancel one you no longer need first`
  }
  return undefined
}
