import { z } from "zod"
import { TERMINAL, type Condition as ConditionShape, type TaskStatus } from "../core/types.ts"
import { earliest } from "./timer.ts"

/** What an event may be called: it travels in URLs (`POST /hooks/<name>`) and shell arguments. */
export const EVENT_NAME = /^[A-Za-z0-9_.-]{1,64}$/

/** The schema of a Condition (see src/core/types.ts), as the delegate and schedule tools take it. */
export const Condition: z.ZodType<ConditionShape> = z.lazy(() =>
  z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("task"), taskId: z.string().min(1), status: z.enum(["completed", "failed", "any"]).optional() }),
    z.object({ kind: z.literal("time"), at: z.iso.datetime({ offset: true }) }),
    z.object({ kind: z.literal("event"), name: z.string().regex(EVENT_NAME, "letters, digits, _ . - (at most 64)") }),
    z.object({ kind: z.enum(["all", "any"]), of: z.array(Condition).min(1).max(16) }),
  ]),
)

/** "waiting": not yet, but it may still hold; "never": nothing that can still happen makes it hold. */
export type ConditionResult = "holds" | "waiting" | "never"

/** What a condition is evaluated against. */
export interface ConditionFacts {
  /** undefined: no such task is known. */
  taskStatus(taskId: string): TaskStatus | undefined
  now: Date
  /** Was the event raised at or after `since` (ISO 8601)? */
  raisedSince(name: string, since: string): boolean
}

/**
 * Evaluates a condition whose event parts count events raised at or after `since`.
 * Only task parts can become "never": a time comes, an event may always still be raised.
 */
export function evaluateCondition(condition: ConditionShape, facts: ConditionFacts, since: string): ConditionResult {
  switch (condition.kind) {
    case "task":
      return taskResult(condition.status ?? "completed", facts.taskStatus(condition.taskId))
    case "time":
      return facts.now.getTime() >= Date.parse(condition.at) ? "holds" : "waiting"
    case "event":
      return facts.raisedSince(condition.name, since) ? "holds" : "waiting"
    case "all": {
      const results = condition.of.map((part) => evaluateCondition(part, facts, since))
      if (results.includes("never")) return "never"
      return results.every((result) => result === "holds") ? "holds" : "waiting"
    }
    case "any": {
      const results = condition.of.map((part) => evaluateCondition(part, facts, since))
      if (results.includes("holds")) return "holds"
      return results.every((result) => result === "never") ? "never" : "waiting"
    }
  }
}

/** The tasks a condition names. */
export function taskIdsOf(condition: ConditionShape): string[] {
  if (condition.kind === "task") return [condition.taskId]
  if (condition.kind === "all" || condition.kind === "any") return condition.of.flatMap(taskIdsOf)
  return []
}

/** Why a condition that evaluated to "never" cannot hold: its task parts that cannot. */
export function whyNever(condition: ConditionShape, taskStatus: ConditionFacts["taskStatus"]): string {
  const reasons: string[] = []
  const visit = (part: ConditionShape): void => {
    if (part.kind === "all" || part.kind === "any") return part.of.forEach(visit)
    if (part.kind !== "task") return
    const status = taskStatus(part.taskId)
    if (taskResult(part.status ?? "completed", status) !== "never") return
    reasons.push(status === undefined ? `task ${part.taskId} does not exist` : `task ${part.taskId} ended ${status}, not ${part.status ?? "completed"}`)
  }
  visit(condition)
  return reasons.join("; ")
}

function taskResult(wanted: "completed" | "failed" | "any", status: TaskStatus | undefined): ConditionResult {
  // An unknown task will never end: waiting for it would wait forever.
  if (status === undefined) return "never"
  if (!TERMINAL.has(status)) return "waiting"
  switch (wanted) {
    case "completed":
      return status === "completed" ? "holds" : "never"
    case "failed":
      // A timeout is a failure; a cancellation is not — nobody ran it to a failure.
      return status === "failed" || status === "timed_out" ? "holds" : "never"
    case "any":
      return "holds"
  }
}

/** The earliest `time` part still ahead of `now`: when the condition is next worth evaluating
 *  without anything else happening. undefined when no time part is ahead. */
export function nextTimeOf(condition: ConditionShape, now: Date): Date | undefined {
  switch (condition.kind) {
    case "time": {
      const at = Date.parse(condition.at)
      return at > now.getTime() ? new Date(at) : undefined
    }
    case "all":
    case "any":
      return earliest(condition.of.map((part) => nextTimeOf(part, now)))
    default:
      return undefined
  }
}
