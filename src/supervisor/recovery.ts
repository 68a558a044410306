import type { Logger } from "pino"
import type { Access } from "../access/access.ts"
import type { Outbox } from "../channel/outbox.ts"
import type { TaskRecord } from "../core/types.ts"
import type { Questions } from "../question/questions.ts"
import type { Scheduler } from "../schedule/scheduler.ts"
import type { Store } from "../store/store.ts"
import type { Conversations } from "./conversations.ts"
import type { TaskBoard } from "./task-board.ts"
import { interrupted } from "./task-records.ts"

export interface Recoverable {
  store: Store
  outbox: Outbox
  board: TaskBoard
  conversations: Conversations
  access: Access
  questions: Questions
  scheduler: Scheduler
  log: Logger
  /** Tasks run in other processes too (STORE_URL on Postgres): one found running may still be
   *  running elsewhere, so it is taken over as it is, not queued again. */
  shared: boolean
}

/**
 * Start-up, after a stop or a crash: everything is rebuilt from the store, in this order.
 * Unsent replies go out; a task that was running when Steward stopped is queued again (or
 * failed, the second time); pending inbox events are loaded and batches that ended unreported
 * wake their Teller (one event per batch, whichever does it); pairings, questions and triggers are loaded; then the queues and turns start.
 */
export async function recover(parts: Recoverable): Promise<void> {
  await parts.outbox.load()
  parts.board.load(parts.shared ? await parts.store.liveTasks() : await requeueInterrupted(parts.store, parts.log))
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
    // A crash counts as an attempt: the run may be what crashed the process.
    const update = interrupted(task, true)
    await store.save({ tasks: [update] })
    tasks[index] = update
    log.warn({ task: task.id, failed: update.status === "failed" }, "task was running when Steward stopped")
  }
  return tasks
}
