import type { ModelMessage } from "ai"
import type { Logger } from "pino"
import type { ConversationId, HistoryReader, OutgoingFile, Role, UserId } from "../core/types.ts"
import type { Answer, Question } from "../question/questions.ts"
import type { ScheduleRequest } from "../schedule/request.ts"

/**
 * What tools may ask of the runtime, one narrow interface per capability. Tools never touch
 * the store or the queues directly: every state change goes through the module that owns it
 * (the task board, the questions, the scheduler, the outbox).
 */

/** The run a tool call belongs to, and the call itself. */
export interface Caller {
  role: Role
  /** Worker type (e.g. "default") for workers; the role name otherwise. */
  agent: string
  conversation: ConversationId
  user: UserId
  sessionId: string
  /** The model's tool call id. Together with sessionId it is the idempotency key of the call:
   *  a call re-executed after a crash must not repeat its side effect. */
  callId: string
  /** True when the call belongs to a step this run of the agent loop generated: it cannot have
   *  run before, so what it produces needs no look-up by origin in the store. Unset (a call
   *  resumed from the log — after a crash, or an ask_user answered — or one made outside the
   *  loop): it may have run before, and its first result is found in the store. */
  fresh?: boolean
  /** The task this run executes (planner and worker runs). */
  taskId?: string
  /** When the work this run does was asked for (its task's creation). A time the request names
   *  is judged against this, not against the moment a run gets to it: a task run again after
   *  its process died, or one that waited in a long queue, still means what was asked. */
  askedAt?: string
  /** Set by the agent loop: the run has read untrusted content (src/trust/taint.ts). */
  tainted?: boolean
  abort: AbortSignal
}

/**
 * Returned by a tool whose answer comes later, from outside the run (ask_user): the run ends at
 * that call, which stays unanswered in the log. When the run is resumed the call executes again
 * and, its answer being known by then, returns it as the call's result.
 */
export const AWAIT_ANSWER: unique symbol = Symbol("await answer")

/** A task as a tool may create it. The task board fills in everything else. */
export interface DelegateRequest {
  prompt: string
  type: "oneshot" | "conditional"
  condition?: unknown
  priority: number
  /** Seconds; null → the role's default. */
  timeout: number | null
  worker?: string
  sessionId?: string
}

export interface TaskSummary {
  id: string
  /** "planner", "oneshot", "conditional", or "trigger:<kind>" for a schedule. */
  type: string
  prompt: string
  priority: number
  status: string
  createdAt: string
  /** Finished tasks: when they ended. */
  endedAt?: string
  /** Schedules: the next due time, and what became of the last firing. */
  nextRunAt?: string
  /** nextRunAt in the user's time zone. */
  nextRunLocal?: string
  lastOutcome?: string
  paused?: boolean
}

export interface ListTasksFilter {
  /** "finished": ended tasks, newest first, a page at a time (read from the store). */
  scope: "queue" | "running" | "triggers" | "all" | "finished"
  role?: "planner" | "worker"
  /** finished: tasks per page, and the `endedAt` of the last task of the previous page. */
  limit?: number
  before?: string
}

/** delegate, list_tasks, cancel_task. */
export interface TaskCapability {
  delegate(caller: Caller, request: DelegateRequest): Promise<{ taskId: string }>
  listTasks(caller: Caller, filter: ListTasksFilter): Promise<TaskSummary[]>
  /** Cancels a queued task (or a schedule) of the caller's conversation. */
  cancelTask(caller: Caller, taskId: string): Promise<boolean>
}

/** ask_user, and the user's approval when a permission rule says "ask". */
export interface QuestionCapability {
  /** The answer once there is one; AWAIT_ANSWER while the question is open. */
  ask(caller: Caller, question: Question): Promise<Answer | typeof AWAIT_ANSWER>
  /** The conversation's user allows or denies this call (waits for them). */
  approve(caller: Caller, tool: string, pattern: string): Promise<boolean>
  /** A question the call waits for in place (an MCP server's elicitation): the answer, the
   *  question's fallback at its deadline, or a rejection when the run is aborted. `key` tells
   *  the call's questions apart (and finds a question's answer again when the call is replayed). */
  inquire(caller: Caller, key: string, question: Question): Promise<Answer>
}

/** The `schedule` tool. */
export interface ScheduleCapability {
  /** Validates `request.target` (a conversation the caller's user may post to), then creates the
   *  trigger, idempotent by `${caller.sessionId}:${caller.callId}`. */
  schedule(caller: Caller, request: ScheduleRequest): Promise<{ taskId: string }>
}

/** The `reply` and `send_file` tools: a message or a file to the caller's conversation (for a
 *  task, the conversation that started it), through the outbox. */
export interface ReplyCapability {
  reply(caller: Caller, text: string): Promise<void>
  sendFile(caller: Caller, file: OutgoingFile, caption: string): Promise<void>
}

export interface MemoryHit {
  source: string
  /** YYYY-MM-DD the note is dated: a daily note's day, or its memory.md entry's. */
  date: string
  content: string
  score: number
  /** A newer note (its source) states this note's fact now: this one is history. */
  supersededBy?: string
}

export interface MemorySearch {
  query: string
  after?: Date
  before?: Date
  limit: number
}

/** Markdown memory of one scope (a user, or everyone when MEMORY_SCOPE=shared). */
export interface MemoryService {
  remember(user: UserId, content: string, longTerm: boolean): Promise<{ path: string }>
  search(user: UserId, search: MemorySearch): Promise<MemoryHit[]>
}

/** The user's settings that a tool may change (set_timezone). */
export interface ProfileCapability {
  /** An error text for a name that is not an IANA zone; else the zone as stored. */
  setTimeZone(user: UserId, zone: string): Promise<{ error: string } | { timeZone: string }>
}

/** Correcting a user's notes (the forget tool); see src/memory/edit.ts. */
export interface MemoryNotes {
  forget(user: UserId, request: { query?: string; path?: string; replacement?: string }): Promise<{ changes: Array<{ path: string; removed: string[]; added?: string; deleted?: boolean }> } | { error: string }>
}

/** A completion the calling run's model writes for a tool (an MCP server's sampling request). */
export interface CompletionRequest {
  system?: string
  messages: ModelMessage[]
  maxOutputTokens: number
  temperature?: number
  stopSequences?: string[]
}

export interface CompletionResult {
  text: string
  model: string
  /** "length" when maxOutputTokens cut it. */
  finishReason: string
}

/** What one tool call may ask of the run that makes it; the agent loop sets these per call. */
export interface CallCapabilities {
  /** Shows how far the call has got, as its live status to the user ("3/10", "40%"). */
  progress?(text: string): void
  /** Whether the run's rules allow `permission` on `pattern` (a permission that is not a tool,
   *  e.g. mcp_sampling); "ask" asks the user and waits for the answer. */
  permit?(permission: string, pattern: string): Promise<boolean>
  /** A completion from the run's own model, its tokens counted in the run's usage. */
  complete?(request: CompletionRequest): Promise<CompletionResult>
}

/** Everything a tool call may use besides its caller. */
export interface Capabilities {
  tasks: TaskCapability
  questions: QuestionCapability
  schedules: ScheduleCapability
  replies: ReplyCapability
  memory: MemoryService
  history: HistoryReader
  profiles: ProfileCapability
  notes: MemoryNotes
  /** Folder that worker file tools are confined to. */
  workspaceDir: string
  /** Where a failure is logged whose text is not for the model (core/errors.ts `internalError`):
   *  a model relays what it reads, so it is given the failure's reference instead. */
  incidents: Pick<Logger, "error">
}
