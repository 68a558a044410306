import { readFile } from "node:fs/promises"
import { fileURLToPath, pathToFileURL } from "node:url"
import type { ImagePart, ModelMessage, TextPart, ToolModelMessage } from "ai"
import type { ImageRef } from "../core/types.ts"
import type { MessageRecord } from "../store/records.ts"
import { seenBy } from "./author-view.ts"
import { isEnvironment } from "./environment.ts"

/** OpenCode's defaults: keep the newest 40k tokens of tool output, clear older output only
 *  when that frees at least 20k (smaller savings are not worth losing the detail). */
export const PRUNE_PROTECT = 40_000
export const PRUNE_MINIMUM = 20_000
export const CLEARED = "[Old tool result content cleared]"
export const REPORTED = "[Task results already reported to the user; cleared]"

/** The question a compaction summary answers; re-sent before the summary so the model sees
 *  a normal user → assistant exchange. */
export const COMPACTION_QUESTION = "What did we do so far?"

/** A rough token count: characters / 4, as OpenCode estimates. */
export function estimateTokens(value: unknown): number {
  const text = typeof value === "string" ? value : JSON.stringify(value ?? "")
  return Math.ceil(text.length / 4)
}

// Records never change once written, and every step walks the whole session: count each once.
const counted = new WeakMap<object, number>()
function tokensOf(key: object, value: unknown): number {
  let tokens = counted.get(key)
  if (tokens === undefined) {
    tokens = estimateTokens(value)
    counted.set(key, tokens)
  }
  return tokens
}

export interface PruneLimits {
  protect: number
  minimum: number
  /** Newest user turns whose tool output is never cleared. */
  turns: number
}

export const DEFAULT_PRUNE: PruneLimits = { protect: PRUNE_PROTECT, minimum: PRUNE_MINIMUM, turns: 2 }
/** After the model rejected the history as too long, even a compaction request must shrink it. */
export const CLEAR_ALL_TOOL_OUTPUT: PruneLimits = { protect: 0, minimum: 0, turns: 0 }

/** OpenCode's prune scaled to a context budget: the newest eighth of it stays, and older output
 *  goes in batches of at least a quarter — rare enough that a provider's prompt cache, which
 *  a cleared output invalidates from that point on, is broken seldom. */
export function pruneLimits(budgetTokens: number): PruneLimits {
  return { protect: Math.floor(budgetTokens / 8), minimum: Math.floor(budgetTokens / 4), turns: 2 }
}

/**
 * The messages sent to the model for a session: everything after the last compaction
 * summary (introduced by its question), as `viewer` may see it when given (author-view.ts),
 * consecutive tool messages merged, and old tool output and task results already reported
 * pruned. Pure: the stored messages are never rewritten.
 */
export function toModelMessages(records: readonly MessageRecord[], limits: PruneLimits = DEFAULT_PRUNE, viewer?: string): ModelMessage[] {
  const start = records.findLastIndex((record) => record.kind === "summary")
  const all = start >= 0 ? records.slice(start) : records
  const live = viewer === undefined ? all : seenBy(all, viewer)
  const pruned = prunedParts(live, limits, viewer)
  const out: ModelMessage[] = start >= 0 ? [{ role: "user", content: COMPACTION_QUESTION }] : []
  live.forEach((record, index) => {
    const message = pruned.has(index) ? clear(record.message, pruned.get(index)!) : record.message
    const previous = out.at(-1)
    if (message.role === "tool" && previous?.role === "tool") {
      out[out.length - 1] = { role: "tool", content: [...previous.content, ...message.content] }
    } else {
      out.push(message)
    }
  })
  return out
}

/** Record index → the tool call ids whose output is cleared there ("" for a whole task report). */
type Cleared = Map<number, Set<string>>

interface PruneState {
  /** Passes have been made at every step start before this index. */
  through: number
  cleared: Cleared
}

// Per session (its first live record), limits and viewer: the passes already made.
const passes = new WeakMap<MessageRecord, Map<string, PruneState>>()

/**
 * Which outputs are cleared. OpenCode prunes once per step and marks what it cleared for good,
 * so the history changes only when a batch is cleared. That is replayed here without storing
 * the marks: a pass is made at the start of every step of the log (each assistant message) and
 * at the current end, each seeing only the records before it — the same records every later
 * call sees, so earlier passes always come out the same. Passes made are remembered per session.
 */
function prunedParts(records: readonly MessageRecord[], limits: PruneLimits, viewer: string | undefined): Cleared {
  const first = records[0]
  if (!first) return new Map()
  // Each viewer is shown a session of its own (author-view.ts), pruned on its own.
  const key = `${limits.protect}/${limits.minimum}/${limits.turns}${viewer === undefined ? "" : `/seen by ${viewer}`}`
  let states = passes.get(first)
  if (!states) passes.set(first, (states = new Map()))
  let state = states.get(key)
  if (!state || state.through > records.length) state = { through: 0, cleared: new Map() }
  for (let end = state.through; end < records.length; end++) if (records[end]!.message.role === "assistant") prunePass(records, end, limits, state.cleared)
  state.through = records.length
  states.set(key, state)
  const cleared = copy(state.cleared)
  prunePass(records, records.length, limits, cleared)
  return cleared
}

/**
 * One OpenCode prune pass over `records` before `end`: walking back from the newest, skip the
 * protected user turns, then count output; everything beyond the protected window is a
 * candidate, cleared only if together they exceed the minimum. The walk stops at output a
 * previous pass cleared.
 */
function prunePass(records: readonly MessageRecord[], end: number, limits: PruneLimits, cleared: Cleared): void {
  let turns = 0
  let total = 0
  let prunable = 0
  const candidates: Cleared = new Map()
  const mark = (index: number, id: string) => candidates.set(index, (candidates.get(index) ?? new Set()).add(id))
  walk: for (let i = end - 1; i >= 0; i--) {
    const message = records[i]!.message
    if (message.role === "user" && !isEnvironment(message)) turns++
    if (turns < limits.turns) continue
    if (message.role === "user" && isTaskResults(message)) {
      if (cleared.has(i)) break
      total += tokensOf(records[i]!, message.content)
      if (total > limits.protect) {
        prunable += tokensOf(records[i]!, message.content)
        mark(i, "")
      }
    }
    if (message.role !== "tool") continue
    for (const part of message.content) {
      if (part.type !== "tool-result" || (part.output.type !== "json" && part.output.type !== "text")) continue
      if (cleared.get(i)?.has(part.toolCallId)) break walk
      const tokens = tokensOf(part.output, part.output.value)
      total += tokens
      if (total > limits.protect) {
        prunable += tokens
        mark(i, part.toolCallId)
      }
    }
  }
  if (prunable <= limits.minimum) return
  for (const [index, ids] of candidates) cleared.set(index, new Set([...(cleared.get(index) ?? []), ...ids]))
}

function copy(cleared: Cleared): Cleared {
  return new Map([...cleared].map(([index, ids]) => [index, new Set(ids)]))
}

/** A batch's results as the Supervisor wakes the Teller with them (see supervisor/report.ts). */
function isTaskResults(message: ModelMessage): message is ModelMessage & { content: string } {
  return typeof message.content === "string" && message.content.startsWith("<task-results>")
}

function clear(message: ModelMessage, callIds: Set<string>): ModelMessage {
  if (message.role === "user" && isTaskResults(message)) return { role: "user", content: reportedStub(message.content) }
  const tool = message as ToolModelMessage
  return {
    role: "tool",
    content: tool.content.map((part) =>
      part.type === "tool-result" && callIds.has(part.toolCallId) ? { ...part, output: { type: "text", value: CLEARED } } : part,
    ),
  }
}

/** Reported results keep what identifies them — task ids, statuses, session ids to continue. */
function reportedStub(report: string): string {
  const kept = report.match(/<task [^>]*>|<task_metadata>[\s\S]*?<\/task_metadata>/g) ?? []
  return ["<task-results>", REPORTED, ...kept, "</task-results>"].join("\n")
}

/** An image of a user message as the session keeps it: a file: URL of the saved file, so the
 *  store holds a reference, never the bytes (a photo in every step's record would bloat it). */
export function imagePart(image: ImageRef): ImagePart {
  return { type: "image", image: pathToFileURL(image.path).href, mediaType: image.mediaType }
}

const isFileReference = (part: { type: string; image?: unknown }) => part.type === "image" && typeof part.image === "string" && part.image.startsWith("file:")

/** The messages with every image reference replaced by the file's bytes, read for this call.
 *  An image deleted from the workspace since becomes a line saying so, not a failed call. */
export async function withImages(messages: ModelMessage[]): Promise<ModelMessage[]> {
  if (!messages.some((message) => message.role === "user" && Array.isArray(message.content) && message.content.some(isFileReference))) return messages
  return Promise.all(
    messages.map(async (message) => {
      if (message.role !== "user" || typeof message.content === "string" || !message.content.some(isFileReference)) return message
      const content = await Promise.all(message.content.map((part) => (isFileReference(part) ? loadImage(part as ImagePart) : part)))
      return { ...message, content }
    }),
  )
}

async function loadImage(part: ImagePart): Promise<ImagePart | TextPart> {
  const file = fileURLToPath(part.image as string)
  try {
    return { ...part, image: await readFile(file) }
  } catch (error) {
    return { type: "text", text: `[The image ${file} could not be read: ${(error as NodeJS.ErrnoException).code ?? String(error)}]` }
  }
}
