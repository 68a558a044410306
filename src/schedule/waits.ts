import type { Logger } from "pino"
import { TERMINAL, type Condition, type TaskStatus } from "../core/types.ts"
import type { Store } from "../store/store.ts"
import { taskIdsOf, type ConditionFacts } from "./condition.ts"
import { RaisedEvents } from "./events.ts"
import { ConditionWatch, type Watcher } from "./watch.ts"

export interface ConditionWaitsDeps {
  store: Store
  log: Logger
  /** The status of a task the host holds in memory. */
  hostStatus: (taskId: string) => TaskStatus | undefined
}

/**
 * Everything conditions are waited on for — conditional triggers and the host's conditional
 * delegate tasks — and the facts they are decided by: task statuses (the host's, or an ended
 * task's read from the store) and raised events (this process's and the CLI's).
 */
export class ConditionWaits {
  private readonly store: Store
  private readonly log: Logger
  private readonly hostStatus: (taskId: string) => TaskStatus | undefined
  /** Statuses of ended tasks the host no longer holds in memory that a condition names: read
   *  from the store when the condition is first watched. */
  private endedTasks = new Map<string, TaskStatus>()
  /** Waits whose tasks are being looked up; unwait before the lookup ends drops the wait. */
  private pendingWaits = new Map<string, object>()
  private events: RaisedEvents
  private watch: ConditionWatch
  private stopPolling?: () => void

  constructor(deps: ConditionWaitsDeps) {
    this.store = deps.store
    this.log = deps.log
    this.hostStatus = deps.hostStatus
    this.events = new RaisedEvents(deps.store)
    this.watch = new ConditionWatch(() => this.facts())
  }

  /** Reads the events raised before this start. */
  load(): Promise<void> {
    return this.events.load()
  }

  /** A task's status as conditions see it: the host's, or an ended task's from the store. */
  taskStatus(taskId: string): TaskStatus | undefined {
    return this.hostStatus(taskId) ?? this.endedTasks.get(taskId)
  }

  /** Reads the status of each ended task a condition names that the host does not hold. */
  async learn(condition: Condition): Promise<void> {
    for (const taskId of taskIdsOf(condition)) {
      if (this.taskStatus(taskId) !== undefined) continue
      const task = await this.store.task(taskId)
      if (task && TERMINAL.has(task.status)) this.endedTasks.set(taskId, task.status)
    }
  }

  /** Records an event (`POST /hooks/<name>`) and re-evaluates the conditions. */
  async raise(name: string): Promise<void> {
    await this.events.raise(name)
    this.watch.check()
  }

  /** Takes events another process (the CLI) wrote to the store since the last look. */
  async pollRaised(): Promise<void> {
    if (await this.events.poll()) this.watch.check()
  }

  /** Re-evaluates every condition (a task ended). */
  check(): void {
    this.watch.check()
  }

  /** Waits for a trigger's condition; replaces an earlier watch of the trigger. */
  watchTrigger(id: string, watcher: Watcher): void {
    this.watch.add(`trigger:${id}`, watcher)
  }

  unwatchTrigger(id: string): void {
    this.watch.remove(`trigger:${id}`)
  }

  /** Waits for a condition on the host's behalf; see Scheduler.wait. */
  wait(id: string, watcher: Watcher): void {
    const key = `wait:${id}`
    const watch = () => this.watch.add(key, watcher)
    if (taskIdsOf(watcher.condition).every((taskId) => this.taskStatus(taskId) !== undefined)) return watch()
    // A task the host does not hold may have ended long ago: its status is read first.
    const token = {}
    this.pendingWaits.set(key, token)
    this.learn(watcher.condition)
      .catch((error) => this.log.error({ err: error, wait: id }, "could not read the tasks a condition names"))
      .finally(() => {
        if (this.pendingWaits.get(key) !== token) return
        this.pendingWaits.delete(key)
        watch()
      })
  }

  unwait(id: string): void {
    this.pendingWaits.delete(`wait:${id}`)
    this.watch.remove(`wait:${id}`)
  }

  /** Looks for events raised by another process every `pollMs`. */
  startPolling(pollMs: number): void {
    let polling = false
    const handle = setInterval(() => {
      if (polling) return
      polling = true
      this.pollRaised()
        .catch((error) => this.log.error({ err: error }, "could not read raised events"))
        .finally(() => (polling = false))
    }, pollMs)
    this.stopPolling = () => clearInterval(handle)
  }

  stop(): void {
    this.stopPolling?.()
    this.watch.stop()
  }

  facts(): ConditionFacts {
    return {
      taskStatus: (taskId) => this.taskStatus(taskId),
      now: new Date(),
      raisedSince: (name, since) => this.events.raisedSince(name, since),
    }
  }
}
