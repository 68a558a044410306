import type { ModelMessage } from "ai"
import type { Button, ImageRef, OutgoingFile, Role, TaskRecord } from "../core/types.ts"

/** A task nobody committed starts a batch of its own: a Planner task, a task a command or a
 *  trigger started; and a conditional task, which reports on its own when it ends. */
export function isBatchHead(task: TaskRecord): boolean {
  return !task.parentTaskId || task.type === "conditional"
}

export interface SessionRecord {
  id: string
  role: Role
  agent: string
  parentId?: string
  conversation: string
  user: string
  createdAt: string
}

export interface MessageRecord {
  id: string
  sessionId: string
  message: ModelMessage
  createdAt: string
  /** The inbox event this user message came from; lets a replayed turn skip it. */
  eventId?: string
  /** "summary": a compaction summary — nothing before it is sent to the model again. "kept": a
   *  user message not answered before a compaction, written again after its summary. */
  kind?: "summary" | "kept"
  /** Tokens the model reported for the step that produced this message. */
  usage?: { input: number; output: number }
  /** Whom the run that wrote it acted for: in a conversation several people share, another
   *  person's turn is shown only what was said in the chat (agent/author-view.ts). */
  author?: string
  /** A message its author wrote in the chat (not task results, nor Steward's own input). */
  fromUser?: boolean
}

/** Something that wakes a conversation's Teller. Deleted once the turn that handled it ends. */
export interface InboxEvent {
  id: string
  conversation: string
  user: string
  /** "answer": a question of this conversation was closed; the turn resumes the ask_user call. */
  kind: "user_message" | "task_results" | "answer"
  text: string
  createdAt: string
  /** Turns started for this event; a turn interrupted by crashes is given up after a few. */
  attempts: number
  /** task_results of a trigger firing's run: what the turn posts is that firing's report. */
  firingId?: string
  /** user_message: images the user sent, shown to the model (VISION). */
  images?: ImageRef[]
}

export interface ConversationRecord {
  id: string
  user: string
  tellerSessionId: string
}

export interface OutboxRecord {
  id: string
  /** What produced it (`${sessionId}:${toolCallId}`, or a turn's id): a replayed producer finds
   *  its record instead of sending twice. */
  origin: string
  conversation: string
  text: string
  buttons?: Button[]
  /** A workspace file to post, `text` being its caption: the record holds its path, never its bytes. */
  file?: OutgoingFile
  /** An edit of an earlier outbox message (its record id) rather than a new message. */
  editOf?: string
  /** The trigger firing whose report this is: its delivery is recorded on the firing. */
  firingId?: string
  status: "pending" | "delivered" | "failed"
  attempts: number
  createdAt: string
  /** The platform's id for the sent message; a record with one is never sent again. */
  messageId?: string
  nextAttemptAt?: string
  error?: string
  /** Sent as plain text: the adapter could not send its formatted form. */
  plain?: boolean
  /** The live answer this message completes (OutgoingMessage.live). */
  live?: string
}

/** A question to the user (ask_user, or a permission that needs the user's approval). */
export interface QuestionRecord {
  id: string
  /** `${sessionId}:${toolCallId}` of the call that asked: a replayed call finds its question. */
  origin: string
  conversation: string
  user: string
  question: string
  options?: string[]
  default?: string
  deadline: string
  /** "permission": asked on behalf of a running task, which waits for it in memory. */
  purpose: "ask_user" | "permission"
  status: "open" | "answered" | "expired" | "superseded" | "closed"
  answer?: string
  source?: "user" | "default" | "timeout"
  /** The outbox record that showed the question; its message is edited when the question closes. */
  messageId: string
  createdAt: string
  closedAt?: string
}

/** A stranger's request to talk to Steward, approved by the owner with its code. */
export interface PairingRecord {
  code: string
  user: string
  conversation: string
  expiresAt: string
}

/** Tokens of one model call (role: teller, planner, worker, compaction). */
/** An error the server logged, kept (the latest ERRORS_KEPT) for `steward status`. */
export interface ErrorRecord {
  id: string
  at: string
  message: string
  /** The error's own message, when one was logged with it. */
  error?: string
}

/**
 * A change the owner (CLI or console) asks of the running server, which holds the state in memory: the
 * server applies it (at its next poll, or when it next starts) and records the outcome here.
 */
export interface ControlRecord {
  id: string
  kind: "trigger.pause" | "trigger.resume" | "trigger.remove" | "user.revoke" | "task.cancel"
  /** A trigger id, a task id, or a `<channel>:<id>` user. */
  target: string
  at: string
  status: "pending" | "applied" | "refused"
  /** What the server said, when it has applied or refused it. */
  result?: string
}

/** One run of a task in the process that claimed it. The claimer writes it before the run
 *  starts and again with its end; the leader reads the end from it. */
export interface ClaimRecord {
  /** `<taskId>:<run>` */
  id: string
  taskId: string
  /** The task's run (TaskRecord.runs) this claim is. */
  run: number
  /** The process id (ProcessRecord.id) running it. */
  holder: string
  startedAt: string
  /** released: the holder stopped in order before the run ended (the attempt does not count). */
  status: "running" | "done" | "failed" | "released"
  endedAt?: string
  /** done: the run's last text. */
  result?: string
  /** failed: why. */
  error?: string
  /** failed: the run took longer than its task's timeout. */
  timedOut?: boolean
}

/** A Steward process of the cluster, rewritten at every heartbeat. */
export interface ProcessRecord {
  id: string
  host: string
  pid: number
  startedAt: string
  /** The last heartbeat, on the process's own clock: the leader takes it for hung once it has
   *  not changed for the lease (a dead process is seen by its lost connection at once). */
  seenAt: string
  leader: boolean
  running: Array<{ taskId: string; run: number; agent: string; conversation: string }>
}
