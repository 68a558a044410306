import type { ModelMessage, ToolModelMessage, ToolResultPart } from "ai"
import { describe, expect, it } from "vitest"
import { CLEARED, COMPACTION_QUESTION, PRUNE_MINIMUM, PRUNE_PROTECT, estimateTokens, toModelMessages } from "../../src/agent/context.ts"
import type { MessageRecord } from "../../src/store/records.ts"

let n = 0
function rec(message: ModelMessage, extra: Partial<MessageRecord> = {}): MessageRecord {
  n++
  return { id: `r${n}`, sessionId: "s1", createdAt: new Date(0).toISOString(), message, ...extra }
}
const user = (text: string) => rec({ role: "user", content: text })
const answer = (text: string) => rec({ role: "assistant", content: text })
const calls = (...ids: string[]) => rec({ role: "assistant", content: ids.map((id) => ({ type: "tool-call" as const, toolCallId: id, toolName: "read", input: {} })) })

type Output = ToolResultPart["output"]
/** A text output of exactly `tokens` estimated tokens. */
const textOf = (tokens: number): Output => ({ type: "text", value: "x".repeat(tokens * 4) })
/** A json output (a string value: JSON adds two quotes) of exactly `tokens` estimated tokens. */
const jsonOf = (tokens: number): Output => ({ type: "json", value: "x".repeat(tokens * 4 - 2) })
const errorOf = (tokens: number): Output => ({ type: "error-text", value: "e".repeat(tokens * 4) })
const result = (id: string, output: Output) => rec({ role: "tool", content: [{ type: "tool-result", toolCallId: id, toolName: "read", output }] })

/** One tool call and its result. */
const step = (id: string, output: Output) => [calls(id), result(id, output)]

/**
 * A session whose old turn (before the last two user turns) holds `old` tool outputs, oldest
 * first. The last two user turns hold huge outputs that must be neither counted nor cleared.
 */
function session(old: Array<[string, Output]>): MessageRecord[] {
  return [
    user("q1"),
    ...old.flatMap(([id, output]) => step(id, output)),
    answer("a1"),
    user("q2"),
    ...step("recent1", textOf(100_000)),
    answer("a2"),
    user("q3"),
    ...step("recent2", textOf(100_000)),
  ]
}

/** Ids of the tool results cleared in the messages sent. */
function cleared(messages: ModelMessage[]): string[] {
  return messages
    .filter((m): m is ToolModelMessage => m.role === "tool")
    .flatMap((m) => m.content)
    .flatMap((p) => (p.type === "tool-result" && p.output.type === "text" && p.output.value === CLEARED ? [p.toolCallId] : []))
}

describe("estimateTokens", () => {
  it("is characters / 4, rounded up", () => {
    expect(estimateTokens("x".repeat(8))).toBe(2)
    expect(estimateTokens("x".repeat(9))).toBe(3)
    expect(estimateTokens({ a: 1 })).toBe(2) // {"a":1} = 7 chars
  })
})

describe("toModelMessages: pruning old tool output", () => {
  it("keeps output that fits exactly in PROTECT and clears older output above MINIMUM", () => {
    const out = toModelMessages(session([["old", textOf(PRUNE_MINIMUM + 5_000)], ["newer", textOf(PRUNE_PROTECT)]]))
    expect(cleared(out)).toEqual(["old"])
  })

  it("clears the output that crosses PROTECT by one token too", () => {
    const out = toModelMessages(session([["old", textOf(PRUNE_MINIMUM + 5_000)], ["newer", textOf(PRUNE_PROTECT + 1)]]))
    expect(cleared(out).sort()).toEqual(["newer", "old"])
  })

  it("does not prune when the prunable output is exactly MINIMUM", () => {
    const out = toModelMessages(session([["old", textOf(PRUNE_MINIMUM)], ["newer", textOf(PRUNE_PROTECT)]]))
    expect(cleared(out)).toEqual([])
  })

  it("prunes when the prunable output is MINIMUM + 1", () => {
    const out = toModelMessages(session([["old", textOf(PRUNE_MINIMUM + 1)], ["newer", textOf(PRUNE_PROTECT)]]))
    expect(cleared(out)).toEqual(["old"])
  })

  it("adds up several small candidates against MINIMUM and counts json output by its JSON length", () => {
    const half = PRUNE_MINIMUM / 2
    expect(cleared(toModelMessages(session([["o1", textOf(half)], ["o2", textOf(half)], ["newer", jsonOf(PRUNE_PROTECT)]])))).toEqual([])
    expect(cleared(toModelMessages(session([["o1", textOf(half)], ["o2", textOf(half + 1)], ["newer", jsonOf(PRUNE_PROTECT)]]))).sort()).toEqual(["o1", "o2"])
  })

  it("never prunes or counts the last two user turns", () => {
    // Only two user turns, each with far more than PROTECT + MINIMUM of output: nothing is cleared.
    const two = [user("q1"), ...step("a", textOf(200_000)), ...step("b", textOf(200_000)), answer("a1"), user("q2"), ...step("c", textOf(200_000))]
    expect(cleared(toModelMessages(two))).toEqual([])
    // With a third turn the oldest is pruned, but the recent 100k outputs did not use up PROTECT:
    // the old output within PROTECT stays.
    const out = toModelMessages(session([["old", textOf(PRUNE_MINIMUM + 1)], ["newer", textOf(PRUNE_PROTECT)]]))
    expect(cleared(out)).toEqual(["old"])
  })

  it("never counts or clears error outputs", () => {
    // Counted, the error would push "old" past MINIMUM; it is not, so nothing is cleared.
    const notCounted = toModelMessages(session([["old", textOf(PRUNE_MINIMUM)], ["err", errorOf(30_000)], ["newer", textOf(PRUNE_PROTECT)]]))
    expect(cleared(notCounted)).toEqual([])
    // Beyond PROTECT an error output stays intact while output next to it is cleared.
    const out = toModelMessages(session([["err", errorOf(50_000)], ["old", textOf(PRUNE_MINIMUM + 1)], ["newer", textOf(PRUNE_PROTECT)]]))
    expect(cleared(out)).toEqual(["old"])
    const err = out.filter((m): m is ToolModelMessage => m.role === "tool").flatMap((m) => m.content).find((p) => p.type === "tool-result" && p.toolCallId === "err")
    expect(err).toMatchObject({ output: { type: "error-text", value: "e".repeat(200_000) } })
  })

  it("replaces a cleared output with the marker and leaves the stored records unchanged", () => {
    const records = session([["old", textOf(PRUNE_MINIMUM + 1)], ["newer", textOf(PRUNE_PROTECT)]])
    const before = JSON.stringify(records)
    const out = toModelMessages(records)
    const part = out.filter((m): m is ToolModelMessage => m.role === "tool").flatMap((m) => m.content).find((p) => p.type === "tool-result" && p.toolCallId === "old")
    expect(part).toEqual({ type: "tool-result", toolCallId: "old", toolName: "read", output: { type: "text", value: CLEARED } })
    expect(JSON.stringify(records)).toBe(before)
  })
})

describe("toModelMessages: merging tool messages", () => {
  it("merges consecutive tool messages into one, in order", () => {
    const out = toModelMessages([user("q"), calls("c1", "c2", "c3"), result("c1", textOf(1)), result("c2", textOf(1)), result("c3", textOf(1)), answer("done")])
    expect(out.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"])
    expect((out[2] as ToolModelMessage).content.map((p) => (p as ToolResultPart).toolCallId)).toEqual(["c1", "c2", "c3"])
  })

  it("does not merge tool messages separated by another message", () => {
    const out = toModelMessages([user("q"), ...step("c1", textOf(1)), ...step("c2", textOf(1))])
    expect(out.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant", "tool"])
  })
})

describe("toModelMessages: compaction summary", () => {
  it("sends only what follows the last summary, introduced by the question", () => {
    const records = [
      user("very old"),
      answer("old answer"),
      rec({ role: "assistant", content: "first summary" }, { kind: "summary" }),
      user("Continue if you have next steps."),
      user("middle"),
      rec({ role: "assistant", content: "second summary" }, { kind: "summary" }),
      user("Continue if you have next steps."),
      user("newest"),
    ]
    expect(toModelMessages(records)).toEqual([
      { role: "user", content: COMPACTION_QUESTION },
      { role: "assistant", content: "second summary" },
      { role: "user", content: "Continue if you have next steps." },
      { role: "user", content: "newest" },
    ])
  })

  it("sends everything, without the question, when there is no summary", () => {
    const out = toModelMessages([user("hi"), answer("hello")])
    expect(out).toEqual([
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
    ])
  })

  it("prunes the history that follows the summary on its own", () => {
    const records = [
      user("q0"),
      ...step("ancient", textOf(500_000)),
      rec({ role: "assistant", content: "summary" }, { kind: "summary" }),
      user("Continue if you have next steps."),
      ...step("old", textOf(PRUNE_MINIMUM + 1)),
      ...step("newer", textOf(PRUNE_PROTECT)),
      user("q2"),
      user("q3"),
    ]
    const out = toModelMessages(records)
    expect(JSON.stringify(out)).not.toContain("ancient")
    expect(cleared(out)).toEqual(["old"])
  })
})
