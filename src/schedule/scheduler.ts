import type { Logger } from "pino"
import { TERMINAL, type Condition, type FiringRecord, type TaskStatus, type TriggerRecord } from "../core/types.ts"
import { newId, type Store } from "../store/store.ts"
import { cronCadence, intervalCadence, onceCadence, type Cadence } from "./cadence.ts"
import { parseCron, type CronSchedule } from "./cron.ts"
import { evaluateCondition, taskIdsOf, type ConditionFacts } from "./condition.ts"
import { RaisedEvents } from "./events.ts"
import { runAtProblem, ScheduleRequest } from "./request.ts"
import { ToolError } from "../tool/tool.ts"
import { timerAt } from "./timer.ts"
import { ConditionWatch } from "./watch.ts"

/** What the scheduler asks of the runtime (the Supervisor). */
export interface SchedulerHost {
  /** Creates and queues (durably) the Worker task of a firing, with the trigger's prompt and
   *  timeout; returns its id. Called again for the same firing after a crash, so it must be
   *  idempotent by firing id (e.g. origin `firing:<id>`). Must not wait for a Scheduler call. */
  startRun(trigger: TriggerRecord, firing: FiringRecord): Promise<string>
  taskStatus(taskId: string): TaskStatus | undefined
  /** Something the trigger's owner must hear that no run will report: a missed due time that
   *  was skipped, a run that could not be started, a trigger whose condition can no longer
   *  hold. Called once it is recorded; must not wait for a Scheduler call either. */
  notify(trigger: TriggerRecord, text: string): Promise<void>
}

export interface SchedulerDeps {
  store: Store
  host: SchedulerHost
  log: Logger
  /** A firing reached a new status (the metrics). */
  onFiring?: (status: FiringRecord["status"]) => void
  /** How often to look for events raised by another process (the CLI). Default 1000 ms. */
  pollMs?: number
}

/** A trigger as list_tasks shows it. */
export interface TriggerSummary {
  id: string
  kind: TriggerRecord["kind"]
  prompt: string
  nextRunAt?: string
  lastOutcome?: string
  status: TriggerRecord["status"]
  createdAt: string
}

/** Where a trigger is created: its conversation, its user and the call that creates it. */
export interface TriggerOrigin {
  conversation: string
  user: string
  origin: string
}

/** A due time reached later than this (a blocked event loop, a sleeping machine) was missed. */
const ON_TIME_MS = 60_000
const DEFAULT_MAX_LATENESS_S = 3600

/**
 * The schedule engine: recurring, scheduled and conditional triggers, and condition waits.
 *
 * Who makes a trigger due: recurring and one-shot triggers wait for their persisted due time with
 * a timer, computed by their cadence (cron.ts reads a cron expression, time zones and DST
 * included; see intervalCadence for why an interval is not turned into a cron expression);
 * conditional triggers are watched by
 * ConditionWatch. Every change is written before it is acted on — the firing before its run is
 * started, the next due time with the firing — and all of them run one at a time through one
 * chain, so a timer, a task's end and a cancel never interleave on a trigger.
 */
export class Scheduler {
  private readonly store: Store
  private readonly host: SchedulerHost
  private readonly log: Logger
  private readonly pollMs: number
  private triggers = new Map<string, TriggerRecord>()
  private byOrigin = new Map<string, string>()
  /** Statuses of ended tasks the host no longer holds in memory that a condition names: read
   *  from the store when the condition is first watched. */
  private endedTasks = new Map<string, TaskStatus>()
  /** Waits whose tasks are being looked up; unwait before the lookup ends drops the wait. */
  private pendingWaits = new Map<string, object>()
  private cadences = new Map<string, Cadence>()
  /** Cancels what a trigger waits on: its timer or cooldown. */
  private stops = new Map<string, () => void>()
  private events: RaisedEvents
  private watch: ConditionWatch
  private chain: Promise<unknown> = Promise.resolve()
  private stopPolling?: () => void
  private stopped = false
  private readonly onFiring: SchedulerDeps["onFiring"]

  constructor(deps: SchedulerDeps) {
    this.store = deps.store
    this.host = deps.host
    this.log = deps.log
    this.pollMs = deps.pollMs ?? 1000
    this.onFiring = deps.onFiring
    this.events = new RaisedEvents(deps.store)
    this.watch = new ConditionWatch(() => this.facts())
  }

  // ── life cycle ──────────────────────────────────────────────────────────────

  /** Loads the triggers and re-arms them. Call it once the host knows its tasks (taskStatus). */
  async start(): Promise<void> {
    await this.events.load()
    for (const trigger of await this.store.liveTriggers()) {
      this.track(trigger)
      if (trigger.condition) await this.learn(trigger.condition)
    }
    await this.serial(async () => {
      for (const trigger of [...this.triggers.values()]) await this.resumeRun(trigger)
      for (const trigger of [...this.triggers.values()]) {
        if (trigger.status !== "active") continue
        // One trigger that cannot be re-armed (say, a cron expression a newer reading rejects)
        // must not keep the others from starting.
        await this.resume(trigger).catch((error) => this.end(this.triggers.get(trigger.id)!, `it could not be re-armed: ${errorText(error)}`))
      }
    })
    this.startPolling()
  }

  async stop(): Promise<void> {
    this.stopped = true
    this.stopPolling?.()
    for (const id of [...this.stops.keys()]) this.disarm(id)
    this.watch.stop()
    await this.settled()
  }

  /** Resolves once no scheduler work is under way (for tests and shutdown). */
  async settled(): Promise<void> {
    let seen: Promise<unknown>
    do {
      seen = this.chain
      await seen
    } while (seen !== this.chain)
  }

  // ── the tool's side ─────────────────────────────────────────────────────────

  /** Creates a trigger; a call replayed after a crash (same origin) gets the same trigger. */
  async create(request: ScheduleRequest, where: TriggerOrigin): Promise<{ taskId: string }> {
    const valid = ScheduleRequest.parse(request)
    return this.serial(async () => {
      const known = this.byOrigin.get(where.origin) ?? (await this.store.triggerByOrigin(where.origin))?.id
      if (known) return { taskId: known }
      const late = valid.runAt === undefined ? undefined : runAtProblem(valid.runAt)
      if (late) throw new ToolError(late)
      const now = new Date().toISOString()
      const trigger: TriggerRecord = {
        id: newId(),
        conversation: where.conversation,
        user: where.user,
        kind: valid.type,
        prompt: valid.prompt,
        interval: valid.interval,
        cron: valid.cron,
        timezone: valid.timezone,
        runAt: valid.runAt,
        condition: valid.condition,
        since: valid.type === "conditional" ? now : undefined,
        cooldown: valid.cooldown ?? 0,
        timeout: valid.timeout ?? null,
        onMissed: valid.onMissed ?? "run-once",
        maxLateness: valid.maxLateness ?? DEFAULT_MAX_LATENESS_S,
        target: valid.target,
        status: "active",
        createdAt: now,
        origin: where.origin,
      }
      try {
        if (trigger.kind !== "conditional") trigger.nextRunAt = this.cadenceOf(trigger).nextAfterNow()?.toISOString()
        else await this.learn(trigger.condition!)
        await this.save(trigger)
      } catch (error) {
        this.disarm(trigger.id)
        throw error
      }
      this.arm(trigger)
      this.log.info({ trigger: trigger.id, kind: trigger.kind, nextRunAt: trigger.nextRunAt }, "trigger created")
      return { taskId: trigger.id }
    })
  }

  /** Removes an active trigger (of `conversation`, when given). A run under way is not touched. */
  cancel(id: string, conversation?: string): Promise<boolean> {
    return this.serial(async () => {
      const trigger = this.triggers.get(id)
      if (!trigger || trigger.status !== "active" || (conversation !== undefined && trigger.conversation !== conversation)) return false
      await this.save({ ...trigger, status: "cancelled", nextRunAt: undefined, cooldownUntil: undefined })
      this.disarm(id)
      return true
    })
  }

  /** The conversation's active triggers, oldest first. A conditional trigger's next run is
   *  unknown, except that it is not before the end of its cooldown. */
  list(conversation: string): TriggerSummary[] {
    const now = Date.now()
    return [...this.triggers.values()]
      .filter((trigger) => trigger.conversation === conversation && trigger.status === "active")
      .map((trigger) => ({
        id: trigger.id,
        kind: trigger.kind,
        prompt: trigger.prompt.slice(0, 100),
        nextRunAt: trigger.nextRunAt ?? (trigger.cooldownUntil && Date.parse(trigger.cooldownUntil) > now ? trigger.cooldownUntil : undefined),
        lastOutcome: trigger.lastOutcome,
        status: trigger.status,
        createdAt: trigger.createdAt,
      }))
  }

  /** The conversation that created a trigger: where its problems are told. */
  async owner(id: string): Promise<string | undefined> {
    return (this.triggers.get(id) ?? (await this.store.trigger(id)))?.conversation
  }

  /** A task's status as conditions see it: the host's, or an ended task's from the store. */
  taskStatus(taskId: string): TaskStatus | undefined {
    return this.host.taskStatus(taskId) ?? this.endedTasks.get(taskId)
  }

  // ── what the host reports ───────────────────────────────────────────────────

  /** Records an event (`POST /hooks/<name>`) and re-evaluates the conditions. */
  async raise(name: string): Promise<void> {
    await this.events.raise(name)
    this.watch.check()
  }

  /** Takes events another process (the CLI) wrote to the store since the last look. */
  async pollRaised(): Promise<void> {
    if (await this.events.poll()) this.watch.check()
  }

  /** The host calls this whenever any task ends: a trigger's run, or a task a condition names. */
  async taskEnded(taskId: string, status: TaskStatus): Promise<void> {
    // Queued before the conditions are re-evaluated, so a trigger they fire sees its run ended.
    const recorded = this.serial(async () => {
      const trigger = [...this.triggers.values()].find((t) => t.runningTaskId === taskId)
      if (trigger) await this.runEnded(trigger, status)
    })
    this.watch.check()
    await recorded
  }

  /** The firing's report was posted; `messageId` is the platform's id. */
  delivered(firingId: string, messageId: string): Promise<void> {
    return this.updateFiring(firingId, (firing) => ({ ...firing, status: firing.status === "failed" ? "failed" : "delivered", messageId }))
  }

  /** The firing's report could not be posted (the host tells the owner's conversation). */
  deliveryFailed(firingId: string, error: string): Promise<void> {
    return this.updateFiring(firingId, (firing) => ({ ...firing, status: "failed", error }))
  }

  /** Waits for a condition on the host's behalf (a conditional delegate task, which the host
   *  persists and waits for again after a restart — after start(), which loads the events).
   *  `onResult` is called once, maybe before wait returns; `id` replaces an earlier wait. */
  wait(id: string, condition: Condition, since: string, onResult: (result: "holds" | "never") => void): void {
    const key = `wait:${id}`
    const watch = () => this.watch.add(key, { condition, since, onResult })
    if (taskIdsOf(condition).every((taskId) => this.taskStatus(taskId) !== undefined)) return watch()
    // A task the host does not hold may have ended long ago: its status is read first.
    const token = {}
    this.pendingWaits.set(key, token)
    this.learn(condition)
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

  // ── firing ──────────────────────────────────────────────────────────────────

  /** A recurring or scheduled trigger reached `slot`, a due time at or after its nextRunAt.
   *  `afterDowntime`: found at start-up, so it was missed however recent it is. */
  private async due(id: string, slot: Date, afterDowntime: boolean): Promise<void> {
    const trigger = this.triggers.get(id)
    // A slot before nextRunAt was handled already (a replay).
    if (!trigger || trigger.status !== "active" || !trigger.nextRunAt || slot.getTime() < Date.parse(trigger.nextRunAt)) return
    const late = Date.now() - slot.getTime()
    const outcome: FiringRecord["outcome"] =
      !afterDowntime && late <= ON_TIME_MS ? "fired" : trigger.onMissed === "run-once" && late <= trigger.maxLateness * 1000 ? "missed_run" : "missed_skipped"
    const missedFrom = Date.parse(trigger.nextRunAt) < slot.getTime() ? trigger.nextRunAt : undefined
    const next = this.cadenceOf(trigger).nextAfterNow()
    const firing = await this.fire({ ...trigger, nextRunAt: next?.toISOString(), status: next ? "active" : "ended" }, slot, outcome, missedFrom)
    this.arm(this.triggers.get(id)!)
    if (firing.outcome === "missed_skipped") {
      const since = firing.missedFrom ? ` (and every due time since ${firing.missedFrom})` : ""
      await this.tell(
        trigger,
        `The schedule ${trigger.id} (“${trigger.prompt.slice(0, 80)}”) was due at ${firing.scheduledFor}${since} while Steward was not running (or asleep). That run was skipped: too late to catch up (onMissed ${trigger.onMissed}, maxLateness ${trigger.maxLateness} s).`,
      )
    }
  }

  /** A conditional trigger's condition was decided at `at`. */
  private async conditionDecided(id: string, result: "holds" | "never", at: Date): Promise<void> {
    const trigger = this.triggers.get(id)
    if (!trigger || trigger.status !== "active") return
    if (result === "never") return this.end(trigger, "its condition can no longer hold")
    // Events raised up to `at` are this firing's; the next firing needs a later one.
    const since = new Date(at.getTime() + 1).toISOString()
    // A trigger fires when its condition *becomes* true. One that holds without any event (a
    // task that completed, a time that passed) cannot become true again: this firing is its last.
    const last = evaluateCondition(trigger.condition!, { ...this.facts(), raisedSince: () => false }, since) === "holds"
    const cooldownUntil = trigger.cooldown > 0 && !last ? new Date(Date.now() + trigger.cooldown * 1000).toISOString() : undefined
    await this.fire({ ...trigger, since, cooldownUntil, status: last ? "ended" : "active", endReason: last ? "its condition stays true" : undefined }, at, "fired")
    this.arm(this.triggers.get(id)!)
  }

  /**
   * Records a firing together with the trigger's new state, then starts its run. A firing that
   * would run while the trigger's previous run is still under way is skipped (overlap).
   */
  private async fire(trigger: TriggerRecord, scheduledFor: Date, outcome: FiringRecord["outcome"], missedFrom?: string): Promise<FiringRecord> {
    const runs = (outcome === "fired" || outcome === "missed_run") && trigger.runningFiringId === undefined
    const firing: FiringRecord = {
      id: `${trigger.id}/${newId()}`,
      triggerId: trigger.id,
      scheduledFor: scheduledFor.toISOString(),
      at: new Date().toISOString(),
      outcome: outcome === "missed_skipped" || runs ? outcome : "skipped_overlap",
      missedFrom,
      status: runs ? "fired" : "skipped",
    }
    const update: TriggerRecord = { ...trigger, lastFiringId: firing.id, lastOutcome: firing.outcome }
    if (runs) Object.assign(update, { lastFiredAt: firing.at, runningFiringId: firing.id, runningTaskId: undefined })
    await this.save(update, firing)
    this.onFiring?.(firing.status)
    this.log.info({ trigger: trigger.id, firing: firing.id, outcome: firing.outcome, scheduledFor: firing.scheduledFor }, "trigger due")
    if (runs) await this.startRun(update, firing)
    return firing
  }

  private async startRun(trigger: TriggerRecord, firing: FiringRecord): Promise<void> {
    let taskId: string
    try {
      taskId = await this.host.startRun(trigger, firing)
    } catch (error) {
      const reason = `its run could not be started: ${errorText(error)}`
      this.log.error({ err: error, trigger: trigger.id, firing: firing.id }, "could not start a trigger's run")
      await this.runEnded(trigger, "failed", reason, "told")
      return this.tell(trigger, `The schedule ${trigger.id} (“${trigger.prompt.slice(0, 80)}”) was due, but ${reason}.`)
    }
    await this.save({ ...this.triggers.get(trigger.id)!, runningTaskId: taskId }, { ...firing, taskId })
  }

  /**
   * The trigger's run ended (or could not start): its firing is "ran" or "failed", and the
   * trigger may fire again. A failure reaches the owner one way or another: `reported` — its
   * task's report goes to the report conversation, and the owner is told besides when that is
   * another one; `lost` — no report will come, so the owner is told; `told` — the caller did.
   */
  private async runEnded(trigger: TriggerRecord, status: TaskStatus, error?: string, failure: "reported" | "lost" | "told" = "reported"): Promise<void> {
    const firing = await this.store.firing(trigger.runningFiringId!)
    const ok = status === "completed"
    const reason = error ?? `the run ended ${status}`
    const ended: FiringRecord | undefined = firing && { ...firing, status: ok ? "ran" : "failed", error: ok ? undefined : reason }
    await this.save({ ...trigger, runningFiringId: undefined, runningTaskId: undefined, lastOutcome: ended?.status ?? trigger.lastOutcome }, ended)
    if (ended) this.onFiring?.(ended.status)
    if (ok || failure === "told") return
    const elsewhere = trigger.target !== undefined && trigger.target !== trigger.conversation
    if (failure === "reported" && !elsewhere) return
    const where = failure === "reported" ? ` Its report went to ${trigger.target}.` : ""
    await this.tell(trigger, `A run of the schedule ${trigger.id} (“${trigger.prompt.slice(0, 80)}”) failed: ${reason}.${where}`)
  }

  private updateFiring(firingId: string, change: (firing: FiringRecord) => FiringRecord): Promise<void> {
    return this.serial(async () => {
      const firing = await this.store.firing(firingId)
      if (!firing) return void this.log.warn({ firing: firingId }, "report of an unknown firing")
      const update = change(firing)
      const trigger = this.triggers.get(firing.triggerId) ?? (await this.store.trigger(firing.triggerId))
      await this.save(trigger && { ...trigger, lastOutcome: update.status }, update)
      if (update.status !== firing.status) this.onFiring?.(update.status)
    })
  }

  private async end(trigger: TriggerRecord, reason: string): Promise<void> {
    await this.save({ ...trigger, status: "ended", endReason: reason, nextRunAt: undefined, cooldownUntil: undefined })
    this.disarm(trigger.id)
    await this.tell(trigger, `The schedule ${trigger.id} (“${trigger.prompt.slice(0, 80)}”) ended: ${reason}.`)
  }

  private async tell(trigger: TriggerRecord, text: string): Promise<void> {
    await this.host.notify(trigger, text).catch((error) => this.log.error({ err: error, trigger: trigger.id }, "could not tell a trigger's owner"))
  }

  // ── start-up ────────────────────────────────────────────────────────────────

  /** A run that was under way at the last stop: started again if it was recorded but its task
   *  may not exist yet (the host's startRun is idempotent), ended if its task ended meanwhile. */
  private async resumeRun(trigger: TriggerRecord): Promise<void> {
    if (!trigger.runningFiringId) return
    if (!trigger.runningTaskId) {
      const firing = await this.store.firing(trigger.runningFiringId)
      if (firing) return this.startRun(trigger, firing)
      return this.runEnded(trigger, "failed", "its firing record was lost", "lost")
    }
    const status = this.host.taskStatus(trigger.runningTaskId)
    if (status === undefined) await this.runEnded(trigger, "failed", "its task was lost", "lost")
    else if (TERMINAL.has(status)) await this.runEnded(trigger, status)
  }

  /** An active trigger at start-up: a due time that passed while Steward was down is handled
   *  as missed — once, for the latest due time within maxLateness — then the next one armed. */
  private async resume(trigger: TriggerRecord): Promise<void> {
    const now = Date.now()
    if (trigger.kind !== "conditional" && trigger.nextRunAt && Date.parse(trigger.nextRunAt) <= now) {
      const from = new Date(Math.max(Date.parse(trigger.nextRunAt), now - trigger.maxLateness * 1000))
      const slot = this.cadenceOf(trigger).latest(from, new Date(now)) ?? new Date(trigger.nextRunAt)
      await this.due(trigger.id, slot, true)
    }
    this.arm(this.triggers.get(trigger.id)!)
  }

  // ── waiting ─────────────────────────────────────────────────────────────────

  /** Makes an active trigger wait for its next due time or condition; stops an ended one. */
  private arm(trigger: TriggerRecord): void {
    if (trigger.status !== "active") return this.disarm(trigger.id)
    this.stops.get(trigger.id)?.()
    this.stops.delete(trigger.id)
    if (trigger.kind === "conditional") {
      const listen = () => this.listen(trigger.id)
      if (trigger.cooldownUntil && Date.parse(trigger.cooldownUntil) > Date.now()) this.stops.set(trigger.id, timerAt(new Date(trigger.cooldownUntil), listen))
      else listen()
      return
    }
    this.stops.set(trigger.id, timerAt(new Date(trigger.nextRunAt!), () => this.background(() => this.timerDue(trigger.id))))
  }

  private async timerDue(id: string): Promise<void> {
    const trigger = this.triggers.get(id)
    if (!trigger?.nextRunAt || trigger.status !== "active") return
    // The latest due time reached: a timer that fired late (a sleeping machine) catches up once.
    const slot = this.cadenceOf(trigger).latest(new Date(trigger.nextRunAt), new Date())
    if (slot) await this.due(id, slot, false)
    else this.arm(trigger) // woke early: the clock was set back
  }

  private listen(id: string): void {
    const trigger = this.triggers.get(id)
    if (trigger?.status !== "active") return
    this.watch.add(`trigger:${id}`, {
      condition: trigger.condition!,
      since: trigger.since!,
      onResult: (result) => {
        const at = new Date()
        this.background(() => this.conditionDecided(id, result, at))
      },
    })
  }

  private disarm(id: string): void {
    this.stops.get(id)?.()
    this.stops.delete(id)
    this.cadences.delete(id)
    this.watch.remove(`trigger:${id}`)
  }

  private cadenceOf(trigger: TriggerRecord): Cadence {
    let cadence = this.cadences.get(trigger.id)
    if (!cadence) {
      if (trigger.cron) cadence = cronCadence(cronScheduleOf(trigger))
      else if (trigger.interval) cadence = intervalCadence(new Date(trigger.createdAt), trigger.interval)
      else cadence = onceCadence(new Date(trigger.runAt!))
      this.cadences.set(trigger.id, cadence)
    }
    return cadence
  }

  private startPolling(): void {
    let polling = false
    const handle = setInterval(() => {
      if (polling) return
      polling = true
      this.pollRaised()
        .catch((error) => this.log.error({ err: error }, "could not read raised events"))
        .finally(() => (polling = false))
    }, this.pollMs)
    this.stopPolling = () => clearInterval(handle)
  }

  // ── plumbing ────────────────────────────────────────────────────────────────

  private facts(): ConditionFacts {
    return {
      taskStatus: (taskId) => this.taskStatus(taskId),
      now: new Date(),
      raisedSince: (name, since) => this.events.raisedSince(name, since),
    }
  }

  private async save(trigger?: TriggerRecord, firing?: FiringRecord): Promise<void> {
    await this.store.save({ triggers: trigger ? [trigger] : [], firings: firing ? [firing] : [] })
    if (trigger) this.track(trigger)
  }

  /** Reads the status of each ended task a condition names that the host does not hold. */
  private async learn(condition: Condition): Promise<void> {
    for (const taskId of taskIdsOf(condition)) {
      if (this.taskStatus(taskId) !== undefined) continue
      const task = await this.store.task(taskId)
      if (task && TERMINAL.has(task.status)) this.endedTasks.set(taskId, task.status)
    }
  }

  private track(trigger: TriggerRecord): void {
    this.triggers.set(trigger.id, trigger)
    this.byOrigin.set(trigger.origin, trigger.id)
  }

  private serial<T>(op: () => Promise<T>): Promise<T> {
    const next = this.chain.then(op)
    this.chain = next.catch(() => {})
    return next
  }

  /** Work a timer started: nobody awaits it, so its failure is logged. */
  private background(op: () => Promise<void>): void {
    this.serial(() => (this.stopped ? Promise.resolve() : op())).catch((error) => this.log.error({ err: error }, "scheduler work failed"))
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** A stored trigger's cron expression, read again (it was checked when the trigger was made). */
function cronScheduleOf(trigger: TriggerRecord): CronSchedule {
  const read = parseCron(trigger.cron!, trigger.timezone)
  if ("error" in read) throw new Error(read.error)
  return read.schedule
}
