import type { Logger } from "pino"
import type { Condition, FiringRecord, TaskStatus, TriggerRecord } from "../core/types.ts"
import type { Store } from "../store/store.ts"
import { evaluateCondition } from "./condition.ts"
import { dueOutcome, DueTimes } from "./due-times.ts"
import { internalError } from "../core/errors.ts"
import { Firings } from "./firings.ts"
import type { SchedulerHost } from "./host.ts"
import { newTrigger, type TriggerOrigin } from "./new-trigger.ts"
import { runAtProblem, ScheduleRequest } from "./request.ts"
import { SerialChain } from "./serial.ts"
import { editedTrigger, pausedTrigger, resumedTrigger } from "./trigger-changes.ts"
import { TriggerTable, type TriggerSummary } from "./trigger-table.ts"
import { ConditionWaits } from "./waits.ts"

export type { SchedulerHost } from "./host.ts"

export interface SchedulerDeps {
  store: Store
  host: SchedulerHost
  log: Logger
  /** A firing reached a new status (the metrics). */
  onFiring?: (status: FiringRecord["status"]) => void
  /** How often to look for events raised by another process (the CLI). Default 1000 ms. */
  pollMs?: number
}

/**
 * The schedule engine: recurring, scheduled and conditional triggers, and condition waits.
 *
 * It coordinates its parts: TriggerTable (the triggers, written before memory takes them),
 * DueTimes (timers, cadences and catch-up after downtime), ConditionWaits (what conditions are
 * waited on and the facts that decide them) and Firings (firing records and their runs). Every
 * change is written before it is acted on — the firing before its run is started, the next due
 * time with the firing — and all of them run one at a time through one chain, so a timer, a
 * task's end and a cancel never interleave on a trigger.
 */
export class Scheduler {
  private readonly log: Logger
  private readonly pollMs: number
  private readonly table: TriggerTable
  private readonly waits: ConditionWaits
  private readonly firings: Firings
  private readonly dueTimes: DueTimes
  private readonly chain = new SerialChain()
  private stopped = false

  constructor(deps: SchedulerDeps) {
    this.log = deps.log
    this.pollMs = deps.pollMs ?? 1000
    this.table = new TriggerTable(deps.store)
    this.waits = new ConditionWaits({ store: deps.store, log: deps.log, hostStatus: (taskId) => deps.host.taskStatus(taskId) })
    this.firings = new Firings({ store: deps.store, table: this.table, host: deps.host, log: deps.log, onFiring: deps.onFiring })
    this.dueTimes = new DueTimes({
      table: this.table,
      waits: this.waits,
      onDue: (id, slot, afterDowntime) => this.due(id, slot, afterDowntime),
      onDecided: (id, result, at) => this.conditionDecided(id, result, at),
      background: (op) => this.background(op),
    })
  }

  // ── life cycle ──────────────────────────────────────────────────────────────

  /** Loads the triggers and re-arms them. Call it once the host knows its tasks (taskStatus). */
  async start(): Promise<void> {
    await this.waits.load()
    for (const trigger of await this.table.load()) if (trigger.condition) await this.waits.learn(trigger.condition)
    await this.chain.run(async () => {
      for (const trigger of this.table.all()) await this.firings.resumeRun(trigger)
      for (const trigger of this.table.all()) {
        if (trigger.status !== "active") continue
        // One trigger that cannot be re-armed (say, a cron expression a newer reading rejects)
        // must not keep the others from starting.
        await this.dueTimes.catchUp(trigger).catch((error) => this.end(this.table.get(trigger.id)!, `it could not be re-armed: ${internalError(this.log, error, "could not re-arm a trigger", { trigger: trigger.id })}`))
      }
    })
    this.waits.startPolling(this.pollMs)
  }

  async stop(): Promise<void> {
    this.stopped = true
    this.dueTimes.disarmAll()
    this.waits.stop()
    await this.settled()
  }

  /** Resolves once no scheduler work is under way (for tests and shutdown). */
  settled(): Promise<void> {
    return this.chain.settled()
  }

  // ── the tool's side ─────────────────────────────────────────────────────────

  /** Creates a trigger; a call replayed after a crash (same origin) gets the same trigger. */
  async create(request: ScheduleRequest, where: TriggerOrigin): Promise<{ taskId: string }> {
    const valid = ScheduleRequest.parse(request)
    return this.chain.run(async () => {
      const known = await this.table.idOfOrigin(where.origin)
      if (known) return { taskId: known }
      const trigger = newTrigger(valid, where)
      try {
        // A one-shot's runAt is its due time even once passed (newTrigger allowed it): the timer
        // then finds it due at once, on time or late as dueOutcome decides.
        if (trigger.kind === "scheduled") trigger.nextRunAt = new Date(trigger.runAt!).toISOString()
        else if (trigger.kind !== "conditional") trigger.nextRunAt = this.dueTimes.nextAfterNow(trigger)?.toISOString()
        else await this.waits.learn(trigger.condition!)
        await this.table.save(trigger)
      } catch (error) {
        this.dueTimes.disarm(trigger.id)
        throw error
      }
      this.dueTimes.arm(trigger)
      this.log.info({ trigger: trigger.id, kind: trigger.kind, nextRunAt: trigger.nextRunAt }, "trigger created")
      return { taskId: trigger.id }
    })
  }

  /** Removes an active trigger (of `conversation`, when given). A run under way is not touched. */
  cancel(id: string, conversation?: string): Promise<boolean> {
    return this.chain.run(async () => {
      const trigger = this.table.get(id)
      if (!trigger || (trigger.status !== "active" && trigger.status !== "paused") || (conversation !== undefined && trigger.conversation !== conversation)) return false
      await this.table.save({ ...trigger, status: "cancelled", nextRunAt: undefined, cooldownUntil: undefined })
      this.dueTimes.disarm(id)
      return true
    })
  }

  /** Pauses an active trigger (of `conversation`, when given); the CLI's path too. Returns the
   *  paused trigger, or why it could not be paused. See trigger-changes.ts. */
  pauseTrigger(id: string, conversation?: string): Promise<TriggerRecord | string> {
    return this.change(id, conversation, pausedTrigger)
  }

  /** Resumes a paused trigger from now, without catching up (see resumedTrigger). */
  resumeTrigger(id: string, conversation?: string): Promise<TriggerRecord | string> {
    return this.change(id, conversation, (trigger) => resumedTrigger(trigger))
  }

  /** Gives a trigger a new definition in place, keeping its id and firings (see editedTrigger). */
  async editTrigger(id: string, request: ScheduleRequest, conversation?: string): Promise<TriggerRecord | string> {
    const valid = ScheduleRequest.parse(request)
    const late = valid.runAt === undefined ? undefined : runAtProblem(valid.runAt)
    if (late) return late
    if (valid.condition) await this.waits.learn(valid.condition)
    return this.change(id, conversation, (trigger) => editedTrigger(trigger, valid))
  }

  /** The conversation's active triggers, oldest first. */
  list(conversation: string): TriggerSummary[] {
    return this.table.list(conversation)
  }

  /** A user's triggers in force (active or paused), for their quota. */
  inForce(user: string): TriggerRecord[] {
    return this.table.all().filter((trigger) => trigger.user === user && (trigger.status === "active" || trigger.status === "paused"))
  }

  /** The trigger a tool call created, if it did (a call replayed after a crash). */
  createdBy(origin: string): Promise<string | undefined> {
    return this.table.idOfOrigin(origin)
  }

  /** The conversation that created a trigger: where its problems are told. */
  async owner(id: string): Promise<string | undefined> {
    return (await this.table.find(id))?.conversation
  }

  /** A task's status as conditions see it: the host's, or an ended task's from the store. */
  taskStatus(taskId: string): TaskStatus | undefined {
    return this.waits.taskStatus(taskId)
  }

  // ── what the host reports ───────────────────────────────────────────────────

  /** Records an event (`POST /hooks/<name>`) and re-evaluates the conditions. */
  raise(name: string): Promise<void> {
    return this.waits.raise(name)
  }

  /** Takes events another process (the CLI) wrote to the store since the last look. */
  pollRaised(): Promise<void> {
    return this.waits.pollRaised()
  }

  /** The host calls this whenever any task ends: a trigger's run, or a task a condition names. */
  async taskEnded(taskId: string, status: TaskStatus): Promise<void> {
    // Queued before the conditions are re-evaluated, so a trigger they fire sees its run ended.
    const recorded = this.chain.run(async () => {
      const trigger = this.table.runningTask(taskId)
      if (trigger) await this.firings.runEnded(trigger, status)
    })
    this.waits.check()
    await recorded
  }

  /** The firing's report was posted; `messageId` is the platform's id. */
  delivered(firingId: string, messageId: string): Promise<void> {
    return this.chain.run(() => this.firings.update(firingId, (firing) => ({ ...firing, status: firing.status === "failed" ? "failed" : "delivered", messageId })))
  }

  /** A quiet trigger's run answered NO_REPORT: nothing is posted, and its firing says so. */
  nothingToReport(firingId: string): Promise<void> {
    return this.chain.run(() => this.firings.update(firingId, (firing) => ({ ...firing, nothingToReport: true })))
  }

  /** The firing's report could not be posted (the host tells the owner's conversation). */
  deliveryFailed(firingId: string, error: string): Promise<void> {
    return this.chain.run(() => this.firings.update(firingId, (firing) => ({ ...firing, status: "failed", error })))
  }

  /** Waits for a condition on the host's behalf (a conditional delegate task, which the host
   *  persists and waits for again after a restart — after start(), which loads the events).
   *  `onResult` is called once, maybe before wait returns; `id` replaces an earlier wait. */
  wait(id: string, condition: Condition, since: string, onResult: (result: "holds" | "never") => void): void {
    this.waits.wait(id, { condition, since, onResult })
  }

  unwait(id: string): void {
    this.waits.unwait(id)
  }

  // ── firing ──────────────────────────────────────────────────────────────────

  /** A recurring or scheduled trigger reached `slot`, a due time at or after its nextRunAt.
   *  `afterDowntime`: found at start-up, so it was missed however recent it is. */
  private async due(id: string, slot: Date, afterDowntime: boolean): Promise<void> {
    const trigger = this.table.get(id)
    // A slot before nextRunAt was handled already (a replay).
    if (!trigger || trigger.status !== "active" || !trigger.nextRunAt || slot.getTime() < Date.parse(trigger.nextRunAt)) return
    const outcome = dueOutcome(trigger, Date.now() - slot.getTime(), afterDowntime)
    const missedFrom = Date.parse(trigger.nextRunAt) < slot.getTime() ? trigger.nextRunAt : undefined
    const next = this.dueTimes.nextAfterNow(trigger)
    const firing = await this.firings.fire({ ...trigger, nextRunAt: next?.toISOString(), status: next ? "active" : "ended" }, slot, outcome, missedFrom)
    this.dueTimes.arm(this.table.get(id)!)
    if (firing.outcome === "missed_skipped") await this.firings.tellSkipped(trigger, firing)
  }

  /** A conditional trigger's condition was decided at `at`. */
  private async conditionDecided(id: string, result: "holds" | "never", at: Date): Promise<void> {
    const trigger = this.table.get(id)
    if (!trigger || trigger.status !== "active") return
    if (result === "never") return this.end(trigger, "its condition can no longer hold")
    // Events raised up to `at` are this firing's; the next firing needs a later one.
    const since = new Date(at.getTime() + 1).toISOString()
    // A trigger fires when its condition *becomes* true. One that holds without any event (a
    // task that completed, a time that passed) cannot become true again: this firing is its last.
    const last = evaluateCondition(trigger.condition!, { ...this.waits.facts(), raisedSince: () => false }, since) === "holds"
    const cooldownUntil = trigger.cooldown > 0 && !last ? new Date(Date.now() + trigger.cooldown * 1000).toISOString() : undefined
    await this.firings.fire({ ...trigger, since, cooldownUntil, status: last ? "ended" : "active", endReason: last ? "its condition stays true" : undefined }, at, "fired")
    this.dueTimes.arm(this.table.get(id)!)
  }

  private async end(trigger: TriggerRecord, reason: string): Promise<void> {
    await this.table.save({ ...trigger, status: "ended", endReason: reason, nextRunAt: undefined, cooldownUntil: undefined })
    this.dueTimes.disarm(trigger.id)
    await this.firings.tell(trigger, `The schedule ${trigger.id} (“${trigger.prompt.slice(0, 80)}”) ended: ${reason}.`)
  }

  /** Writes a trigger's new record (made by `make` from the current one), then waits anew. */
  private change(id: string, conversation: string | undefined, make: (trigger: TriggerRecord) => TriggerRecord | string): Promise<TriggerRecord | string> {
    return this.chain.run(async () => {
      const trigger = this.table.get(id)
      if (!trigger || (conversation !== undefined && trigger.conversation !== conversation)) return `no schedule ${id} here`
      const changed = make(trigger)
      if (typeof changed === "string") return changed
      await this.table.save(changed)
      this.dueTimes.disarm(id)
      this.dueTimes.arm(changed)
      this.log.info({ trigger: id, status: changed.status, nextRunAt: changed.nextRunAt }, "trigger changed")
      return changed
    })
  }

  /** Work a timer started: nobody awaits it, so its failure is logged. */
  private background(op: () => Promise<void>): void {
    this.chain.run(() => (this.stopped ? Promise.resolve() : op())).catch((error) => this.log.error({ err: error }, "scheduler work failed"))
  }
}
