import type { TriggerRecord } from "../core/types.ts"
import { newId } from "../store/ids.ts"
import { ToolError } from "../tool/tool.ts"
import { runAtProblem, type ScheduleRequest } from "./request.ts"

/** Where a trigger is created: its conversation, its user and the call that creates it. */
export interface TriggerOrigin {
  conversation: string
  user: string
  origin: string
  /** When the work that creates it was asked for (Caller.askedAt); absent: now. */
  askedAt?: string
}

const DEFAULT_MAX_LATENESS_S = 3600

/** A new trigger's record from a checked request, with the request's defaults filled in (its
 *  due time is the cadence's to compute). A run time that was past when the work was asked for
 *  is the caller's error; one that passed since (Steward's own delay) is due at once. */
export function newTrigger(valid: ScheduleRequest, where: TriggerOrigin): TriggerRecord {
  const late = valid.runAt === undefined ? undefined : runAtProblem(valid.runAt, where.askedAt === undefined ? undefined : new Date(where.askedAt))
  if (late) throw new ToolError(late)
  const now = new Date().toISOString()
  return {
    id: newId(),
    conversation: where.conversation,
    user: where.user,
    kind: valid.type,
    prompt: valid.prompt,
    interval: valid.interval,
    cron: valid.cron,
    timezone: valid.timezone,
    runAt: valid.runAt,
    condition: valid.condition,
    since: valid.type === "conditional" ? now : undefined,
    cooldown: valid.cooldown ?? 0,
    timeout: valid.timeout ?? null,
    onMissed: valid.onMissed ?? "run-once",
    maxLateness: valid.maxLateness ?? DEFAULT_MAX_LATENESS_S,
    target: valid.target,
    quiet: valid.quiet,
    status: "active",
    createdAt: now,
    origin: where.origin,
  }
}
