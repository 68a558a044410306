import type { MessageRecord } from "../store/records.ts"

/** What a run writes to its session: a message and what is known about it. */
export type LogEntry = Pick<MessageRecord, "message"> & Partial<Pick<MessageRecord, "kind" | "usage" | "eventId" | "author" | "fromUser">>

/** The messages of one session, persisted before they are acted on. */
export interface SessionLog {
  readonly records: readonly MessageRecord[]
  append(...entries: LogEntry[]): Promise<void>
}
