import type { FiringRecord, TriggerRecord } from "../core/types.ts"
import type { Store } from "../store/store.ts"

/** A trigger as list_tasks shows it. */
export interface TriggerSummary {
  id: string
  kind: TriggerRecord["kind"]
  prompt: string
  /** Who created it: whose it is to cancel, pause or resume in a shared conversation. */
  user: TriggerRecord["user"]
  nextRunAt?: string
  lastOutcome?: string
  status: TriggerRecord["status"]
  createdAt: string
}

/**
 * The live triggers in memory, kept equal to the store: every change goes through `save`, which
 * writes the trigger (and a firing with it, in one batch) before memory takes it.
 */
export class TriggerTable {
  private triggers = new Map<string, TriggerRecord>()
  private byOrigin = new Map<string, string>()

  constructor(private readonly store: Store) {}

  /** Reads the live triggers at start-up. */
  async load(): Promise<TriggerRecord[]> {
    const live = await this.store.schedules.liveTriggers()
    for (const trigger of live) this.track(trigger)
    return live
  }

  get(id: string): TriggerRecord | undefined {
    return this.triggers.get(id)
  }

  all(): TriggerRecord[] {
    return [...this.triggers.values()]
  }

  /** A live trigger, or an ended one from the store. */
  async find(id: string): Promise<TriggerRecord | undefined> {
    return this.triggers.get(id) ?? (await this.store.schedules.trigger(id))
  }

  /** The trigger a call created, if it did (a replay after a crash asks again). */
  async idOfOrigin(origin: string): Promise<string | undefined> {
    return this.byOrigin.get(origin) ?? (await this.store.schedules.triggerByOrigin(origin))?.id
  }

  /** The trigger whose run is this task. */
  runningTask(taskId: string): TriggerRecord | undefined {
    return this.all().find((trigger) => trigger.runningTaskId === taskId)
  }

  async save(trigger?: TriggerRecord, firing?: FiringRecord): Promise<void> {
    await this.store.save({ triggers: trigger ? [trigger] : [], firings: firing ? [firing] : [] })
    if (trigger) this.track(trigger)
  }

  /** The conversation's active triggers, oldest first. A conditional trigger's next run is
   *  unknown, except that it is not before the end of its cooldown. */
  list(conversation: string): TriggerSummary[] {
    const now = Date.now()
    return this.all()
      .filter((trigger) => trigger.conversation === conversation && (trigger.status === "active" || trigger.status === "paused"))
      .map((trigger) => ({
        id: trigger.id,
        kind: trigger.kind,
        prompt: trigger.prompt.slice(0, 100),
        user: trigger.user,
        nextRunAt: trigger.nextRunAt ?? (trigger.cooldownUntil && Date.parse(trigger.cooldownUntil) > now ? trigger.cooldownUntil : undefined),
        lastOutcome: trigger.lastOutcome,
        status: trigger.status,
        createdAt: trigger.createdAt,
      }))
  }

  private track(trigger: TriggerRecord): void {
    this.triggers.set(trigger.id, trigger)
    this.byOrigin.set(trigger.origin, trigger.id)
  }
}
