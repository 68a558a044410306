import type { MessageRecord } from "../store/records.ts"

/** The messages of one session, persisted before they are acted on. */
export interface SessionLog {
  readonly records: readonly MessageRecord[]
  append(...entries: Array<Pick<MessageRecord, "message"> & Partial<Pick<MessageRecord, "kind" | "usage" | "eventId">>>): Promise<void>
}
