import { outbox } from "./collections.ts"
import { BackendReads } from "./reads.ts"
import type { OutboxRecord } from "./records.ts"

/**
 * The outbox's records (src/channel/outbox.ts): every message to send, edit or delete on a
 * platform. They are written through `Store.save`, with the records that produced them.
 * Delivered and failed ones stay on disk: an edit finds the message it edits, a replayed
 * producer its record, a firing its report.
 */
export class OutboxRecords extends BackendReads {
  /** Every outbox record, oldest first (tests; the Outbox loads the unsent ones). */
  all(): Promise<OutboxRecord[]> {
    return this.readAll(outbox)
  }
  /** Records still to send, oldest first. */
  unsent(): Promise<OutboxRecord[]> {
    return this.index(outbox, { index: "unsent", group: "" })
  }
  record(id: string): Promise<OutboxRecord | undefined> {
    return this.get(outbox, id)
  }
  byOrigin(origin: string): Promise<OutboxRecord | undefined> {
    return this.first(outbox, "origin", origin)
  }
  /** The report of a firing, if one was written. */
  ofFiring(firingId: string): Promise<OutboxRecord | undefined> {
    return this.first(outbox, "firing", firingId)
  }
}
