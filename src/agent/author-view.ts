import type { AssistantModelMessage, ModelMessage, TextPart } from "ai"
import type { MessageRecord } from "../store/records.ts"
import { isEnvironment } from "./environment.ts"
import type { LogEntry, SessionLog } from "./session-log.ts"

/**
 * A conversation several people share (a Slack channel thread, a Telegram group) has one Teller
 * session, and each person's messages are handled in turns acting for them (supervisor/
 * turn-author.ts). What one person's turn read for them — their files, their memory, their
 * tasks' results, what they asked to remember — is theirs: another person's turn is shown of it
 * only what was said in the chat, where both could read it. So each record carries the person
 * its run acted for, and the model is sent the session as its turn's author may see it.
 */

/** Whose view a compaction of a session several people share is written from: nobody's own,
 *  since the summary replaces the history for all of them. */
export const EVERYONE = ""

/** In another person's turn, what stands for input that came for them alone. */
export const WITHHELD = "[Withheld: input of another person's turn (their task results or Steward's notes). It is theirs and is not shown here.]"

/** A session log whose new records are marked as written for `author` (unless an entry names its
 *  own, as a compaction's copy of a kept message does). */
export function authoredBy(log: SessionLog, author: string): SessionLog {
  return {
    get records() {
      return log.records
    },
    append: (...entries: LogEntry[]) => log.append(...entries.map((entry) => ({ author, ...entry }))),
  }
}

/** The viewer a compaction summarises for: the author, unless others wrote in the session too. */
export function compactionViewer(records: readonly MessageRecord[], author: string): string {
  return records.some((record) => record.author !== undefined && record.author !== author) ? EVERYONE : author
}

// Records never change once written: each is shown to a given viewer the same way every step,
// as the same object (the prune passes and token counts are keyed by record).
const shown = new WeakMap<MessageRecord, Map<string, MessageRecord | null>>()

/** The records as a turn acting for `viewer` may see them: its own (and unattributed ones) as
 *  they are, other people's reduced to what was said in the chat. */
export function seenBy(records: readonly MessageRecord[], viewer: string): readonly MessageRecord[] {
  if (records.every((record) => isOwn(record, viewer))) return records
  return records.flatMap((record) => {
    if (isOwn(record, viewer)) return [record]
    let views = shown.get(record)
    if (!views) shown.set(record, (views = new Map()))
    if (!views.has(viewer)) {
      const message = publicPart(record)
      views.set(viewer, message ? { ...record, message } : null)
    }
    return views.get(viewer) ?? []
  })
}

function isOwn(record: MessageRecord, viewer: string): boolean {
  return record.author === undefined || (record.author === viewer && viewer !== EVERYONE)
}

/** What of another person's record the chat showed: what they wrote, the environment naming
 *  them, and the Teller's answers (its text and its reply calls). Tool calls and results, task
 *  results and images (files of their workspace) are left out. */
function publicPart(record: MessageRecord): ModelMessage | undefined {
  const { message } = record
  if (message.role === "tool" || message.role === "system") return undefined
  if (message.role === "user") {
    if (isEnvironment(message)) return message
    if (!record.fromUser) return { role: "user", content: WITHHELD }
    if (typeof message.content === "string") return message
    const text = message.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n")
    return { role: "user", content: `${text}\n[They sent images with this message: not shown here.]`.trim() }
  }
  if (record.kind === "summary") return message
  const said = saidIn(message)
  return said.length > 0 ? { role: "assistant", content: said } : undefined
}

/** The text an assistant message put in the chat. */
function saidIn(message: AssistantModelMessage): TextPart[] {
  if (typeof message.content === "string") return message.content ? [{ type: "text", text: message.content }] : []
  return message.content.flatMap((part): TextPart[] => {
    if (part.type === "text" && part.text) return [{ type: "text", text: part.text }]
    if (part.type === "tool-call" && part.toolName === "reply") {
      const text = (part.input as { text?: unknown } | undefined)?.text
      return typeof text === "string" ? [{ type: "text", text }] : []
    }
    return []
  })
}
