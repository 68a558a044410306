import { decodeTime } from "ulid"
import type { HistoryMessage, HistoryReader } from "../core/types.ts"
import { history, type HistoryLine } from "./collections.ts"
import { BackendReads } from "./reads.ts"

/**
 * Each conversation's user messages and replies, read by the history tools. The lines are
 * written through `Store.save`, with the turn that took or said them.
 */
export class HistoryRecords extends BackendReads implements HistoryReader {
  async recent(conversation: string, count: number, offset: number): Promise<HistoryMessage[]> {
    // Never more than asked for, whatever the caller passes.
    const lines = await this.index(history, { index: "conversation", group: conversation, desc: true, limit: Math.max(0, count), offset: Math.max(0, offset) })
    return lines.reverse().map(toMessage)
  }

  async between(conversation: string, after: Date, before: Date): Promise<HistoryMessage[]> {
    const lines = await this.index(history, { index: "conversation", group: conversation, from: after.getTime(), to: before.getTime() })
    return lines.map(toMessage)
  }
}

function toMessage(line: HistoryLine): HistoryMessage {
  return { role: line.role, text: line.text, createdAt: new Date(decodeTime(line.id)).toISOString() }
}
