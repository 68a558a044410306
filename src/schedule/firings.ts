import type { Logger } from "pino"
import { TERMINAL, type FiringRecord, type TaskStatus, type TriggerRecord } from "../core/types.ts"
import { newId } from "../store/ids.ts"
import type { Store } from "../store/store.ts"
import type { SchedulerHost } from "./host.ts"
import { internalError } from "../core/errors.ts"
import type { TriggerTable } from "./trigger-table.ts"

export interface FiringsDeps {
  store: Store
  table: TriggerTable
  host: SchedulerHost
  log: Logger
  /** A firing reached a new status (the metrics). */
  onFiring?: (status: FiringRecord["status"]) => void
}

/**
 * A trigger's firings and their runs: each firing is recorded together with the trigger's new
 * state before its run is started, and the run's end (or its report's delivery) is recorded on
 * it. What no run will report reaches the trigger's owner through the host.
 */
export class Firings {
  private readonly store: Store
  private readonly table: TriggerTable
  private readonly host: SchedulerHost
  private readonly log: Logger
  private readonly onFiring: FiringsDeps["onFiring"]

  constructor(deps: FiringsDeps) {
    this.store = deps.store
    this.table = deps.table
    this.host = deps.host
    this.log = deps.log
    this.onFiring = deps.onFiring
  }

  /**
   * Records a firing together with the trigger's new state, then starts its run. A firing that
   * would run while the trigger's previous run is still under way is skipped (overlap).
   */
  async fire(trigger: TriggerRecord, scheduledFor: Date, outcome: FiringRecord["outcome"], missedFrom?: string): Promise<FiringRecord> {
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
    await this.table.save(update, firing)
    this.onFiring?.(firing.status)
    this.log.info({ trigger: trigger.id, firing: firing.id, outcome: firing.outcome, scheduledFor: firing.scheduledFor }, "trigger due")
    if (runs) await this.startRun(update, firing)
    return firing
  }

  /**
   * The trigger's run ended (or could not start): its firing is "ran" or "failed", and the
   * trigger may fire again. A failure reaches the owner one way or another: `reported` — its
   * task's report goes to the report conversation, and the owner is told besides when that is
   * another one; `lost` — no report will come, so the owner is told; `told` — the caller did.
   */
  async runEnded(trigger: TriggerRecord, status: TaskStatus, error?: string, failure: "reported" | "lost" | "told" = "reported"): Promise<void> {
    const firing = await this.store.schedules.firing(trigger.runningFiringId!)
    const ok = status === "completed"
    const reason = error ?? `the run ended ${status}`
    // A report already delivered stays so: after a leader's death its successor may record the
    // delivery (the woken Teller's answer) before it has followed the run to its end.
    const ended: FiringRecord | undefined = firing && (firing.status === "delivered" ? firing : { ...firing, status: ok ? "ran" : "failed", error: ok ? undefined : reason })
    await this.table.save({ ...trigger, runningFiringId: undefined, runningTaskId: undefined, lastOutcome: ended?.status ?? trigger.lastOutcome }, ended)
    // Each status a firing reaches is counted once: a delivery recorded first was counted then.
    if (ended && ended !== firing) this.onFiring?.(ended.status)
    if (ok || failure === "told") return
    const elsewhere = trigger.target !== undefined && trigger.target !== trigger.conversation
    if (failure === "reported" && !elsewhere) return
    const where = failure === "reported" ? ` Its report went to ${trigger.target}.` : ""
    await this.tell(trigger, `A run of the schedule ${trigger.id} (“${trigger.prompt.slice(0, 80)}”) failed: ${reason}.${where}`)
  }

  /** Records a change to a firing (its report's delivery) and the trigger's last outcome. */
  async update(firingId: string, change: (firing: FiringRecord) => FiringRecord): Promise<void> {
    const firing = await this.store.schedules.firing(firingId)
    if (!firing) return void this.log.warn({ firing: firingId }, "report of an unknown firing")
    const update = change(firing)
    const trigger = await this.table.find(firing.triggerId)
    await this.table.save(trigger && { ...trigger, lastOutcome: update.nothingToReport ? "ran, nothing to report" : update.status }, update)
    if (update.status !== firing.status) this.onFiring?.(update.status)
  }

  /** A run that was under way at the last stop: started again if it was recorded but its task
   *  may not exist yet (the host's startRun is idempotent), ended if its task ended meanwhile. */
  async resumeRun(trigger: TriggerRecord): Promise<void> {
    if (!trigger.runningFiringId) return
    if (!trigger.runningTaskId) {
      const firing = await this.store.schedules.firing(trigger.runningFiringId)
      if (firing) return this.startRun(trigger, firing)
      return this.runEnded(trigger, "failed", "its firing record was lost", "lost")
    }
    const status = this.host.taskStatus(trigger.runningTaskId)
    if (status === undefined) await this.runEnded(trigger, "failed", "its task was lost", "lost")
    else if (TERMINAL.has(status)) await this.runEnded(trigger, status)
  }

  /** Tells the owner that a missed due time was skipped. */
  tellSkipped(trigger: TriggerRecord, firing: FiringRecord): Promise<void> {
    const since = firing.missedFrom ? ` (and every due time since ${firing.missedFrom})` : ""
    return this.tell(
      trigger,
      `The schedule ${trigger.id} (“${trigger.prompt.slice(0, 80)}”) was due at ${firing.scheduledFor}${since} while Steward was not running (or asleep). That run was skipped: too late to catch up (onMissed ${trigger.onMissed}, maxLateness ${trigger.maxLateness} s).`,
    )
  }

  async tell(trigger: TriggerRecord, text: string): Promise<void> {
    await this.host.notify(trigger, text).catch((error) => this.log.error({ err: error, trigger: trigger.id }, "could not tell a trigger's owner"))
  }

  private async startRun(trigger: TriggerRecord, firing: FiringRecord): Promise<void> {
    let taskId: string
    try {
      taskId = await this.host.startRun(trigger, firing)
    } catch (error) {
      const reason = `its run could not be started: ${internalError(this.log, error, "could not start a trigger's run", { trigger: trigger.id, firing: firing.id })}`
      await this.runEnded(trigger, "failed", reason, "told")
      return this.tell(trigger, `The schedule ${trigger.id} (“${trigger.prompt.slice(0, 80)}”) was due, but ${reason}.`)
    }
    await this.table.save({ ...this.table.get(trigger.id)!, runningTaskId: taskId }, { ...firing, taskId })
  }
}
