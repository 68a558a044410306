import type { FiringRecord, TriggerRecord } from "../core/types.ts"
import type { Cadence } from "./cadence.ts"
import { timerAt } from "./timer.ts"
import { cadenceFor } from "./trigger-changes.ts"
import type { TriggerTable } from "./trigger-table.ts"
import type { ConditionWaits } from "./waits.ts"

/** A due time reached later than this (a blocked event loop, a sleeping machine) was missed. */
const ON_TIME_MS = 60_000

export interface DueTimesDeps {
  table: TriggerTable
  waits: ConditionWaits
  /** A recurring or scheduled trigger reached `slot`, a due time at or after its nextRunAt;
   *  `afterDowntime`: found at start-up. */
  onDue: (id: string, slot: Date, afterDowntime: boolean) => Promise<void>
  /** A conditional trigger's condition was decided at `at`. */
  onDecided: (id: string, result: "holds" | "never", at: Date) => Promise<void>
  /** Runs work a timer or a watch started on the scheduler's chain; nobody awaits it. */
  background: (op: () => Promise<void>) => void
}

/**
 * Who makes a trigger due: recurring and one-shot triggers wait for their persisted due time with
 * a timer, computed by their cadence (cron.ts reads a cron expression, time zones and DST
 * included; see intervalCadence for why an interval is not turned into a cron expression);
 * conditional triggers wait for their condition (after their cooldown) in ConditionWaits.
 */
export class DueTimes {
  private cadences = new Map<string, Cadence>()
  /** Cancels what a trigger waits on: its timer or cooldown. */
  private stops = new Map<string, () => void>()

  constructor(private readonly deps: DueTimesDeps) {}

  /** Makes an active trigger wait for its next due time or condition; stops an ended one. */
  arm(trigger: TriggerRecord): void {
    if (trigger.status !== "active") return this.disarm(trigger.id)
    this.stops.get(trigger.id)?.()
    this.stops.delete(trigger.id)
    if (trigger.kind === "conditional") {
      const listen = () => this.listen(trigger.id)
      if (trigger.cooldownUntil && Date.parse(trigger.cooldownUntil) > Date.now()) this.stops.set(trigger.id, timerAt(new Date(trigger.cooldownUntil), listen))
      else listen()
      return
    }
    this.stops.set(trigger.id, timerAt(new Date(trigger.nextRunAt!), () => this.deps.background(() => this.timerDue(trigger.id))))
  }

  disarm(id: string): void {
    this.stops.get(id)?.()
    this.stops.delete(id)
    this.cadences.delete(id)
    this.deps.waits.unwatchTrigger(id)
  }

  disarmAll(): void {
    for (const id of [...this.stops.keys()]) this.disarm(id)
  }

  /** The trigger's first due time after now; none when it will not be due again. */
  nextAfterNow(trigger: TriggerRecord): Date | undefined {
    return this.cadenceOf(trigger).nextAfterNow()
  }

  /** An active trigger at start-up: a due time that passed while Steward was down is handled
   *  as missed — once, for the latest due time within maxLateness — then the next one armed. */
  async catchUp(trigger: TriggerRecord): Promise<void> {
    const now = Date.now()
    if (trigger.kind !== "conditional" && trigger.nextRunAt && Date.parse(trigger.nextRunAt) <= now) {
      const from = new Date(Math.max(Date.parse(trigger.nextRunAt), now - trigger.maxLateness * 1000))
      const slot = this.cadenceOf(trigger).latest(from, new Date(now)) ?? new Date(trigger.nextRunAt)
      await this.deps.onDue(trigger.id, slot, true)
    }
    this.arm(this.deps.table.get(trigger.id)!)
  }

  private async timerDue(id: string): Promise<void> {
    const trigger = this.deps.table.get(id)
    if (!trigger?.nextRunAt || trigger.status !== "active") return
    // The latest due time reached: a timer that fired late (a sleeping machine) catches up once.
    const slot = this.cadenceOf(trigger).latest(new Date(trigger.nextRunAt), new Date())
    if (slot) await this.deps.onDue(id, slot, false)
    else this.arm(trigger) // woke early: the clock was set back
  }

  private listen(id: string): void {
    const trigger = this.deps.table.get(id)
    if (trigger?.status !== "active") return
    this.deps.waits.watchTrigger(id, {
      condition: trigger.condition!,
      since: trigger.since!,
      onResult: (result) => {
        const at = new Date()
        this.deps.background(() => this.deps.onDecided(id, result, at))
      },
    })
  }

  /** Where a new schedule kind is chosen (the interface in cadence.ts). */
  private cadenceOf(trigger: TriggerRecord): Cadence {
    let cadence = this.cadences.get(trigger.id)
    if (!cadence) {
      cadence = cadenceFor(trigger)
      this.cadences.set(trigger.id, cadence)
    }
    return cadence
  }
}

/** How a due time reached `late` ms after it is handled: on time it fires; missed, it runs once
 *  when the trigger says so and it is within maxLateness, or is skipped. */
export function dueOutcome(trigger: TriggerRecord, late: number, afterDowntime: boolean): FiringRecord["outcome"] {
  if (!afterDowntime && late <= ON_TIME_MS) return "fired"
  return trigger.onMissed === "run-once" && late <= trigger.maxLateness * 1000 ? "missed_run" : "missed_skipped"
}
