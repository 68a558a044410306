import type { Logger } from "pino"
import { DEFAULT_WORKER } from "../agent/agents.ts"
import type { LoopOutcome } from "../agent/loop.ts"
import type { Config } from "../config/config.ts"
import { TERMINAL, type Condition, type ConversationId, type FiringRecord, type ProgressUpdate, type TaskRecord, type TaskStatus, type ToolSummary, type TriggerRecord, type UserId } from "../core/types.ts"
import { delegateTarget, refusal } from "../permission/roles.ts"
import { whyNever } from "../schedule/condition.ts"
import type { Scheduler } from "../schedule/scheduler.ts"
import { isBatchHead, type InboxEvent } from "../store/records.ts"
import { newId } from "../store/ids.ts"
import type { Store, StoredRecords } from "../store/store.ts"
import type { Caller, DelegateRequest, ListTasksFilter, TaskCapability, TaskSummary } from "../tool/capabilities.ts"
import { ToolError } from "../tool/tool.ts"
import { BatchStatus } from "./batch-status.ts"
import { resolveId } from "./id-prefix.ts"
import { TaskQueue } from "./queue.ts"
import { reportText } from "./report.ts"
import type { Sessions } from "./sessions.ts"
import { listTasks } from "./task-listing.ts"
import { errorText, internalError } from "../core/errors.ts"
import { QuotaReached } from "./runner.ts"
import { CLUSTER_MAX_TASK_ATTEMPTS, HandedOver, interrupted, MAX_TASK_ATTEMPTS, Interrupted, isQuietRun, runOf, sessionInUse, TimedOut, newTask, resultsEventId, runTask, sessionOf } from "./task-records.ts"

export interface TaskBoardDeps {
  config: Config
  store: Store
  sessions: Sessions
  scheduler: Scheduler
  log: Logger
  /** Runs a task's agent (the Planner or its worker type) over its session to the end — in this
   *  process, or in whichever process of a cluster claims it. Rejects with Interrupted when the
   *  run went away without an outcome. */
  run: (task: TaskRecord, signal: AbortSignal, onTool: (summary: ToolSummary) => void) => Promise<LoopOutcome>
  /** A batch ended: the event with its results wakes the conversation's Teller. */
  wake: (event: InboxEvent) => void
  /** The Teller session of a conversation, the parent of the tasks a command or a trigger starts. */
  tellerSessionId: (conversation: ConversationId, user: UserId) => Promise<string>
  /** What a batch of work is doing and how it ended, for its channel (batch-status.ts). */
  progress: (conversation: ConversationId, update: ProgressUpdate) => void
  /** Work moved: started, ended or queued. */
  changed: () => void
  /** Steward is stopping: nothing new starts, and a run cut short goes back to the queue. */
  stopping: () => boolean
  /** The user's IANA zone, for times list_tasks shows. */
  timeZoneOf: (user: UserId) => string
  /** A cluster's job queue takes every task at once (each process claims WORKER_CONCURRENCY of
   *  each role, higher priority first) and the claiming process times the run. */
  shared?: boolean
}

class Cancelled extends Error {}

/**
 * The task board: every Planner and Worker task, its queue (by priority), the concurrency
 * limit, timeouts, a Planner's staged worker tasks (committed all or none when it succeeds)
 * and the report that wakes the Teller once a batch has ended. Each change is written to the
 * store before it is acted on.
 */
export class TaskBoard implements TaskCapability {
  private tasks = new Map<string, TaskRecord>()
  private byOrigin = new Map<string, string>()
  private workerQueue = new TaskQueue()
  private plannerQueue = new TaskQueue()
  private running = new Map<string, AbortController>()
  private readonly status: BatchStatus
  /** Task runs under way, so stop() can wait for them. */
  private inflight = new Set<Promise<unknown>>()
  /** Batch heads stopped by /stop: their end wakes nobody (the user asked for silence). */
  private silenced = new Set<string>()
  /** Batch heads whose report is being written. */
  private reporting = new Set<string>()

  constructor(private readonly deps: TaskBoardDeps) {
    this.status = new BatchStatus({ task: (id) => this.tasks.get(id), show: deps.progress })
  }

  /** Takes the tasks found at start-up (see recovery.ts): queued one-shot tasks join their queue;
   *  conditional ones wait for their condition once the scheduler runs (resume). */
  load(tasks: TaskRecord[]): void {
    for (const task of tasks) this.track(task)
    for (const task of this.tasks.values()) if (task.status === "queued" && task.type !== "conditional") this.queueOf(task).push(task.id, task.priority)
  }

  /** Wakes the Teller for every batch that ended but was not reported before a stop. */
  async reportEnded(): Promise<void> {
    for (const task of this.tasks.values()) if (TERMINAL.has(task.status)) await this.reportIfDone(task)
  }

  /** Starts the condition waits and the queues; a task still running (in another process of a
   *  cluster, see recovery.ts) is followed to its end. */
  resume(): void {
    for (const task of this.tasks.values()) {
      if (task.status === "queued" && task.type === "conditional") this.awaitCondition(task)
      if (task.status === "running") this.execute(task, true)
    }
    this.dispatch()
  }

  /** Aborts running tasks and waits for them to wind down; they go back to the queue (a
   *  shutdown is not a crash, the attempt does not count) or, in a cluster, run on elsewhere. */
  async stop(): Promise<void> {
    for (const controller of this.running.values()) controller.abort(new Error("Steward is stopping"))
    await Promise.allSettled(this.inflight)
  }

  get busy(): boolean {
    return this.running.size > 0 || this.workerQueue.size > 0 || this.plannerQueue.size > 0
  }

  /** Tasks waiting for a slot, by role (conditional tasks join their queue once they hold). */
  queueDepth(): Record<"planner" | "worker", number> {
    return { planner: this.plannerQueue.size, worker: this.workerQueue.size }
  }

  /** Conversations with a task running now. */
  runningIn(): Set<ConversationId> {
    return new Set([...this.running.keys()].flatMap((id) => this.tasks.get(id)?.conversation ?? []))
  }

  get(taskId: string): TaskRecord | undefined {
    return this.tasks.get(taskId)
  }

  /** A conversation's tasks that have not ended, oldest first. */
  openIn(conversation: ConversationId): TaskRecord[] {
    return [...this.tasks.values()].filter((task) => task.conversation === conversation && !TERMINAL.has(task.status))
  }

  // ── the task capability (delegate, list_tasks, cancel_task) ─────────────────

  async delegate(caller: Caller, request: DelegateRequest): Promise<{ taskId: string }> {
    const origin = `${caller.sessionId}:${caller.callId}`
    const known =
      this.byOrigin.get(origin) ?? this.tasks.get(caller.taskId ?? "")?.staged?.find((t) => t.origin === origin)?.id ?? (caller.fresh ? undefined : (await this.deps.store.taskByOrigin(origin))?.id)
    if (known) return { taskId: known }
    // Whatever rules a permissions file adds, the role table decides who may delegate to whom.
    const role = delegateTarget(caller.role)
    if (!role) throw new ToolError(refusal(caller.role, "delegate"))
    const continued = request.sessionId ? await this.deps.sessions.exists(request.sessionId) : undefined
    // An unknown or foreign session id starts fresh rather than failing the call — another
    // person's in a shared conversation too (its history is what was read for them); so does one
    // that an unfinished task is still using, since two runs cannot share one session log.
    const continues = continued !== undefined && continued.conversation === caller.conversation && continued.user === caller.user && continued.role === role && !sessionInUse(this.tasks.values(), continued.id)
    const task: TaskRecord = {
      ...newTask(caller, origin, role, role === "planner" ? "planner" : (request.worker ?? DEFAULT_WORKER)),
      type: request.type,
      condition: request.condition,
      prompt: request.prompt,
      priority: request.priority,
      timeout: request.timeout,
      sessionId: continues ? continued.id : newId(),
      continuesSession: continues || undefined,
    }
    if (role === "worker") {
      // Staged in the Planner's record; committed only when the Planner succeeds.
      const planner = this.tasks.get(caller.taskId!)!
      const update = { ...planner, staged: [...(planner.staged ?? []), task] }
      await this.deps.store.save({ tasks: [update] })
      this.track(update)
      return { taskId: task.id }
    }
    const session = continues ? undefined : sessionOf(task)
    await this.deps.store.save({ tasks: [task], sessions: session ? [session] : [] })
    if (session) this.deps.sessions.adopt(session)
    this.track(task)
    this.plannerQueue.push(task.id, task.priority)
    this.dispatch()
    return { taskId: task.id }
  }

  listTasks(caller: Caller, filter: ListTasksFilter): Promise<TaskSummary[]> {
    return listTasks({ ...this.deps, live: this.tasks.values() }, caller, filter)
  }

  /** Which open task or schedule of the conversation `given` (an id or unique prefix) names:
   *  of `user`'s, when given (in a shared conversation one person's are not another's). */
  resolve(conversation: ConversationId, given: string, user?: UserId): ReturnType<typeof resolveId> {
    return resolveId(given, [...this.openIn(conversation), ...this.deps.scheduler.list(conversation)].filter((item) => user === undefined || item.user === user).map((item) => item.id))
  }

  /** Cancels a queued task of the caller's conversation; a running one is not touched (seed 002).
   *  An unknown id is `false`; an ambiguous prefix is an error the model reads. */
  async cancelTask(caller: Caller, given: string): Promise<boolean> {
    const resolved = this.resolve(caller.conversation, given, caller.user)
    if ("error" in resolved) {
      if (resolved.unknown) return false
      throw new ToolError(resolved.error)
    }
    const taskId = resolved.id
    if (await this.deps.scheduler.cancel(taskId, caller.conversation)) return true
    const task = this.tasks.get(taskId)
    if (!task || task.conversation !== caller.conversation || task.status !== "queued") return false
    await this.finish(task, { status: "cancelled", error: "cancelled before it started" })
    return true
  }

  /** /stop: aborts the conversation's open tasks (`user`'s, if given) with what they committed; their results wake nobody. Returns the ids. */
  async stopAll(conversation: ConversationId, reason: string, user?: UserId): Promise<string[]> {
    const open = this.openIn(conversation).filter((task) => user === undefined || task.user === user)
    // The batch heads are what report: the tasks themselves, or the Planner that committed them.
    for (const task of open) this.silenced.add(isBatchHead(task) ? task.id : task.parentTaskId!)
    const stopped: string[] = []
    for (const task of open) if (await this.abort(task.id, reason)) stopped.push(task.id)
    return stopped
  }

  /** Aborts a task and, through their parent link, every task it committed — also when the
   *  task itself has already ended (a Planner ends before its workers run). */
  async abort(taskId: string, reason = "cancelled"): Promise<boolean> {
    const task = this.tasks.get(taskId)
    if (!task) return false
    let aborted = false
    for (const child of [...this.tasks.values()]) if (child.parentTaskId === taskId) aborted = (await this.abort(child.id, reason)) || aborted
    if (TERMINAL.has(task.status)) return aborted
    if (task.status === "running") this.running.get(task.id)?.abort(new Cancelled(reason))
    else await this.finish(task, { status: "cancelled", error: reason })
    return true
  }

  // ── tasks started without a model deciding ─────────────────────────────────

  /** A task of its own that a command starts (`/review`, `@researcher`); its result wakes the
   *  Teller like any batch. */
  async startCommand(caller: { conversation: ConversationId; user: UserId }, origin: string, agent: string, prompt: string, command: string, also: Partial<StoredRecords>): Promise<void> {
    const role = agent === "planner" ? "planner" : "worker"
    const sessionId = await this.deps.tellerSessionId(caller.conversation, caller.user)
    await this.enqueue({ ...newTask({ ...caller, sessionId }, origin, role, agent), prompt: prompt || "(no arguments)", command }, also)
  }

  /** A firing's run: a worker task of its own in the report's conversation, whose result wakes
   *  that conversation's Teller. Idempotent by firing, as the Scheduler requires. */
  async startRun(trigger: TriggerRecord, firing: FiringRecord): Promise<string> {
    const origin = `firing:${firing.id}`
    const known = this.byOrigin.get(origin) ?? (await this.deps.store.taskByOrigin(origin))?.id
    if (known) return known
    const sessionId = await this.deps.tellerSessionId(trigger.target ?? trigger.conversation, trigger.user)
    const task = runTask(trigger, firing, sessionId, origin)
    await this.enqueue(task)
    return task.id
  }

  taskStatus(taskId: string): TaskStatus | undefined {
    // A worker task staged by a Planner still running exists, but is not committed yet.
    return this.tasks.get(taskId)?.status ?? ([...this.tasks.values()].some((planner) => planner.staged?.some((staged) => staged.id === taskId)) ? "queued" : undefined)
  }

  // ── the queues ──────────────────────────────────────────────────────────────

  /** Writes a new task with its session (and whatever else `also` holds) and queues it. */
  private async enqueue(task: TaskRecord, also: Partial<StoredRecords> = {}): Promise<void> {
    const session = sessionOf(task)
    await this.deps.store.save({ ...also, tasks: [task], sessions: [session] })
    this.deps.sessions.adopt(session)
    this.track(task)
    this.queueOf(task).push(task.id, task.priority)
    this.dispatch()
  }

  /** A conditional task joins the worker queue once its condition holds; one that can never
   *  hold is cancelled with that reason, which reports it. */
  private awaitCondition(task: TaskRecord): void {
    this.deps.scheduler.wait(task.id, task.condition as Condition, task.createdAt, (result) => {
      const current = this.tasks.get(task.id)
      if (current?.status !== "queued") return
      if (result === "holds") {
        this.workerQueue.push(current.id, current.priority)
        this.dispatch()
      } else {
        const why = whyNever(task.condition as Condition, (id) => this.deps.scheduler.taskStatus(id))
        this.finish(current, { status: "cancelled", error: `its condition can never hold: ${why}` }).catch((error) => this.deps.log.error({ err: error, task: task.id }, "could not cancel a conditional task"))
      }
    })
  }

  private track(task: TaskRecord): void {
    this.tasks.set(task.id, task)
    this.byOrigin.set(task.origin, task.id)
  }

  private queueOf(task: TaskRecord): TaskQueue {
    return task.role === "planner" ? this.plannerQueue : this.workerQueue
  }

  private dispatch(): void {
    if (this.deps.stopping()) return
    const limit = this.deps.config.workerConcurrency
    for (const [queue, role] of [[this.workerQueue, "worker"], [this.plannerQueue, "planner"]] as const) {
      const running = () => [...this.running.keys()].filter((id) => this.tasks.get(id)?.role === role).length
      while (queue.size > 0 && (this.deps.shared || running() < limit)) {
        const task = this.tasks.get(queue.shift()!)
        if (task?.status === "queued") this.execute(task)
      }
    }
    this.deps.changed()
  }

  /** Runs a queued task (written as running first), or follows one already running (`taken`:
   *  found running at start-up in a cluster). */
  private execute(queued: TaskRecord, taken = false): void {
    const controller = new AbortController()
    this.running.set(queued.id, controller)
    const seconds = queued.timeout ?? this.deps.config.timeouts[queued.role]
    const timer = this.deps.shared ? undefined : setTimeout(() => controller.abort(new TimedOut(`timed out after ${seconds} s`)), seconds * 1000)
    const task: TaskRecord = taken ? queued : { ...queued, status: "running", attempts: queued.attempts + 1, runs: runOf(queued) + 1, startedAt: now() }
    const run = (taken ? Promise.resolve() : this.deps.store.save({ tasks: [task] }))
      .then(() => {
        this.track(task)
        this.status.started(task)
        return this.deps.run(task, controller.signal, (summary) => this.status.tool(task, summary))
      })
      .then(
        (outcome) => this.finish(this.tasks.get(task.id)!, { status: "completed", result: outcome.status === "done" ? outcome.text : "" }),
        (error) => {
          if (error instanceof HandedOver) return
          if (error instanceof Interrupted) return this.requeue(this.tasks.get(task.id)!, error)
          if (this.deps.stopping()) return this.deps.store.save({ tasks: [interrupted(this.tasks.get(task.id)!, false)] })
          const why: unknown = controller.signal.aborted ? controller.signal.reason : error
          const status: TaskStatus = why instanceof TimedOut ? "timed_out" : why instanceof Cancelled ? "cancelled" : "failed"
          return this.finish(this.tasks.get(task.id)!, { status, error: status !== "failed" || why instanceof QuotaReached ? errorText(why) : internalError(this.deps.log, why, "task failed", { task: task.id }) })
        },
      )
      .catch((error) => this.deps.log.error({ err: error, task: task.id }, "could not record the end of a task"))
      .finally(() => {
        clearTimeout(timer)
        this.running.delete(task.id)
        this.deps.sessions.forget(task.sessionId)
        this.dispatch()
      })
    this.inflight.add(run)
    void run.finally(() => this.inflight.delete(run))
  }

  /** The process running a task went away: queued again, or failed if interrupted too often. */
  private async requeue(task: TaskRecord, error: Interrupted): Promise<void> {
    const update = interrupted(task, error.counts, this.deps.shared ? CLUSTER_MAX_TASK_ATTEMPTS : MAX_TASK_ATTEMPTS)
    this.deps.log.warn({ task: task.id, why: error.message, status: update.status }, "task interrupted")
    if (update.status === "failed") return this.finish(task, { status: "failed", error: update.error })
    await this.deps.store.save({ tasks: [update] })
    this.track(update)
    this.queueOf(update).push(update.id, update.priority)
  }

  /** Records a task's end; a Planner's success commits its staged worker tasks in the same write. */
  private async finish(task: TaskRecord, end: Pick<TaskRecord, "status"> & Partial<Pick<TaskRecord, "result" | "error">>): Promise<void> {
    this.queueOf(task).remove(task.id)
    const committed = end.status === "completed" ? (task.staged ?? []).map((child) => ({ ...child, parentTaskId: task.id, createdAt: now() })) : []
    const update: TaskRecord = { ...task, ...end, endedAt: now(), staged: undefined, children: task.role === "planner" ? committed.map((c) => c.id) : undefined }
    const sessions = committed.filter((child) => !child.continuesSession).map((child) => sessionOf(child))
    await this.deps.store.save({ tasks: [update, ...committed], sessions })
    this.track(update)
    for (const session of sessions) this.deps.sessions.adopt(session)
    for (const child of committed) {
      this.track(child)
      if (child.type === "conditional") this.awaitCondition(child)
      else this.workerQueue.push(child.id, child.priority)
    }
    if (task.type === "conditional") this.deps.scheduler.unwait(task.id)
    await this.deps.scheduler.taskEnded(task.id, update.status)
    this.status.ended(update)
    this.deps.log.info({ task: task.id, role: task.role, status: update.status, committed: committed.length }, "task ended")
    const head = isBatchHead(update) ? update : this.tasks.get(task.parentTaskId!)
    if (head) await this.reportIfDone(head)
    this.dispatch()
  }

  /** Wakes the Teller once, when a batch has ended: its head (see isBatchHead) and every one-shot
   *  worker task the head committed. A conditional task reports on its own when it ends. */
  private async reportIfDone(head: TaskRecord): Promise<void> {
    if (!isBatchHead(head) || head.reported || !TERMINAL.has(head.status)) return
    const batch = [head, ...(head.children ?? []).map((id) => this.tasks.get(id)!).filter((task) => task?.type !== "conditional")]
    if (batch.some((task) => !task || !TERMINAL.has(task.status))) return
    // Two of the batch's tasks ending at once both find it complete: only the first reports.
    if (this.reporting.has(head.id)) return
    this.reporting.add(head.id)
    // A quiet run with nothing to report, or a batch the user stopped, wakes nobody.
    const quietRun = isQuietRun(head)
    const silent = quietRun || this.silenced.delete(head.id)
    // The event's id is the batch's, so however often a wake is attempted (a crash between any
    // two writes, a recovery pass beside the normal path) there is one event per result: a
    // second write overwrites it and the inbox takes an id once.
    const event: InboxEvent | undefined = silent
      ? undefined
      : { id: resultsEventId(head.id), conversation: head.conversation, user: head.user, kind: "task_results", text: reportText(batch), createdAt: now(), attempts: 0, firingId: head.firingId }
    const update = { ...head, reported: true }
    try {
      await this.deps.store.save({ tasks: [update], events: event ? [event] : [] })
    } finally {
      this.reporting.delete(head.id)
    }
    this.track(update)
    if (event) this.deps.wake(event)
    else if (quietRun) await this.deps.scheduler.nothingToReport(head.firingId!)
  }
}

function now(): string {
  return new Date().toISOString()
}
