import type { FiringRecord, TriggerRecord } from "../core/types.ts"
import type { RaisedRecord } from "../schedule/records.ts"
import { firings, put, raised, raisedNames, triggers, type RaisedName } from "./collections.ts"
import { newId } from "./ids.ts"
import { BackendReads } from "./reads.ts"

/**
 * What the schedules (src/schedule) keep: triggers, each firing of one, and the events raised
 * for conditional triggers. Triggers and firings are written through `Store.save`, with the
 * task and outbox records they change.
 */
export class ScheduleRecords extends BackendReads {
  /** Every trigger ever created (the CLI and tests; start-up uses liveTriggers). */
  triggers(): Promise<TriggerRecord[]> {
    return this.readAll(triggers)
  }
  /** Active triggers, and ended ones whose last run is still under way. */
  liveTriggers(): Promise<TriggerRecord[]> {
    return this.index(triggers, { index: "live", group: "" })
  }
  trigger(id: string): Promise<TriggerRecord | undefined> {
    return this.get(triggers, id)
  }
  triggerByOrigin(origin: string): Promise<TriggerRecord | undefined> {
    return this.first(triggers, "origin", origin)
  }
  firing(id: string): Promise<FiringRecord | undefined> {
    return this.get(firings, id)
  }
  /** A trigger's firings, oldest first. */
  firingsOf(triggerId: string): Promise<FiringRecord[]> {
    return this.index(firings, { index: "trigger", group: triggerId })
  }

  /** Records a raised event, and the latest raising of its name in the same write. */
  async raise(name: string): Promise<RaisedRecord> {
    const record: RaisedRecord = { id: newId(), name, at: new Date().toISOString() }
    const latest = await this.get(raisedNames, name)
    const newer = !latest || Date.parse(latest.at) <= Date.parse(record.at)
    await this.backend.write([put(raised, record), ...(newer ? [put(raisedNames, { name, at: record.at, id: record.id })] : [])])
    return record
  }
  /** The latest raising of every event name. */
  raisedNames(): Promise<RaisedName[]> {
    return this.readAll(raisedNames)
  }
  /** Events raised at or after `since` (ms), by the time in their id. */
  raisedSince(since: number): Promise<RaisedRecord[]> {
    return this.index(raised, { index: "time", group: "", from: since })
  }
}
