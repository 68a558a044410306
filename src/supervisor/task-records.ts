/** The records the task board creates: a new task with its defaults, and the session it runs in. */
import { DEFAULT_WORKER } from "../agent/agents.ts"
import { TERMINAL, type ConversationId, type FiringRecord, type TaskRecord, type TriggerRecord, type UserId } from "../core/types.ts"
import { NO_REPORT } from "../schedule/request.ts"
import type { SessionRecord } from "../store/records.ts"
import { newId } from "../store/ids.ts"
import { unwrapped } from "../trust/envelope.ts"

/** A queued one-shot task with the defaults, in a fresh child session of the caller's. */
export function newTask(caller: { conversation: ConversationId; user: UserId; sessionId: string }, origin: string, role: TaskRecord["role"], agent: string): TaskRecord {
  return {
    id: newId(),
    role,
    agent,
    type: "oneshot",
    prompt: "",
    priority: 5,
    timeout: null,
    status: "queued",
    conversation: caller.conversation,
    user: caller.user,
    parentSessionId: caller.sessionId,
    sessionId: newId(),
    origin,
    attempts: 0,
    createdAt: new Date().toISOString(),
  }
}

/** A task interrupted this many times (a restart, or the process holding it dying) fails. */
export const MAX_TASK_ATTEMPTS = 2
/** In a cluster a process dies more often for reasons of its own (a deploy, a lost machine, a
 *  kill) than because of the task it ran, and each death interrupts every run it held: a task
 *  may be interrupted once more there before it counts as what kills processes. */
export const CLUSTER_MAX_TASK_ATTEMPTS = 3

/** A task's run ended without an outcome because the process running it went away (or is
 *  stopping): the task goes back to the queue. `counts`: the attempt counts toward
 *  MAX_TASK_ATTEMPTS (a crash does; an orderly stop does not). */
export class Interrupted extends Error {
  override name = "Interrupted"
  constructor(message: string, readonly counts: boolean) {
    super(message)
  }
}

/** Whether a task not ended, or staged by a Planner, runs in this session: two runs cannot
 *  share one session log. */
export function sessionInUse(tasks: Iterable<TaskRecord>, sessionId: string): boolean {
  for (const task of tasks) if ((task.sessionId === sessionId && !TERMINAL.has(task.status)) || task.staged?.some((staged) => staged.sessionId === sessionId)) return true
  return false
}

/** The run's number (see TaskRecord.runs). */
export const runOf = (task: TaskRecord): number => task.runs ?? task.attempts

/** A run that took longer than its task's timeout (the board's timer, or a cluster's claimer). */
export class TimedOut extends Error {
  override name = "TimedOut"
}

/** A leader that stops leaves a task's run to the process running it; the next leader follows
 *  it to its end (recovery.ts), so the record stays as it is. */
export class HandedOver extends Error {
  override name = "HandedOver"
}

/** The record of a task that was interrupted: queued again, or failed once it was interrupted
 *  MAX_TASK_ATTEMPTS times. */
export function interrupted(task: TaskRecord, counts: boolean, limit = MAX_TASK_ATTEMPTS): TaskRecord {
  if (counts && task.attempts >= limit) return { ...task, status: "failed", error: `interrupted ${task.attempts} times by a restart`, endedAt: new Date().toISOString() }
  return { ...task, status: "queued", attempts: counts ? task.attempts : task.attempts - 1 }
}

/** The inbox event of a batch's results: one per batch head, whatever wakes it. */
export function resultsEventId(headTaskId: string): string {
  return `results-${headTaskId}`
}

/** The record of a task's own session, a child of its caller's. */
export function sessionOf(task: TaskRecord): SessionRecord {
  return { id: task.sessionId, role: task.role, agent: task.agent, parentId: task.parentSessionId, conversation: task.conversation, user: task.user, createdAt: task.createdAt }
}

/** Appended to a quiet trigger's prompt, so the Worker knows how to say "nothing to tell". */
const QUIET_INSTRUCTION = `If there is nothing worth telling the user this time, answer exactly ${NO_REPORT} and nothing else.`

/** A firing's run: a worker task of its own in the report's conversation, under its Teller
 *  session (`sessionId`). */
export function runTask(trigger: TriggerRecord, firing: FiringRecord, sessionId: string, origin: string): TaskRecord {
  return {
    ...newTask({ conversation: trigger.target ?? trigger.conversation, user: trigger.user, sessionId }, origin, "worker", DEFAULT_WORKER),
    prompt: trigger.quiet ? `${trigger.prompt}\n\n${QUIET_INSTRUCTION}` : trigger.prompt,
    timeout: trigger.timeout,
    firingId: firing.id,
    quiet: trigger.quiet || undefined,
  }
}

/** A quiet trigger's run that found nothing to report: its result is exactly NO_REPORT (in an
 *  envelope when the run read outside content). */
export function isQuietRun(task: TaskRecord): boolean {
  return task.quiet === true && task.firingId !== undefined && task.status === "completed" && unwrapped(task.result ?? "").trim() === NO_REPORT
}
