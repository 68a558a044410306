import { TERMINAL, type ConversationId, type ProgressUpdate, type TaskRecord, type ToolSummary } from "../core/types.ts"
import { isBatchHead } from "../store/records.ts"
import { stopButton } from "./stop-button.ts"

/** A status's title is at most this long: the prompt is cut at a word before it. */
const TITLE_LIMIT = 60

/** A few words saying what a task is about: the command that started it and the first line of
 *  its prompt, cut at a word. */
export function taskTitle(task: Pick<TaskRecord, "prompt" | "command">): string {
  const line = task.prompt.trim().split("\n")[0]!.replace(/\s+/g, " ").trim()
  const text = task.command ? `${task.command} ${line}`.trim() : line || "a task"
  if (text.length <= TITLE_LIMIT) return text
  const cut = text.slice(0, TITLE_LIMIT - 1)
  const word = cut.lastIndexOf(" ")
  return `${word > TITLE_LIMIT / 2 ? cut.slice(0, word) : cut}…`
}

type Batch = { head: TaskRecord; startedAt: string; tools: Map<string, ToolSummary[]> }

export interface BatchStatusDeps {
  /** The task as the board holds it now. */
  task(id: string): TaskRecord | undefined
  /** Tells the conversation's channel (Channel.progress). */
  show(conversation: ConversationId, update: ProgressUpdate): void
}

/**
 * One status per batch of delegated work (a task nobody committed, with the tasks it committed):
 * its title, since when it runs, the latest tool calls of its running tasks and the Stop button,
 * then how it ended. Kept in memory only: it is a view, the task records are the state — after
 * a restart a batch still running is shown anew when its next run starts, and a press of an old
 * button is decided by the records (stop-button.ts).
 */
export class BatchStatus {
  private readonly batches = new Map<string, Batch>()

  constructor(private readonly deps: BatchStatusDeps) {}

  /** A task of a batch began running (or was found running elsewhere in a cluster). */
  started(task: TaskRecord): void {
    const head = this.headOf(task)
    // A quiet run reports only when there is something to say: it shows nothing while it runs either.
    if (!head || head.quiet) return
    const batch = this.batches.get(head.id) ?? { head, startedAt: head.startedAt ?? task.startedAt ?? new Date().toISOString(), tools: new Map() }
    this.batches.set(head.id, batch)
    this.show(batch)
  }

  tool(task: TaskRecord, summary: ToolSummary): void {
    const batch = this.batchOf(task)
    if (!batch) return
    batch.tools.set(task.id, (batch.tools.get(task.id) ?? []).filter((tool) => tool.id !== summary.id).concat(summary))
    this.show(batch)
  }

  /** A task ended (its record already says how): once its whole batch has, the status says how it ended. */
  ended(task: TaskRecord): void {
    const batch = this.batchOf(task)
    if (!batch) return
    batch.tools.delete(task.id)
    const tasks = this.endedBatch(batch.head.id)
    if (!tasks) return this.show(batch)
    this.batches.delete(batch.head.id)
    const outcome = tasks.some((t) => t.status === "cancelled") ? "stopped" : tasks.some((t) => t.status !== "completed") ? "failed" : "done"
    this.deps.show(batch.head.conversation, { ...this.common(batch), state: "done", tools: [], outcome })
  }

  private show(batch: Batch): void {
    const tools = [...batch.tools.values()].flat()
    this.deps.show(batch.head.conversation, { ...this.common(batch), state: "running", tools, stop: stopButton(batch.head.id) })
  }

  private common(batch: Batch): Pick<ProgressUpdate, "taskId" | "agent" | "title" | "startedAt"> {
    return { taskId: batch.head.id, agent: batch.head.agent, title: taskTitle(batch.head), startedAt: batch.startedAt }
  }

  private headOf(task: TaskRecord): TaskRecord | undefined {
    return isBatchHead(task) ? task : this.deps.task(task.parentTaskId!)
  }

  private batchOf(task: TaskRecord): Batch | undefined {
    const head = this.headOf(task)
    return head && this.batches.get(head.id)
  }

  /** The batch's tasks once every one has ended (as the report counts them: a conditional task
   *  is a batch of its own), else undefined. */
  private endedBatch(headId: string): TaskRecord[] | undefined {
    const head = this.deps.task(headId)
    if (!head || !TERMINAL.has(head.status)) return undefined
    const tasks = [head, ...(head.children ?? []).map((id) => this.deps.task(id)).filter((child) => child?.type !== "conditional")]
    return tasks.every((t) => t && TERMINAL.has(t.status)) ? (tasks as TaskRecord[]) : undefined
  }
}
