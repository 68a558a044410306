import type { Logger } from "pino"
import type { Access } from "../access/access.ts"
import type { Outbox } from "../channel/outbox.ts"
import type { TaskRecord } from "../core/types.ts"
import type { Questions } from "../question/questions.ts"
import type { Scheduler } from "../schedule/scheduler.ts"
import type { Store } from "../store/store.ts"
import type { Conversations } from "./conversations.ts"
import type { TaskBoard } from "./task-board.ts"

/** A task found running at start-up is re-queued once; crashing again fails it. */
const MAX_TASK_ATTEMPTS = 2

export interface Recoverable {
  store: Store
  outbox: Outbox
  board: TaskBoard
  conversations: Conversations
  access: Access
  questions: Questions
  scheduler: Scheduler
  log: Logger
}

/**
 * Start-up, after a stop or a crash: everything is rebuilt from the store, in this order.
 * Unsent replies go out; a task that was running when Steward stopped is queued again (or
 * failed, the second time); pending inbox events are loaded and batches that ended unreported
 * wake their Teller (one event per batch, whichever does it); pairings, questions and triggers are loaded; then the queues and turns start.
 */
export async function recover(parts: Recoverable): Promise<void> {
  await parts.outbox.load()
  parts.board.load(await requeueInterrupted(parts.store, parts.log))
  // Pending events first: a batch reported before the stop is in them, and the inbox takes an
  // event id once, so reportEnded's wake of the same batch adds nothing.
  await parts.conversations.load()
  await parts.board.reportEnded()
  await parts.access.load()
  await parts.questions.load()
  await parts.scheduler.start()
  parts.board.resume()
  parts.conversations.resume()
}

/** Every live task on record, those interrupted by the stop rewritten (on disk first) as queued again
 *  or failed. */
async function requeueInterrupted(store: Store, log: Logger): Promise<TaskRecord[]> {
  // Only live work and the batches it belongs to; ended tasks stay in the store.
  const tasks = await store.liveTasks()
  for (const [index, task] of tasks.entries()) {
    if (task.status !== "running") continue
    const failed = task.attempts >= MAX_TASK_ATTEMPTS
    const update: TaskRecord = failed
      ? { ...task, status: "failed", error: `interrupted ${task.attempts} times by a restart`, endedAt: new Date().toISOString() }
      : { ...task, status: "queued" }
    await store.save({ tasks: [update] })
    tasks[index] = update
    log.warn({ task: task.id, failed }, "task was running when Steward stopped")
  }
  return tasks
}
