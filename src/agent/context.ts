import type { ModelMessage, ToolModelMessage } from "ai"
import type { MessageRecord } from "../store/records.ts"

/** OpenCode's defaults: keep the newest 40k tokens of tool output, clear older output only
 *  when that frees at least 20k (smaller savings are not worth losing the detail). */
export const PRUNE_PROTECT = 40_000
export const PRUNE_MINIMUM = 20_000
export const CLEARED = "[Old tool result content cleared]"

/** The question a compaction summary answers; re-sent before the summary so the model sees
 *  a normal user → assistant exchange. */
export const COMPACTION_QUESTION = "What did we do so far?"

/** A rough token count: characters / 4, as OpenCode estimates. */
export function estimateTokens(value: unknown): number {
  const text = typeof value === "string" ? value : JSON.stringify(value ?? "")
  return Math.ceil(text.length / 4)
}

// Records never change once written, and every step walks the whole session: count each once.
const outputTokens = new WeakMap<object, number>()
function tokensOf(output: { value: unknown }): number {
  let tokens = outputTokens.get(output)
  if (tokens === undefined) {
    tokens = estimateTokens(output.value)
    outputTokens.set(output, tokens)
  }
  return tokens
}

/**
 * The messages sent to the model for a session: everything after the last compaction
 * summary (introduced by its question), consecutive tool messages merged, and old tool
 * output pruned. Pure: the stored messages are never rewritten.
 */
export interface PruneLimits {
  protect: number
  minimum: number
  /** Newest user turns whose tool output is never cleared. */
  turns: number
}

export const DEFAULT_PRUNE: PruneLimits = { protect: PRUNE_PROTECT, minimum: PRUNE_MINIMUM, turns: 2 }
/** After the model rejected the history as too long, even a compaction request must shrink it. */
export const CLEAR_ALL_TOOL_OUTPUT: PruneLimits = { protect: 0, minimum: 0, turns: 0 }

export function toModelMessages(records: readonly MessageRecord[], limits: PruneLimits = DEFAULT_PRUNE): ModelMessage[] {
  const start = records.findLastIndex((record) => record.kind === "summary")
  const live = start >= 0 ? records.slice(start) : records
  const pruned = prunedParts(live, limits)
  const out: ModelMessage[] = start >= 0 ? [{ role: "user", content: COMPACTION_QUESTION }] : []
  live.forEach((record, index) => {
    const message = pruned.has(index) ? clear(record.message as ToolModelMessage, pruned.get(index)!) : record.message
    const previous = out.at(-1)
    if (message.role === "tool" && previous?.role === "tool") {
      out[out.length - 1] = { role: "tool", content: [...previous.content, ...message.content] }
    } else {
      out.push(message)
    }
  })
  return out
}

/**
 * Which tool results to clear: walking back from the newest message, skip the protected user
 * turns, then count tool output; everything beyond the protected window is a candidate, and
 * the candidates are cleared only if together they exceed the minimum.
 */
function prunedParts(records: readonly MessageRecord[], limits: PruneLimits): Map<number, Set<string>> {
  let turns = 0
  let total = 0
  let prunable = 0
  const candidates = new Map<number, Set<string>>()
  for (let i = records.length - 1; i >= 0; i--) {
    const message = records[i]!.message
    if (message.role === "user") turns++
    if (turns < limits.turns || message.role !== "tool") continue
    for (const part of message.content) {
      if (part.type !== "tool-result" || (part.output.type !== "json" && part.output.type !== "text")) continue
      const tokens = tokensOf(part.output)
      total += tokens
      if (total > limits.protect) {
        prunable += tokens
        if (!candidates.has(i)) candidates.set(i, new Set())
        candidates.get(i)!.add(part.toolCallId)
      }
    }
  }
  return prunable > limits.minimum ? candidates : new Map()
}

function clear(message: ToolModelMessage, callIds: Set<string>): ToolModelMessage {
  return {
    role: "tool",
    content: message.content.map((part) =>
      part.type === "tool-result" && callIds.has(part.toolCallId) ? { ...part, output: { type: "text", value: CLEARED } } : part,
    ),
  }
}
