import type { Answer, Question } from "../question/questions.ts"
import type { ScheduleService } from "../schedule/request.ts"
import type { AWAIT_ANSWER, ToolContext } from "./tool.ts"

/** A task as a tool may create it. The Supervisor fills in everything else. */
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
  /** Schedules: the next due time, and what became of the last firing. */
  nextRunAt?: string
  lastOutcome?: string
}

export interface ListTasksFilter {
  scope: "queue" | "running" | "triggers" | "all"
  role?: "planner" | "worker"
}

/** One message of a conversation's history, as the history tools return it. */
export interface HistoryMessage {
  role: "user" | "assistant"
  text: string
  createdAt: string
}

export interface HistoryReader {
  /** `count` messages ending `offset` messages before the newest, oldest first. */
  recent(conversation: string, count: number, offset: number): Promise<HistoryMessage[]>
  /** Messages with after <= createdAt <= before, oldest first. */
  between(conversation: string, after: Date, before: Date): Promise<HistoryMessage[]>
}

export interface MemoryHit {
  source: string
  /** YYYY-MM-DD the note is dated: a daily note's day, or its memory.md entry's. */
  date: string
  content: string
  score: number
}

export interface MemorySearch {
  query: string
  after?: Date
  before?: Date
  limit: number
}

/** Markdown memory of one scope (a user, or everyone when MEMORY_SCOPE=shared). */
export interface MemoryService {
  remember(user: string, content: string, longTerm: boolean): Promise<{ path: string }>
  search(user: string, search: MemorySearch): Promise<MemoryHit[]>
}

/**
 * What tools may ask of the runtime. The Supervisor implements it; tools never touch the
 * store or the queues directly, so every state change goes through the single writer.
 */
export interface Services extends ScheduleService {
  /** Folder that worker file tools are confined to. */
  workspaceDir: string
  delegate(ctx: ToolContext, request: DelegateRequest): Promise<{ taskId: string }>
  reply(ctx: ToolContext, text: string): Promise<void>
  listTasks(ctx: ToolContext, filter: ListTasksFilter): Promise<TaskSummary[]>
  cancelTask(ctx: ToolContext, taskId: string): Promise<boolean>
  /** ask_user: the answer once there is one; AWAIT_ANSWER while the question is open. */
  ask(ctx: ToolContext, question: Question): Promise<Answer | typeof AWAIT_ANSWER>
  /** A rule says "ask": the conversation's user allows or denies this call (waits for them). */
  approve(ctx: ToolContext, tool: string, pattern: string): Promise<boolean>
  history: HistoryReader
  memory: MemoryService
}
