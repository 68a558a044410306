import type { TriggerRecord } from "../core/types.ts"
import { cronCadence, intervalCadence, onceCadence, type Cadence } from "./cadence.ts"
import { parseCron } from "./cron.ts"
import type { ScheduleRequest } from "./request.ts"

/**
 * The changes a trigger may go through besides firing — pause, resume, edit — as pure functions
 * from a trigger to its new record (or the reason it cannot change). The Scheduler applies them
 * to a live trigger (pauseTrigger, resumeTrigger, editTrigger); a program that edits the store
 * while Steward is not running (the CLI) can apply them directly and save the result.
 */

/** Where a trigger's due times fall, read from its record. */
export function cadenceFor(trigger: TriggerRecord): Cadence {
  if (trigger.cron) {
    const read = parseCron(trigger.cron, trigger.timezone)
    if ("error" in read) throw new Error(read.error)
    return cronCadence(read.schedule)
  }
  if (trigger.interval) return intervalCadence(new Date(trigger.createdAt), trigger.interval)
  return onceCadence(new Date(trigger.runAt!))
}

/** An active trigger stops waiting: no due time, no cooldown. A run under way goes on. */
export function pausedTrigger(trigger: TriggerRecord): TriggerRecord | string {
  if (trigger.status === "paused") return `schedule ${trigger.id} is already paused`
  if (trigger.status !== "active") return `schedule ${trigger.id} has ${trigger.status}; only an active schedule can be paused`
  return { ...trigger, status: "paused", nextRunAt: undefined, cooldownUntil: undefined }
}

/**
 * A paused trigger waits again, from now on: due times that passed while it was paused are not
 * caught up (pausing says "not now", and catching up would run what the user held back), and a
 * conditional trigger listens only to events raised after the resume. A one-shot trigger whose
 * time passed while paused ends.
 */
export function resumedTrigger(trigger: TriggerRecord, now = new Date()): TriggerRecord | string {
  if (trigger.status !== "paused") return `schedule ${trigger.id} is not paused`
  if (trigger.kind === "conditional") return { ...trigger, status: "active", since: now.toISOString(), cooldownUntil: undefined }
  const next = cadenceFor(trigger).nextAfterNow()
  if (!next) return { ...trigger, status: "ended", endReason: "its time passed while it was paused", nextRunAt: undefined }
  return { ...trigger, status: "active", nextRunAt: next.toISOString() }
}

/**
 * A trigger given a new definition (the schedule tool with triggerId): kind, prompt, cadence
 * and options are replaced; its id, conversation, creation, firings and paused state stay. The
 * next due time is counted from now; an interval keeps its phase from the creation.
 */
export function editedTrigger(trigger: TriggerRecord, request: ScheduleRequest, now = new Date()): TriggerRecord | string {
  if (trigger.status !== "active" && trigger.status !== "paused") return `schedule ${trigger.id} has ${trigger.status}; create a new one instead`
  const edited: TriggerRecord = {
    ...trigger,
    kind: request.type,
    prompt: request.prompt,
    interval: request.interval,
    cron: request.cron,
    timezone: request.timezone,
    runAt: request.runAt,
    condition: request.condition,
    since: request.type === "conditional" ? now.toISOString() : undefined,
    cooldown: request.cooldown ?? 0,
    cooldownUntil: undefined,
    timeout: request.timeout ?? null,
    onMissed: request.onMissed ?? trigger.onMissed,
    maxLateness: request.maxLateness ?? trigger.maxLateness,
    target: request.target,
    quiet: request.quiet,
    nextRunAt: undefined,
  }
  if (edited.status === "active" && edited.kind !== "conditional") {
    const next = cadenceFor(edited).nextAfterNow()
    if (!next) return "the new schedule has no due time left"
    edited.nextRunAt = next.toISOString()
  }
  return edited
}
