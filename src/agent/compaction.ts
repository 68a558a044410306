import { generateText, type LanguageModel, type LanguageModelUsage, type ModelMessage } from "ai"
import type { MessageRecord } from "../store/records.ts"
import { untrusted } from "../trust/envelope.ts"
import { tainted } from "../trust/taint.ts"
import { toModelMessages, withImages, type PruneLimits } from "./context.ts"
import { textOf, toolCalls } from "./messages.ts"
import type { SessionLog } from "./session-log.ts"

const COMPACTION_REQUEST =
  "Provide a detailed summary of our conversation above, for continuing it without the earlier messages: what was asked, what was decided and done, what is pending."
export const CONTINUE_AFTER_COMPACTION = "Continue if you have next steps."
const UNSUMMARISED = "(The earlier conversation could not be summarised.)"

export interface Compaction {
  model: LanguageModel
  system: string
  log: SessionLog
  limits: PruneLimits
  /** Whose view of the session is summarised (author-view.ts). */
  viewer: string
  maxRetries: number
  abort: AbortSignal
  onUsage: (usage: LanguageModelUsage) => void
  onCompacted?: (summary: string) => Promise<void>
}

/**
 * Replaces the history sent to the model with a summary written by a tool-less call. The user
 * messages not answered yet are not the summary's to tell: they are left out of what it
 * summarises and written again, verbatim, after it (`kind: "kept"`), so a compaction that starts
 * right after a message arrived — or in a burst of long ones — cannot drop any of them.
 */
export async function compact(compaction: Compaction): Promise<void> {
  const { log } = compaction
  const kept = unansweredInput(log.records)
  const summarised = log.records.filter((record) => !kept.includes(record))
  const result = await generateText({
    model: compaction.model,
    system: compaction.system,
    messages: [...(await withImages(toModelMessages(summarised, compaction.limits, compaction.viewer))), { role: "user", content: COMPACTION_REQUEST }],
    maxRetries: compaction.maxRetries,
    abortSignal: compaction.abort,
  })
  compaction.onUsage(result.usage)
  const summary = result.text.trim()
  // The summary reaches memory before the log hides what it summarises: a crash in between
  // replays the turn, which compacts again — at worst a summary twice, never none.
  if (summary) await compaction.onCompacted?.(summary)
  // Written from tainted history, the summary may carry what steered it: it stays outside
  // content, and keeps the session tainted (trust/taint.ts).
  const content = summary && tainted(summarised) ? untrusted("a summary of a conversation that had read outside content", summary) : summary || UNSUMMARISED
  await log.append(
    { message: { role: "assistant", content }, kind: "summary" },
    ...kept.map((record) => ({ message: record.message, kind: "kept" as const, author: record.author, fromUser: record.fromUser })),
    { message: { role: "user", content: CONTINUE_AFTER_COMPACTION } },
  )
}

/** Records after the newest summary that a compaction cannot shrink: the summary, the messages
 *  it kept and the request to continue. */
export function fixedAfterSummary(records: readonly MessageRecord[], summary: number): number {
  return 2 + records.slice(summary + 1).filter((record) => record.kind === "kept").length
}

/**
 * The input messages since the last answer: user messages that came with an event (what the user
 * or the system handed in — not the loop's own notes), after the newest step that said something
 * to the user (text alone, or a `reply` call) and after the newest summary. A message kept by an
 * earlier compaction and still unanswered counts again.
 */
function unansweredInput(records: readonly MessageRecord[]): MessageRecord[] {
  const summary = records.findLastIndex((record) => record.kind === "summary")
  const answer = records.findLastIndex((record, index) => index > summary && isAnswer(record.message))
  return records.slice(Math.max(summary, answer) + 1).filter((record) => record.message.role === "user" && (record.eventId !== undefined || record.kind === "kept"))
}

function isAnswer(message: ModelMessage): boolean {
  if (message.role !== "assistant") return false
  const calls = toolCalls(message)
  return calls.length === 0 ? textOf(message) !== "" : calls.some((call) => call.toolName === "reply")
}
