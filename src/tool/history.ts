import type { HistoryMessage } from "../core/types.ts"

/** The history tools return exactly these fields, whatever else a reader attaches. */
export function toMessages(messages: HistoryMessage[]): { messages: HistoryMessage[] } {
  return { messages: messages.map(({ role, text, createdAt }) => ({ role, text, createdAt })) }
}
