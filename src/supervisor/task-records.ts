/** The records the task board creates: a new task with its defaults, and the session it runs in. */
import { DEFAULT_WORKER } from "../agent/agents.ts"
import type { ConversationId, FiringRecord, TaskRecord, TriggerRecord, UserId } from "../core/types.ts"
import { NO_REPORT } from "../schedule/request.ts"
import type { SessionRecord } from "../store/records.ts"
import { newId } from "../store/store.ts"

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

/** A quiet trigger's run that found nothing to report: its result is exactly NO_REPORT. */
export function isQuietRun(task: TaskRecord): boolean {
  return task.quiet === true && task.firingId !== undefined && task.status === "completed" && task.result?.trim() === NO_REPORT
}
