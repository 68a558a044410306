import type { Condition } from "./condition.ts"

/** A schedule created by the `schedule` tool (the store's `triggers` collection); it moves by
 *  rewriting this one record, like a task. */
export interface TriggerRecord {
  id: string
  /** Where it was created; reports go here unless `target` says otherwise. */
  conversation: string
  user: string
  kind: "recurring" | "scheduled" | "conditional"
  prompt: string
  /** recurring: seconds between due times, counted from creation. */
  interval?: number
  /** recurring, instead of interval. */
  cron?: string
  /** With cron: the IANA zone it is read in (default: the server's). */
  timezone?: string
  /** scheduled. */
  runAt?: string
  /** conditional. */
  condition?: Condition
  /** conditional: events count from here (creation, then just after each firing). */
  since?: string
  /** conditional: seconds after a firing before the condition is listened to again. */
  cooldown: number
  /** conditional: the end of the current cooldown. */
  cooldownUntil?: string
  /** Seconds each run may take; null: the Worker default. */
  timeout: number | null
  onMissed: "run-once" | "skip"
  /** Seconds a missed due time may be late and still run (onMissed "run-once"). */
  maxLateness: number
  /** A conversation to report to instead of the creating one (validated by the host). */
  target?: string
  status: "active" | "ended" | "cancelled"
  /** Why it ended, when not by firing its last run. */
  endReason?: string
  /** recurring and scheduled: the due time the engine waits for. A due time found in the past
   *  at start-up was missed while Steward was down. */
  nextRunAt?: string
  lastFiredAt?: string
  /** The latest firing's outcome, or its run's progress once it fired. */
  lastOutcome?: string
  lastFiringId?: string
  /** The firing whose run has not ended yet: while set, a due time is skipped (overlap). */
  runningFiringId?: string
  /** That run's task, once the host has created it. */
  runningTaskId?: string
  createdAt: string
  /** `${sessionId}:${callId}` of the schedule call: a replayed call finds its trigger. */
  origin: string
}

/** One due time of a trigger and what became of it: fired → ran → delivered, or failed; a due
 *  time that did not run is a record too ("skipped"). Listed per trigger by the store's index. */
export interface FiringRecord {
  /** `<triggerId>/<ulid>`: the trigger a firing belongs to can be read off its id. */
  id: string
  triggerId: string
  /** The due time (recurring, scheduled) or the moment the condition held (conditional). */
  scheduledFor: string
  /** When it was recorded. */
  at: string
  outcome: "fired" | "skipped_overlap" | "missed_run" | "missed_skipped"
  /** Earlier due times that passed without a run, from this one up to scheduledFor (exclusive). */
  missedFrom?: string
  taskId?: string
  status: "fired" | "ran" | "delivered" | "failed" | "skipped"
  /** The platform's id of the report. */
  messageId?: string
  error?: string
}

/** An event raised by name (id: a ULID); the CLI writes these from another process. */
export interface RaisedRecord {
  id: string
  name: string
  at: string
}
