/** The records the task board creates: a new task with its defaults, and the session it runs in. */
import type { ConversationId, TaskRecord, UserId } from "../core/types.ts"
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

/** The record of a task's own session, a child of its caller's. */
export function sessionOf(task: TaskRecord): SessionRecord {
  return { id: task.sessionId, role: task.role, agent: task.agent, parentId: task.parentSessionId, conversation: task.conversation, user: task.user, createdAt: task.createdAt }
}
