import type { UsageSample } from "../usage/usage.ts"
import { controls, errors, put, remove, usage } from "./collections.ts"
import { newId } from "./ids.ts"
import { BackendReads } from "./reads.ts"
import type { ControlRecord, ErrorRecord } from "./records.ts"

/** The errors `steward status` can show; older ones are dropped as new ones come. */
export const ERRORS_KEPT = 50

/**
 * What the owner's CLI and console read of a running Steward and ask of it: the model calls'
 * usage samples (the quota reads them too), the latest errors, and the controls (cancel,
 * pause, …) a running Supervisor applies (src/control).
 */
export class OwnerRecords extends BackendReads {
  recordUsage(sample: UsageSample): Promise<void> {
    return this.backend.write([put(usage, { ...sample, id: newId() })])
  }
  /** Usage samples taken at or after `since` (ms), oldest first. */
  usageSince(since: number): Promise<UsageSample[]> {
    return this.index(usage, { index: "time", group: "", from: since })
  }

  /** Keeps an error for `steward status`; only the latest ERRORS_KEPT stay. */
  async recordError(error: Omit<ErrorRecord, "id">): Promise<void> {
    await this.backend.write([put(errors, { id: newId(), ...error })])
    const older = await this.index(errors, { index: "time", group: "", desc: true, offset: ERRORS_KEPT })
    if (older.length > 0) await this.backend.write(older.map((record) => remove(errors, record.id)))
  }
  /** The latest errors, newest first. */
  recentErrors(limit: number): Promise<ErrorRecord[]> {
    return this.index(errors, { index: "time", group: "", desc: true, limit })
  }

  async requestControl(kind: ControlRecord["kind"], target: string): Promise<ControlRecord> {
    const record: ControlRecord = { id: newId(), kind, target, at: new Date().toISOString(), status: "pending" }
    await this.backend.write([put(controls, record)])
    return record
  }
  /** Controls not applied yet, oldest first. */
  pendingControls(): Promise<ControlRecord[]> {
    return this.index(controls, { index: "pending", group: "" })
  }
  control(id: string): Promise<ControlRecord | undefined> {
    return this.get(controls, id)
  }
  settleControl(record: ControlRecord): Promise<void> {
    return this.backend.write([put(controls, record)])
  }
}
